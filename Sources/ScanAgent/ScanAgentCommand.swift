import ArgumentParser
import Foundation

/// `scan-agent`: one camera's decoder, tracker and publisher.
public struct ScanAgentCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "scan-agent",
        abstract: "Read barcodes from one camera or clip, track them, and publish events.",
        subcommands: [Run.self, ReplayCommand.self, RulesCommand.self]
    )

    public init() {}

    struct Run: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Run one camera (not yet available).")
        @Option(help: "Agent config file.") var config: String
        func run() throws {
            FileHandle.standardError.write(Data("scan-agent run: not yet available in this version\n".utf8))
            throw ExitCode(69)
        }
    }
}
