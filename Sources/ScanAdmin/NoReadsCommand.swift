import ArgumentParser
import Foundation
import ScanCore
import ScanPostgres

/// `scanadmin noreads`: labels the cameras saw but could not decode, and their pictures.
struct NoReadsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "noreads",
        abstract: "Labels seen but not decoded: list them by shift, or write one's picture.",
        discussion: """
            Each no-read is a code-like region a camera followed for at least noread.minFrames frames that \
            left the view without a confirmed decode (a torn, smeared or covered label). Its picture comes \
            from its sharpest frame. item: the item pass another camera of the lane read (empty: none did). The period options are those of `scanadmin report` (default: today).

            Exit codes: 0 done, 1 database failure or no such no-read, 64 bad usage.
            """,
        subcommands: [List.self, Show.self],
        defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "No-reads of a shift or range, oldest first.")

        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var period: PeriodOptions
        @Option(help: "Only this lane.") var lane: String?
        @Option(help: "Only this camera.") var camera: String?
        @OptionGroup var output: ListingOptions

        func validate() throws { try period.check(connection: connection) }

        func run() throws {
            let rows = try withDatabase(connection, command: "noreads") { database in
                let (plan, periods) = try period.resolve(database, connection: connection)
                var rows: [NoReadStore.Row] = []
                for instance in periods {
                    let scope = ReportStore.Scope(
                        start: ShiftFigures.timestamp(instance.start), end: ShiftFigures.timestamp(instance.end),
                        site: period.site, lane: lane, camera: camera, timeZone: plan.timeZone.identifier)
                    rows += try NoReadStore(connection: database).list(scope, limit: output.limit)
                }
                return rows
            }
            var listing = Listing(columns: [
                "id", "site", "camera", "lane", "firstSeen", "frames", "family", "sharpness", "imageBytes", "item",
            ])
            listing.numeric = ["frames", "imageBytes"]
            listing.nullable = ["lane", "family", "sharpness", "item"]
            for row in rows {
                listing.rows.append([
                    row.id, row.site, row.camera, row.lane ?? "", row.firstSeen, String(row.frames), row.family ?? "",
                    row.sharpness ?? "", String(row.imageBytes), row.itemId ?? "",
                ])
            }
            print(listing.render(output.format), terminator: "")
            if output.format == .table {
                print("\(rows.count) no-read(s); scanadmin noreads show ID --out FILE writes one's picture")
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Write one no-read's picture (PNG) to a file.")

        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The no-read's id (the first column of `scanadmin noreads list`).") var id: String
        @Option(help: "The PNG file to write.") var out: String

        func run() throws {
            let image = try withDatabase(connection, command: "noreads show") { database in
                try NoReadStore(connection: database).image(id: id)
            }
            guard let image else {
                printError("scanadmin noreads show: no no-read with id '\(id)'")
                throw ExitCode.failure
            }
            guard !image.isEmpty else {
                printError("scanadmin noreads show: no-read '\(id)' came without a picture")
                throw ExitCode.failure
            }
            do {
                try Data(image).write(to: URL(fileURLWithPath: out))
            } catch {
                printError("scanadmin noreads show: cannot write \(out): \(error.localizedDescription)")
                throw ExitCode.failure
            }
            print("wrote \(out) (\(image.count) bytes)")
        }
    }
}
