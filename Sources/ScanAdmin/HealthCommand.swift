import ArgumentParser
import ScanMetrics

/// `scanadmin health`: asks a running `scanadmin serve` whether it is ready (a container's
/// HEALTHCHECK).
struct HealthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Ask a running dashboard (scanadmin serve) whether it is ready (exit 0) or not (exit 1).",
        discussion: """
            Asks /health/ready (it reads PostgreSQL), or /health/live with --live, at --listen, the \
            address serve --listen was given. Neither needs the dashboard's password.
            """)

    @Option(help: "HOST:PORT the dashboard listens on.") var listen: String
    @Flag(help: "Only whether it runs (/health/live), not whether it reads its database.") var live = false

    func run() throws {
        let status = HealthProbe.check(listen: listen, live: live, program: "scanadmin")
        if status != 0 { throw ExitCode(status) }
    }
}
