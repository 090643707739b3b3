import ArgumentParser
import Foundation
import ScanPostgres

/// `scanadmin retention [--dry-run]` and `scanadmin retention set TABLE DAYS`.
struct RetentionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retention",
        abstract: "Show and apply how many days each time-series table keeps (day partitions).",
        discussion: """
            sightings, noreads, session_events, heartbeats, dead_letters, parcels and decisions are \
            partitioned by UTC day; each keeps its `days` whole days before the current one (0: every day). \
            `rollups` (what reports read) is kept by default. scan-aggregator applies the same every hour.

            `scanadmin retention` (show) only shows the settings and what is past them; `scanadmin retention \
            apply` drops it now.
            """,
        subcommands: [Show.self, Apply.self, Set.self],
        defaultSubcommand: Show.self)

    /// `scanadmin retention [show]`: changes nothing.
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show the settings and what is past them; drop nothing (the default).",
            discussion: "Exit codes: 0 done, 1 database failure.")

        @OptionGroup var connection: ConnectionOptions
        @Flag(help: "Accepted for compatibility: showing is all this does.") var dryRun = false
        @Option(help: "table, csv or json.") var format: ListingFormat = .table

        func run() throws { try Apply.run(connection: connection, format: format, drop: false) }
    }

    /// `scanadmin retention apply [--dry-run]`
    struct Apply: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "apply",
            abstract: "Show the settings and what is past them, then drop it.",
            discussion: "Exit codes: 0 done, 1 database failure.")

        @OptionGroup var connection: ConnectionOptions
        @Flag(help: "Only show what would be dropped.") var dryRun = false
        @Option(help: "table, csv or json.") var format: ListingFormat = .table

        @OptionGroup var progress: ProgressOptions

        func run() throws {
            try Self.run(
                connection: connection, format: format, drop: !dryRun, progress: progress.reporter("retention apply"))
        }

        static func run(
            connection: ConnectionOptions, format: ListingFormat, drop: Bool, progress: ((String) -> Void)? = nil
        ) throws {
            try withDatabase(connection, command: "retention") { database in
                let retention = Retention(connection: database)
                let plan = try retention.plan()
                var listing = Listing(
                    columns: [
                        "table", "days", "keepsFrom", "partitions", "oldestDay", "toDrop", "rowsToDrop", "bytesToDrop",
                    ])
                listing.numeric = ["days", "partitions", "toDrop", "rowsToDrop", "bytesToDrop"]
                for setting in plan.settings {
                    let own = plan.partitions.filter { $0.table == setting.table && $0.day != nil }
                    let drops = plan.drop.filter { $0.table == setting.table }
                    let rows =
                        setting.table == "rollups"
                        ? plan.rollupRows
                        : drops.reduce(0) { $0 + $1.estimatedRows } + (plan.defaultRows[setting.table] ?? 0)
                    listing.rows.append([
                        setting.table, String(setting.days), plan.cutoff[setting.table] ?? "(every day)",
                        setting.table == "rollups" ? "" : String(own.count), own.compactMap(\.day).min() ?? "",
                        String(drops.count), String(rows), String(drops.reduce(0) { $0 + $1.bytes }),
                    ])
                }
                print(listing.render(format), terminator: "")
                guard drop else {
                    if format == .table {
                        print(
                            "\(plan.drop.count) partition(s) would be dropped (rows are the planner's estimates); `scanadmin retention apply` drops them"
                        )
                    }
                    return
                }
                // What was shown is what is dropped.
                let outcome = try retention.maintain(plan: plan, progress: progress)
                if format == .table {
                    print(
                        "dropped \(outcome.dropped.count) partition(s)"
                            + (outcome.dropped.isEmpty ? "" : " (\(outcome.dropped.joined(separator: ", ")))")
                            + ", deleted \(outcome.deletedRows) row(s) outside day partitions, created \(outcome.created.count) partition(s)"
                    )
                }
            }
        }
    }

    /// `scanadmin retention set TABLE DAYS`
    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Set how many days a table keeps (0: every day); applied at the next run or aggregator round.",
            discussion: "Exit codes: 0 done, 1 unknown table or database failure.")

        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "sightings, noreads, session_events, heartbeats, dead_letters, parcels, decisions or rollups.")
        var table: String
        @Argument(help: "Whole days kept before the current UTC day; 0 keeps every day.") var days: Int

        func validate() throws {
            guard days >= 0 else { throw ValidationError("DAYS must be 0 (keep every day) or more, not \(days)") }
        }

        func run() throws {
            try withDatabase(connection, command: "retention set") { database in
                try Retention(connection: database).set(table: table, days: days)
                print("\(table) keeps \(days == 0 ? "every day" : "\(days) day(s) before today (UTC)")")
            }
        }
    }
}
