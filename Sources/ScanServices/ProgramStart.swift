internal import COpenSSLExit
import Foundation

/// What each ScanTrack program does first, before its command runs.
public enum ProgramStart {
    /// OpenSSL set up without its exit handler, before libpq or cnats use it (a TLS program would
    /// otherwise crash at exit, COpenSSLExit says why), then logging, whose JSON lines name the
    /// program, its version and the host (`ScanLogging.resource`).
    /// Under systemd, when standard error is the journal (`JOURNAL_STREAM`), each line begins with
    /// its syslog priority (`<3>` for an error), so the journal files it at that priority.
    public static func begin(
        service: String, version: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        _ = scantrack_openssl_without_exit_cleanup()
        ScanLogging.resource = ScanLogging.Resource(service: service, version: version, host: ScanLogging.hostName())
        ScanLogging.priorityPrefixes = ScanLogging.standardErrorIsJournal(environment: environment)
        ScanLogging.bootstrap()
    }
}
