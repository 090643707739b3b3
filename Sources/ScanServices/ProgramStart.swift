import COpenSSLExit

/// What each ScanTrack program does first, before its command runs.
public enum ProgramStart {
    /// OpenSSL set up without its exit handler, before libpq or cnats use it (a TLS program would
    /// otherwise crash at exit, COpenSSLExit says why), then logging, whose JSON lines name the
    /// program, its version and the host (`ScanLogging.resource`).
    public static func begin(service: String, version: String) {
        _ = scantrack_openssl_without_exit_cleanup()
        ScanLogging.resource = ScanLogging.Resource(service: service, version: version, host: ScanLogging.hostName())
        ScanLogging.bootstrap()
    }
}
