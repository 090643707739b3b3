#ifndef SCANTRACK_OPENSSL_EXIT_H
#define SCANTRACK_OPENSSL_EXIT_H

/// Sets OpenSSL up without its exit handler (OPENSSL_INIT_NO_ATEXIT). Call first thing in main,
/// before libpq or cnats touch OpenSSL. Returns 1 when OpenSSL took the setting.
int scantrack_openssl_without_exit_cleanup(void);

#endif
