import Foundation
import ScanCore

/// Pick-and-pack checking, the pure part: what a pack-station session counted, against the
/// lines of the order it was packed for.

public struct OrderLine: Sendable, Equatable {
    public var line: Int
    public var code: String
    public var expected: Int
    public init(line: Int, code: String, expected: Int) {
        self.line = line
        self.code = code
        self.expected = expected
    }
}

/// One code counted in a session (from `session.completed`'s `codes`).
public struct CountedCode: Sendable, Equatable {
    public var value: String
    public var symbology: String
    public var count: Int
    public var role: String?
    public init(value: String, symbology: String, count: Int, role: String? = nil) {
        self.value = value
        self.symbology = symbology
        self.count = count
        self.role = role
    }
}

public struct PackLineResult: Sendable, Equatable {
    /// The order line, nil for a code the order does not hold.
    public var line: Int?
    public var code: String
    public var symbology: String?
    public var expected: Int
    public var counted: Int
    public var verdict: PackVerdict
}

public struct PackResult: Sendable, Equatable {
    public var orderId: String?
    public var verdict: PackVerdict
    public var lines: [PackLineResult]
}

public enum PackEvaluation {
    /// The order is the session's order id, else the first code with role `order`. Order codes
    /// are not items. Each order line is complete, short or over; a counted code the order does
    /// not hold is unexpected. The order's verdict is the worst of its lines, in the order
    /// short, over, unexpected (a missing item matters most at the bench); `unknown-order` when
    /// no order id was found or the order is not known (`order` is nil).
    public static func evaluate(sessionOrderId: String?, codes: [CountedCode], order: (String) -> [OrderLine]?)
        -> PackResult
    {
        let orderId = sessionOrderId ?? codes.first { $0.role == "order" }?.value
        let items = codes.filter { $0.role != "order" && $0.value != orderId }
        var counted: [String: (count: Int, symbology: String)] = [:]
        var firstSeenOrder: [String] = []
        for code in items {
            if counted[code.value] == nil { firstSeenOrder.append(code.value) }
            counted[code.value, default: (0, code.symbology)].count += code.count
        }
        guard let orderId, let lines = order(orderId) else {
            let results = firstSeenOrder.map {
                PackLineResult(
                    line: nil, code: $0, symbology: counted[$0]?.symbology, expected: 0,
                    counted: counted[$0]?.count ?? 0,
                    verdict: .unexpected)
            }
            return PackResult(orderId: orderId, verdict: .unknownOrder, lines: results)
        }
        var results: [PackLineResult] = []
        var expectedByCode: [String: Int] = [:]
        for line in lines { expectedByCode[line.code, default: 0] += line.expected }
        var reported: Set<String> = []
        for line in lines.sorted(by: { $0.line < $1.line }) where reported.insert(line.code).inserted {
            let expected = expectedByCode[line.code] ?? 0
            let got = counted[line.code]?.count ?? 0
            let verdict: PackVerdict = got == expected ? .complete : got < expected ? .short : .over
            results.append(
                PackLineResult(
                    line: line.line, code: line.code, symbology: counted[line.code]?.symbology, expected: expected,
                    counted: got,
                    verdict: verdict))
        }
        for value in firstSeenOrder where expectedByCode[value] == nil {
            results.append(
                PackLineResult(
                    line: nil, code: value, symbology: counted[value]?.symbology, expected: 0,
                    counted: counted[value]?.count ?? 0,
                    verdict: .unexpected))
        }
        let verdicts = Set(results.map(\.verdict))
        let verdict: PackVerdict = [.short, .over, .unexpected].first { verdicts.contains($0) } ?? .complete
        return PackResult(orderId: orderId, verdict: verdict, lines: results)
    }
}

/// Orders as a WMS, a spreadsheet or an ERP exports them: RFC 4180 CSV with a header naming
/// `order_id`, `line`, `code` and `quantity` (any order and case, more columns ignored), delimited
/// by commas, semicolons (Excel in locales whose decimal mark is a comma, SAP) or tabs, whichever
/// the header is written with; a UTF-8 byte-order mark (Excel's "CSV UTF-8") is skipped, and a
/// quoted field may hold the delimiter, quotes (doubled) and line breaks. A bad row is reported
/// with the line it starts on and the whole file is refused.
public enum OrderCSV {
    public struct Order: Sendable, Equatable {
        public var id: String
        public var lines: [OrderLine]
        public init(id: String, lines: [OrderLine]) {
            self.id = id
            self.lines = lines
        }
    }

    static let columnNames = ["order_id", "line", "code", "quantity"]

    public static func parse(_ text: String, file: String) throws(ConfigErrors) -> [Order] {
        var issues: [ConfigIssue] = []
        var orders: [Order] = []
        let body = text.first == "\u{FEFF}" ? String(text.dropFirst()) : text
        let delimiter = delimiter(of: body)
        var rows: [(number: Int, fields: [String])]
        do {
            rows = try records(body, delimiter: delimiter)
        } catch {
            throw ConfigErrors(file: file, issues: [ConfigIssue(path: "line \(error.line)", message: error.message)])
        }
        guard !rows.isEmpty else {
            throw ConfigErrors(file: file, issues: [ConfigIssue(path: "line 1", message: "the file is empty")])
        }
        let header = rows.removeFirst().fields.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        let names = columnNames
        let columns = names.map { name in header.firstIndex(of: name) }
        for (name, column) in zip(names, columns) where column == nil {
            issues.append(
                ConfigIssue(
                    path: "line 1",
                    message:
                        "the header has no column '\(name)' (needs order_id, line, code, quantity, separated by commas, semicolons or tabs)"
                ))
        }
        guard issues.isEmpty, let orderColumn = columns[0], let lineColumn = columns[1], let codeColumn = columns[2],
            let quantityColumn = columns[3]
        else { throw ConfigErrors(file: file, issues: issues) }
        var seen: Set<String> = []
        for row in rows where !(row.fields.count == 1 && row.fields[0].trimmingCharacters(in: .whitespaces).isEmpty) {
            let cells = row.fields
            let place = "line \(row.number)"
            guard cells.count >= header.count else {
                issues.append(
                    ConfigIssue(path: place, message: "\(cells.count) fields, the header has \(header.count)"))
                continue
            }
            let orderId = cells[orderColumn].trimmingCharacters(in: .whitespaces)
            let code = cells[codeColumn].trimmingCharacters(in: .whitespaces)
            let line = positive(cells[lineColumn])
            let quantity = positive(cells[quantityColumn])
            let problems = [
                orderId.isEmpty ? "order_id is empty" : nil,
                line == nil ? "line '\(cells[lineColumn])' is not a positive whole number" : nil,
                code.isEmpty ? "code is empty" : nil,
                quantity == nil ? "quantity '\(cells[quantityColumn])' is not a positive whole number" : nil,
            ].compactMap { $0 }
            guard problems.isEmpty, let line, let quantity else {
                issues.append(ConfigIssue(path: place, message: problems.joined(separator: "; ")))
                continue
            }
            guard seen.insert("\(orderId)\u{0}\(line)").inserted else {
                issues.append(ConfigIssue(path: place, message: "order \(orderId) has line \(line) twice"))
                continue
            }
            if let index = orders.firstIndex(where: { $0.id == orderId }) {
                orders[index].lines.append(OrderLine(line: line, code: code, expected: quantity))
            } else {
                orders.append(Order(id: orderId, lines: [OrderLine(line: line, code: code, expected: quantity)]))
            }
        }
        if !issues.isEmpty { throw ConfigErrors(file: file, issues: issues) }
        return orders
    }

    private static func positive(_ cell: String) -> Int? {
        Int(cell.trimmingCharacters(in: .whitespaces)).flatMap { $0 > 0 ? $0 : nil }
    }

    /// The header's delimiter: of comma, semicolon and tab, the one that splits the first line
    /// into the most of the required column names (a comma when none does).
    static func delimiter(of text: String) -> Character {
        let firstLine = text.prefix { !$0.isNewline }
        let candidates: [Character] = [",", ";", "\t"]
        let found = candidates.map { delimiter in
            (try? records(String(firstLine), delimiter: delimiter).first?.fields)?.map {
                $0.trimmingCharacters(in: .whitespaces).lowercased()
            } ?? []
        }.map { header in columnNames.count { header.contains($0) } }
        guard let best = found.indices.max(by: { found[$0] < found[$1] }), found[best] > 0 else { return "," }
        return candidates[best]
    }

    struct UnclosedQuote: Error {
        var line: Int
        var message: String
    }

    /// RFC 4180 records: fields split at `delimiter` outside double quotes, records at a line break
    /// outside them (CRLF, LF or CR), a doubled quote inside quotes is one quote; each record with
    /// the line it starts on. Trailing empty lines are dropped.
    static func records(_ text: String, delimiter: Character) throws(UnclosedQuote) -> [(number: Int, fields: [String])]
    {
        var records: [(number: Int, fields: [String])] = []
        var fields: [String] = []
        var current = ""
        var quoted = false
        var line = 1
        var recordLine = 1
        var quoteLine = 1
        var chars = Array(text)[...]
        while let char = chars.popFirst() {
            if quoted {
                if char == "\"" {
                    if chars.first == "\"" {
                        current.append("\"")
                        chars.removeFirst()
                    } else {
                        quoted = false
                    }
                } else {
                    // "\r\n" is one Character in Swift.
                    if char.isNewline { line += 1 }
                    current.append(char)
                }
            } else if char == "\"" && current.isEmpty {
                quoted = true
                quoteLine = line
            } else if char == delimiter {
                fields.append(current)
                current = ""
            } else if char.isNewline {
                fields.append(current)
                records.append((recordLine, fields))
                fields = []
                current = ""
                line += 1
                recordLine = line
            } else {
                current.append(char)
            }
        }
        if quoted {
            throw UnclosedQuote(line: quoteLine, message: "a quoted field is not closed: a double quote is missing")
        }
        if !current.isEmpty || !fields.isEmpty {
            fields.append(current)
            records.append((recordLine, fields))
        }
        while let last = records.last, last.fields.count == 1, last.fields[0].isEmpty { records.removeLast() }
        return records
    }
}
