import ArgumentParser
import Foundation
import ScanMetrics

/// `scan-agent`: one camera's decoder, tracker and publisher.
public struct ScanAgentCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "scan-agent",
        abstract: "Read barcodes from one camera or clip, track them, and publish events.",
        version: BuildInfo.versionText(program: "scan-agent"),
        subcommands: [
            RunCommand.self, ReplayCommand.self, DecodeCommand.self, RulesCommand.self, CamerasCommand.self,
            TuneCommand.self, ConfigCommand.self, HealthCommand.self,
        ]
    )

    public init() {}

    /// Parses the program's arguments and runs the command (async: `run` is a service group).
    public static func start() async { await main(nil) }
}
