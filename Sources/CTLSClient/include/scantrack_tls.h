// A TLS client over a connected socket (OpenSSL), for rtsps cameras: libavformat's RTSP client
// opens its TLS connection with no options, so it cannot be told to verify a certificate. The
// agent's RTSP guard (Sources/ScanRTSP/RTSPGuard.swift) makes the connection itself with this.
#ifndef SCANTRACK_TLS_H
#define SCANTRACK_TLS_H

#include <stddef.h>

typedef struct scantrack_tls scantrack_tls;

/// Runs the TLS handshake on the connected socket `fd` as a client of `host` (a name: sent as SNI
/// and matched against the certificate; an IP address: matched against its IP entries), TLS 1.2
/// or later, verifying the peer's chain against the PEM file `ca_file` (NULL: the system's
/// store). NULL on failure, with the reason in `error`. The socket stays the caller's.
scantrack_tls *scantrack_tls_connect(int fd, const char *host, const char *ca_file, char *error, size_t error_size);
/// Bytes read (> 0), 0 when the peer closed, < 0 on an error.
int scantrack_tls_read(scantrack_tls *tls, void *buffer, int length);
/// Writes all `length` bytes; < 0 on an error.
int scantrack_tls_write(scantrack_tls *tls, const void *buffer, int length);
/// Bytes already decrypted and waiting to be read (poll() does not see them).
int scantrack_tls_pending(scantrack_tls *tls);
/// Sends close_notify and frees the connection (not the socket).
void scantrack_tls_close(scantrack_tls *tls);

#endif
