import ArgumentParser
import Foundation

/// Server settings shared by every subcommand: flag, then environment.
struct ConnectionOptions: ParsableArguments {
    @Option(name: .customLong("pg"), help: "libpq connection string (default: $SCANTRACK_PG).")
    var postgres: String?

    @Option(name: .customLong("nats"), help: "NATS URL (default: $SCANTRACK_NATS, else nats://127.0.0.1:4222).")
    var nats: String?

    func postgresDSN() throws -> String {
        if let postgres, !postgres.isEmpty { return postgres }
        if let fromEnvironment = ProcessInfo.processInfo.environment["SCANTRACK_PG"], !fromEnvironment.isEmpty {
            return fromEnvironment
        }
        throw ValidationError("no PostgreSQL connection: pass --pg or set SCANTRACK_PG")
    }

    var natsURL: String {
        nats ?? ProcessInfo.processInfo.environment["SCANTRACK_NATS"] ?? "nats://127.0.0.1:4222"
    }
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
