import ArgumentParser
import ScanMetrics

/// `scanadmin`: the operator's terminal tool.
public struct ScanAdminCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "scanadmin",
        abstract: "Administer ScanTrack: schema, rules, orders, topology, cameras, reports, no-reads, the dashboard.",
        discussion: """
            Servers come from --pg/--nats, else SCANTRACK_PG/SCANTRACK_NATS (then NATS_URL), else the config \
            file (--config, $SCANTRACK_CONFIG, ~/.config/scantrack/scanadmin.json), else for PostgreSQL libpq's \
            own PGHOST, PGSERVICE, PGPASSFILE, … as psql reads them. Passwords are never printed.

            Exit codes: 0 success, 1 failure at run time, 2 bad input or config file (named, with the \
            line or JSON path), 64 bad usage; each command's --help lists its own (docs/exit-codes.md).
            """,
        version: BuildInfo.versionText(program: "scanadmin"),
        subcommands: [
            MigrateCommand.self, RulesCommand.self, OrdersCommand.self,
            TopologyCommand.self, CamerasCommand.self, ReportCommand.self,
            NoReadsCommand.self, ImagesCommand.self, DeadLettersCommand.self, TailCommand.self,
            AgentControlCommand.self, ServeCommand.self,
            RetentionCommand.self, OperatorsCommand.self,
            HealthCommand.self, NATSCommand.self,
        ]
    )

    public init() {}

    /// Parses and runs the command line as `main` does, except that a config file that cannot be
    /// read or breaks its format ends it with exit 2 and the problem, not the usage and 64.
    public static func run(arguments: [String]? = nil) async {
        do {
            var command = try parseAsRoot(arguments)
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch let error as ConfigFileError {
            printError("scanadmin: \(error)")
            exit(withError: ExitCode(2))
        } catch {
            exit(withError: error)
        }
    }
}
