#include "scantrack_tls.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>

struct scantrack_tls {
    SSL_CTX *context;
    SSL *ssl;
};

static void describe(char *error, size_t size, const char *what, SSL *ssl) {
    unsigned long code = ERR_get_error();
    long verify = ssl != NULL ? SSL_get_verify_result(ssl) : X509_V_OK;
    if (verify != X509_V_OK) {
        snprintf(error, size, "%s: certificate not trusted: %s", what, X509_verify_cert_error_string(verify));
    } else if (code != 0) {
        char text[256];
        ERR_error_string_n(code, text, sizeof text);
        snprintf(error, size, "%s: %s", what, text);
    } else {
        snprintf(error, size, "%s failed", what);
    }
    ERR_clear_error();
}

static int is_address(const char *host) {
    unsigned char bytes[16];
    return inet_pton(AF_INET, host, bytes) == 1 || inet_pton(AF_INET6, host, bytes) == 1;
}

scantrack_tls *scantrack_tls_connect(int fd, const char *host, const char *ca_file, char *error, size_t error_size) {
    // Without OpenSSL's exit handler, as everywhere in ScanTrack (Sources/COpenSSLExit).
    OPENSSL_init_ssl(OPENSSL_INIT_NO_ATEXIT, NULL);
    ERR_clear_error();
    scantrack_tls *tls = calloc(1, sizeof *tls);
    if (tls == NULL) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    tls->context = SSL_CTX_new(TLS_client_method());
    if (tls->context == NULL) {
        describe(error, error_size, "TLS setup", NULL);
        free(tls);
        return NULL;
    }
    SSL_CTX_set_min_proto_version(tls->context, TLS1_2_VERSION);
    SSL_CTX_set_verify(tls->context, SSL_VERIFY_PEER, NULL);
    int loaded = ca_file != NULL ? SSL_CTX_load_verify_locations(tls->context, ca_file, NULL)
                                 : SSL_CTX_set_default_verify_paths(tls->context);
    if (loaded != 1) {
        describe(error, error_size, ca_file != NULL ? "reading source.tls.ca" : "reading the system's CA store", NULL);
        scantrack_tls_close(tls);
        return NULL;
    }
    tls->ssl = SSL_new(tls->context);
    if (tls->ssl == NULL || SSL_set_fd(tls->ssl, fd) != 1) {
        describe(error, error_size, "TLS setup", NULL);
        scantrack_tls_close(tls);
        return NULL;
    }
    X509_VERIFY_PARAM *param = SSL_get0_param(tls->ssl);
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    int named = is_address(host) ? X509_VERIFY_PARAM_set1_ip_asc(param, host)
                                 : (SSL_set_tlsext_host_name(tls->ssl, host) == 1 && SSL_set1_host(tls->ssl, host) == 1);
    if (!named) {
        describe(error, error_size, "TLS setup (the camera's host)", NULL);
        scantrack_tls_close(tls);
        return NULL;
    }
    if (SSL_connect(tls->ssl) != 1 || SSL_get_verify_result(tls->ssl) != X509_V_OK) {
        describe(error, error_size, "TLS handshake", tls->ssl);
        scantrack_tls_close(tls);
        return NULL;
    }
    return tls;
}

int scantrack_tls_read(scantrack_tls *tls, void *buffer, int length) {
    int got = SSL_read(tls->ssl, buffer, length);
    if (got > 0) return got;
    int reason = SSL_get_error(tls->ssl, got);
    ERR_clear_error();
    return reason == SSL_ERROR_ZERO_RETURN ? 0 : -1;
}

int scantrack_tls_write(scantrack_tls *tls, const void *buffer, int length) {
    int done = 0;
    while (done < length) {
        int wrote = SSL_write(tls->ssl, (const char *)buffer + done, length - done);
        if (wrote <= 0) {
            ERR_clear_error();
            return -1;
        }
        done += wrote;
    }
    return done;
}

int scantrack_tls_pending(scantrack_tls *tls) { return SSL_pending(tls->ssl); }

void scantrack_tls_close(scantrack_tls *tls) {
    if (tls == NULL) return;
    if (tls->ssl != NULL) {
        SSL_shutdown(tls->ssl);
        SSL_free(tls->ssl);
    }
    if (tls->context != NULL) SSL_CTX_free(tls->context);
    ERR_clear_error();
    free(tls);
}
