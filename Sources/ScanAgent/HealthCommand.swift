import ArgumentParser
import ScanAgentConfig
import ScanMetrics

/// `scan-agent health`: asks a running agent whether it is ready (a container's HEALTHCHECK).
struct HealthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Ask a running agent at its metrics address whether it is ready (exit 0) or not (exit 1).",
        discussion: """
            The address is --listen, else the config's metrics.listen. Prints what /health/ready says (each \
            check ok or failing, e.g. the camera and NATS), or /health/live with --live.
            """)

    @Option(help: "The agent's config file (its metrics.listen is asked).") var config: String?
    @Option(help: "HOST:PORT of the agent's metrics and health endpoint.") var listen: String?
    @Flag(help: "Only whether it runs (/health/live), not whether it is ready.") var live = false

    func run() throws {
        var address = listen
        if address == nil, let config {
            do {
                address = try AgentConfigLoader.load(path: config).metricsListen
            } catch {
                writeStandardError(error.description)
                throw ExitCode(2)
            }
            if address == nil { throw ValidationError("\(config) has no metrics.listen: the agent serves no health") }
        }
        guard let address else { throw ValidationError("give --listen HOST:PORT or --config FILE") }
        let status = HealthProbe.check(listen: address, live: live, program: "scan-agent")
        if status != 0 { throw ExitCode(status) }
    }
}
