import ArgumentParser
import Foundation
import ScanCore
import ScanEvents
import ScanPostgres

/// `scanadmin noreads`: labels the cameras saw but could not decode, and their pictures.
struct NoReadsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "noreads",
        abstract: "Labels seen but not decoded: list them by shift, write one's picture, or resolve one.",
        discussion: """
            Each no-read is a code-like region a camera followed for at least noread.minFrames frames that \
            left the view without a confirmed decode (a torn, smeared or covered label). Its picture comes \
            from its sharpest frame. item: the item pass another camera of the lane read (empty: none did). The period options are those of `scanadmin report` (default: today).

            `resolve` records what a person read in the picture (video coding): the code they keyed, \
            checked by its symbology's check characters, or that there was no label or no parcel. The \
            aggregator publishes it once to the WMS as a `coded` result on scantrack.v1.coded.<site>.<lane>.

            Exit codes: 0 done, 1 database failure, no such no-read or already resolved, 64 bad usage \
            (a code that fails its check).
            """,
        subcommands: [List.self, Show.self, Resolve.self],
        defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "No-reads of a shift or range, oldest first.")

        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var period: PeriodOptions
        @Option(help: "Only this lane.") var lane: String?
        @Option(help: "Only this camera.") var camera: String?
        @Flag(help: "Only those nobody has resolved yet (scanadmin noreads resolve).") var unresolved = false
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
                    rows += try NoReadStore(connection: database).list(
                        scope, limit: output.limit, unresolvedOnly: unresolved)
                }
                return rows
            }
            var listing = Listing(columns: [
                "id", "site", "camera", "lane", "firstSeen", "frames", "family", "sharpness", "imageBytes", "item",
                "resolved", "keyedCode",
            ])
            listing.numeric = ["frames", "imageBytes"]
            listing.nullable = ["lane", "family", "sharpness", "item", "resolved", "keyedCode"]
            for row in rows {
                listing.rows.append([
                    row.id, row.site, row.camera, row.lane ?? "", row.firstSeen, String(row.frames), row.family ?? "",
                    row.sharpness ?? "", String(row.imageBytes), row.itemId ?? "", row.resolution ?? "",
                    row.keyedCode ?? "",
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

    struct Resolve: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "resolve",
            abstract: "Record what a person read in a no-read's picture: a keyed code, no label, or no parcel.",
            discussion: """
                Exactly one of --code, --no-label and --not-a-parcel. A keyed code is checked as a scanner \
                would have checked it: EAN/UPC/ISBN/DataBar check digits, Code 39 and Codabar characters, GS1 \
                data keyed in brackets ((01)09506000134352(17)270101(10)AB12) with each field's length, \
                characters and check digit. Without --symbology, 8, 12, 13 or 14 digits must hold a GTIN's \
                check digit. A no-read is resolved once.
                """)

        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The no-read's id (the first column of `scanadmin noreads list`).") var id: String
        @Option(help: "The code read in the picture.") var code: String?
        @Option(help: "Its symbology (EAN-13, CODE-128, GS1-128, DataMatrix, …).") var symbology: String?
        @Flag(help: "There was no label to read.") var noLabel = false
        @Flag(help: "What the camera followed was not a parcel.") var notAParcel = false
        @Option(help: "Who resolved it (default: the login name).") var by: String?
        @Option(help: "SITE/CAMERA, when several cameras sent a no-read with this id.") var camera: String?

        var outcome: NoReadResolution {
            code != nil ? .keyed : noLabel ? .noLabel : .notAParcel
        }

        func validate() throws {
            guard [code != nil, noLabel, notAParcel].filter({ $0 }).count == 1 else {
                throw ValidationError("give exactly one of --code, --no-label, --not-a-parcel")
            }
            if symbology != nil && code == nil { throw ValidationError("--symbology goes with --code") }
            _ = try keyed()
            _ = try person()
        }

        /// The keyed code, checked (nil for the other outcomes).
        func keyed() throws -> KeyedCode? {
            guard let code else { return nil }
            do {
                return try KeyedCode.check(code, symbology: symbology, referenceYear: Self.currentYear)
            } catch {
                throw ValidationError("--code: \(error)")
            }
        }

        /// `--by`, or the login name: printable, at most 128 bytes.
        func person() throws -> String {
            let name =
                by ?? ProcessInfo.processInfo.environment["SUDO_USER"] ?? ProcessInfo.processInfo.environment["USER"]
                ?? "unknown"
            guard !name.isEmpty, name.utf8.count <= 128,
                !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            else { throw ValidationError("--by is 1 to 128 printable characters") }
            return name
        }

        static var currentYear: Int {
            Timestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000)).utcYear
        }

        func run() throws {
            let resolution = NoReadCodingStore.Resolution(outcome: outcome, code: try keyed(), by: try person())
            let coded: CodedEvent
            do {
                coded = try withDatabase(connection, command: "noreads resolve") { database in
                    try NoReadCodingStore(connection: database).resolve(id: id, camera: camera, resolution)
                }
            } catch let error as NoReadCodingStore.ResolveError {
                printError("scanadmin noreads resolve: \(error)")
                throw ExitCode.failure
            }
            var what = coded.outcome.rawValue
            if let code = coded.code {
                what = "keyed " + (code.symbology ?? "a code") + " '" + TerminalText.escaped(code.value) + "'"
            }
            var line = "resolved no-read " + TerminalText.escaped(coded.noReadId)
            // Site, camera and lane are the stored no-read's: escaped like every stored string.
            let (site, cameraName, lane) = (
                TerminalText.escaped(coded.site), TerminalText.escaped(coded.camera), TerminalText.escaped(coded.lane)
            )
            line += " (\(site)/\(cameraName), lane \(lane)): " + what
            line += " by " + TerminalText.escaped(coded.keyedBy)
            line += "; the aggregator publishes it to the WMS as a coded result of lane \(lane)"
            if let pass = coded.parcelPassId { line += " (parcel pass " + TerminalText.escaped(pass) + ")" }
            print(line)
        }
    }
}
