import ArgumentParser
import Foundation
import ScanCore

/// `--format` of every listing.
enum ListingFormat: String, ExpressibleByArgument, CaseIterable {
    case table, csv, json
}

/// The row limit and form of a listing of periods (`noreads`, `deadletters`).
struct ListingOptions: ParsableArguments {
    @Option(help: "At most this many rows a period.") var limit: Int = 1000
    @Option(help: "table, csv or json.") var format: ListingFormat = .table

    func validate() throws {
        if limit < 1 { throw ValidationError("--limit must be at least 1") }
    }
}

/// A listing: named columns and rows of text, printed as an aligned table, RFC 4180 CSV, or a
/// JSON array of objects keyed by the column names (numbers stay numbers).
struct Listing {
    var columns: [String]
    var rows: [[String]] = []
    /// Columns whose values are numbers in JSON.
    var numeric: Set<String> = []
    /// Columns whose empty cells are null in JSON (nothing there, not an empty text).
    var nullable: Set<String> = []

    /// Table and CSV cells show control characters escaped, and CSV cells that a spreadsheet would
    /// take as a formula start with `'`; JSON keeps every value exact.
    func render(_ format: ListingFormat) -> String {
        switch format {
        case .table:
            let rows = rows.map { $0.map(TerminalText.escaped) }
            var widths = columns.map(\.count)
            for row in rows {
                for (index, cell) in row.enumerated() where index < widths.count {
                    widths[index] = max(widths[index], cell.count)
                }
            }
            func line(_ cells: [String]) -> String {
                cells.enumerated().map { index, cell in
                    index == cells.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
                }.joined(separator: "  ")
            }
            return ([line(columns.map { $0.uppercased() })] + rows.map(line)).joined(separator: "\n") + "\n"
        case .csv:
            return ([columns] + rows).map { $0.map(Self.csvField).joined(separator: ",") }.joined(separator: "\n")
                + "\n"
        case .json:
            let objects = rows.map { row -> String in
                var writer = JSONWriter()
                for (column, cell) in zip(columns, row) {
                    if nullable.contains(column) && cell.isEmpty {
                        writer.null(column)
                    } else if numeric.contains(column), let number = Int(cell) {
                        writer.field(column, number)
                    } else {
                        writer.field(column, cell)
                    }
                }
                return writer.text
            }
            return "[" + objects.joined(separator: ",\n ") + "]\n"
        }
    }

    static func csvField(_ text: String) -> String { SpreadsheetCell.csv(text) }
}

/// Reads a whole input file or fails naming it (exit 2).
func readInputFile(_ path: String, command: String) throws -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: path) else {
        printError("scanadmin \(command): cannot read \(path)")
        throw ExitCode(2)
    }
    return Array(data)
}
