import ArgumentParser
import Foundation
import ScanCore
import ScanPostgres

/// `scanadmin deadletters`: the messages the aggregator could not use, and why.
struct DeadLettersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deadletters",
        abstract: "Messages the aggregator refused: list them, or count them by camera and reason.",
        discussion: """
            The aggregator keeps every message it cannot use with the reason (invalid-json, missing-field, \
            bad-value, subject-mismatch, lane-mismatch, station-mismatch, …) instead of losing it. A camera \
            whose place in its config disagrees with the topology has every event dead-lettered as \
            lane-mismatch or station-mismatch: `scanadmin deadletters counts` shows it with the latest \
            detail. Site and camera come from the subject an agent published on (none for other subjects). \
            The period options are those of `scanadmin report` (default: today).

            Exit codes: 0 done, 1 database failure, 64 bad usage.
            """,
        subcommands: [List.self, Counts.self],
        defaultSubcommand: List.self)

    /// The periods asked for, as UTC instants.
    static func periods(_ period: PeriodOptions, connection: ConnectionOptions, database: PGConnection) throws
        -> [(start: Timestamp, end: Timestamp)]
    {
        try period.resolve(database, connection: connection).1.map {
            (ShiftFigures.timestamp($0.start), ShiftFigures.timestamp($0.end))
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "Dead letters of a shift or range, oldest first.")

        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var period: PeriodOptions
        @Option(help: "Only this camera's.") var camera: String?
        @Option(help: "Only this reason's (e.g. lane-mismatch).") var reason: String?
        @OptionGroup var output: ListingOptions

        func validate() throws { try period.check(connection: connection) }

        func run() throws {
            let rows = try withDatabase(connection, command: "deadletters") { database in
                try DeadLettersCommand.periods(period, connection: connection, database: database).flatMap {
                    try DeadLetterStore(connection: database).list(
                        start: $0.start, end: $0.end, camera: camera, reason: reason, limit: output.limit)
                }
            }
            var listing = Listing(columns: [
                "id", "receivedAt", "site", "camera", "reason", "subject", "bytes", "detail",
            ])
            listing.numeric = ["id", "bytes"]
            listing.nullable = ["site", "camera"]
            for row in rows {
                listing.rows.append([
                    String(row.id), row.receivedAt, row.site ?? "", row.camera ?? "", row.reason, row.subject,
                    String(row.bytes), row.detail,
                ])
            }
            print(listing.render(output.format), terminator: "")
            if output.format == .table { print("\(rows.count) dead letter(s)") }
        }
    }

    struct Counts: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "counts",
            abstract: "Dead letters by camera and reason, the most first, with the latest detail.")

        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var period: PeriodOptions
        @Option(help: "table, csv or json.") var format: ListingFormat = .table

        func validate() throws { try period.check(connection: connection) }

        func run() throws {
            let counts = try withDatabase(connection, command: "deadletters counts") { database in
                try DeadLettersCommand.periods(period, connection: connection, database: database).flatMap {
                    try DeadLetterStore(connection: database).counts(start: $0.start, end: $0.end)
                }
            }
            var listing = Listing(columns: ["site", "camera", "reason", "count", "first", "last", "latestDetail"])
            listing.numeric = ["count"]
            listing.nullable = ["site", "camera"]
            for count in counts {
                listing.rows.append([
                    count.site ?? "", count.camera ?? "", count.reason, String(count.count), count.first, count.last,
                    count.latestDetail,
                ])
            }
            print(listing.render(format), terminator: "")
            if format == .table { print("\(counts.reduce(0) { $0 + $1.count }) dead letter(s)") }
        }
    }
}
