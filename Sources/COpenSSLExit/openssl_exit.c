// OpenSSL frees its global state in an exit handler. cnats's reader threads outlive a
// connection's destruction by a moment, and a thread still in SSL_read when exit() runs takes a
// lock OpenSSL has just freed: the program dies with SIGSEGV after its work is done. cnats's
// own teardown (nats_Close) cannot be used instead: it frees OpenSSL's compression-method list,
// which OpenSSL's exit handler then frees again. Without the exit handler the process's memory
// goes back to the system when it ends, as it would anyway.
#include "scantrack_openssl_exit.h"

#include <openssl/crypto.h>

int scantrack_openssl_without_exit_cleanup(void) {
    return OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
}
