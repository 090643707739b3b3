import ScanTestTiming
import Testing

import ScanCore

@testable import ScanAdmin

/// scanadmin's tables, CSV and JSON with values a label or a camera could send.
@Suite("listings", .timed)
struct ListingTests {
    static let hostile = Listing(
        columns: ["camera", "value", "count"],
        rows: [
            ["cam\u{1B}[2J", "=HYPERLINK(\"http://evil\",\"x\")", "-3"],
            ["abc\u{202E}fed", "+SUM(1)\r\nnext", "12"],
            ["cam-01", "4006381333931", "7"],
        ], numeric: ["count"])

    @Test("a table shows control characters and bidi overrides escaped, aligned by what is shown")
    func table() {
        let text = Self.hostile.render(.table)
        #expect(!text.contains("\u{1B}") && !text.contains("\u{202E}") && !text.contains("\r"))
        #expect(
            text.contains("cam\\x1B[2J") && text.contains("abc\\u{202E}fed") && text.contains("+SUM(1)\\x0D\\x0Anext"))
        #expect(text.split(separator: "\n").count == 4, "one line a row: \(text)")
    }

    @Test("CSV cells a spreadsheet would run start with a quote; numbers stay numbers; quoting per RFC 4180")
    func csv() {
        let lines = Self.hostile.render(.csv).split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines[1] == #"cam\x1B[2J,"'=HYPERLINK(""http://evil"",""x"")",-3"#)
        #expect(lines[2] == #"abc\u{202E}fed,'+SUM(1)\x0D\x0Anext,12"#)
        #expect(lines[3] == "cam-01,4006381333931,7")
    }

    @Test("JSON keeps every value exact")
    func json() throws {
        let text = Self.hostile.render(.json)
        let parsed = try JSONValue.parse(text)
        guard case .array(let rows) = parsed else {
            Issue.record("not an array")
            return
        }
        #expect(rows[0]["camera"] == .string("cam\u{1B}[2J"))
        #expect(rows[1]["value"] == .string("+SUM(1)\r\nnext"))
        #expect(rows[0]["count"] == .number(-3))
    }
}
