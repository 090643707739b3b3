import ArgumentParser
import Foundation

/// `scan-aggregator`: stores agent events, reconciles cameras, builds pack records.
public struct ScanAggregatorCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "scan-aggregator",
        abstract: "Consume ScanTrack agent events into PostgreSQL and publish item and pack results.",
        subcommands: [Run.self]
    )

    public init() {}

    struct Run: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Run the aggregator (not yet available).")
        @Option(help: "Aggregator config file.") var config: String?
        func run() throws {
            FileHandle.standardError.write(Data("scan-aggregator run: not yet available in this version\n".utf8))
            throw ExitCode(69)
        }
    }
}
