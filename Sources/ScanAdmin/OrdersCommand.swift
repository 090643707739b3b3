import ArgumentParser
import Foundation
import ScanCore
import ScanEvents
import ScanReconciliation
import ScanPostgres

/// `scanadmin orders import FILE.csv | show ID`
struct OrdersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "orders",
        abstract: "Import expected orders from CSV and show an order with its pack verdicts.",
        discussion: """
            CSV: a header naming order_id, line, code, quantity (in any order; other columns are ignored), \
            separated by commas, semicolons or tabs; a UTF-8 byte-order mark is skipped.

            Exit codes: 0 done, 1 database failure or unknown order, 2 bad file (every bad row by line number; nothing imported).
            """,
        subcommands: [Import.self, Show.self])

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import orders; an order already known is replaced whole by the file's lines.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "The site the orders are for (default: every site without an order of that id of its own).")
        var site: String?
        @Argument(help: "CSV file.") var file: String

        func validate() throws { try checkSubjectFlags([("--site", site)], prefix: "scantrack") }

        func run() throws {
            let orders: [OrderCSV.Order]
            do {
                orders = try OrderCSV.parse(
                    String(decoding: try readInputFile(file, command: "orders import"), as: UTF8.self), file: file)
            } catch let error as ConfigErrors {
                printError("scanadmin orders import: \(error)")
                throw ExitCode(2)
            }
            // The rules an order from the WMS over NATS meets (docs/schema/order.schema.json).
            var problems: [String] = []
            for order in orders {
                do {
                    try OrderMessage.check(
                        orderId: order.id, revision: nil,
                        lines: order.lines.map {
                            OrderMessage.Line(line: $0.line, code: $0.code, quantity: $0.expected)
                        },
                        cancel: false)
                } catch {
                    problems.append("\(file): order '\(TerminalText.escaped(order.id))': \(error)")
                }
            }
            guard problems.isEmpty else {
                printError("scanadmin orders import: nothing imported:\n" + problems.joined(separator: "\n"))
                throw ExitCode(2)
            }
            let lines = try withDatabase(connection, command: "orders import") { database in
                try SiteStore(connection: database).importOrders(
                    orders, site: site, source: URL(fileURLWithPath: file).lastPathComponent)
            }
            print("imported \(orders.count) order(s), \(lines) line(s) from \(file)")
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "An order's lines, and every pack record made for it with its verdict per line.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "table, csv or json.") var format: ListingFormat = .table
        @Option(help: "The site whose order it is (default: the order imported for every site).") var site: String?
        @Argument(help: "Order id.") var id: String

        func validate() throws { try checkSubjectFlags([("--site", site)], prefix: "scantrack") }

        func run() throws {
            let listing = try withDatabase(connection, command: "orders show") { database -> Listing? in
                let store = SiteStore(connection: database)
                guard let lines = try store.orderLines(site: site ?? "", id) else { return nil }
                var listing = Listing(columns: [
                    "orderId", "line", "code", "expected", "session", "station", "counted", "verdict", "orderVerdict",
                ])
                listing.numeric = ["line", "expected", "counted"]
                let packs = try store.packedLines(orderId: id, site: site)
                if packs.isEmpty {
                    for line in lines {
                        listing.rows.append([
                            id, String(line.line), line.code, String(line.expected), "", "", "", "not packed",
                            "not packed",
                        ])
                    }
                }
                for line in packs {
                    listing.rows.append([
                        id, line.line.map(String.init) ?? "", line.code, String(line.expected), line.sessionId,
                        line.station,
                        String(line.counted), line.verdict, line.packVerdict,
                    ])
                }
                return listing
            }
            guard let listing else {
                printError("scanadmin orders show: no order '\(id)' (import it with scanadmin orders import FILE.csv)")
                throw ExitCode.failure
            }
            print(listing.render(format), terminator: "")
        }
    }
}
