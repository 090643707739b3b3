import COpenSSLExit

/// What each ScanTrack program does first, before its command runs.
public enum ProgramStart {
    /// OpenSSL set up without its exit handler, before libpq or cnats use it (a TLS program would
    /// otherwise crash at exit, COpenSSLExit says why), then logging.
    public static func begin() {
        _ = scantrack_openssl_without_exit_cleanup()
        ScanLogging.bootstrap()
    }
}
