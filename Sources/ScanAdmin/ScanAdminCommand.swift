import ArgumentParser

/// `scanadmin`: the operator's terminal tool.
public struct ScanAdminCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "scanadmin",
        abstract: "Administer ScanTrack: schema, rules, orders, topology, cameras, reports.",
        discussion: """
            Servers come from --pg/--nats, else SCANTRACK_PG/SCANTRACK_NATS.
            Exit codes: 0 success, 1 failure at run time, 2 bad input file (named, with the line or JSON path), 64 bad usage, 69 not available yet (each command's --help lists its own).
            """,
        subcommands: [
            MigrateCommand.self, NotYetAvailable.Rules.self, OrdersCommand.self,
            TopologyCommand.self, NotYetAvailable.Cameras.self, ReportCommand.self,
            TailCommand.self, AgentCommandCommand.self,
        ]
    )

    public init() {}
}

/// Commands that later work fills in; they say so and exit 69 (EX_UNAVAILABLE).
enum NotYetAvailable {
    static func fail(_ name: String) -> ExitCode {
        printError("scanadmin \(name): not yet available in this version")
        return ExitCode(69)
    }

    struct Rules: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rules", abstract: "Manage rulesets (not yet available).")
        @Argument(parsing: .captureForPassthrough) var arguments: [String] = []
        func run() throws { throw NotYetAvailable.fail("rules") }
    }
    struct Cameras: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "cameras", abstract: "List cameras and their health (not yet available).")
        @Argument(parsing: .captureForPassthrough) var arguments: [String] = []
        func run() throws { throw NotYetAvailable.fail("cameras") }
    }
}
