import ScanCore
import ScanTestTiming
import Testing

@Suite("JSONValue.formatted", .timed)
struct JSONFormattedTests {
    @Test("indented text that parses back to the same value, strings escaped, whole numbers without a fraction")
    func roundTrip() throws {
        let value = JSONValue.object([
            ("name", .string("a \"quoted\"\n\u{1B}[31mline\\")), ("count", .number(42)), ("ratio", .number(0.1)),
            ("tiny", .number(1e-7)), ("big", .number(-9_007_199_254)), ("on", .bool(true)), ("none", .null),
            ("empty", .array([])), ("nothing", .object([])),
            ("nested", .array([.object([("k", .array([.number(1.5), .string("ü")]))])])),
        ])
        let text = value.formatted()
        #expect(try JSONValue.parse(text) == value)
        #expect(
            text.hasPrefix("{\n  \"name\": \"a \\\"quoted\\\"\\n\\u001b[31mline\\\\\",\n  \"count\": 42,\n"), "\(text)")
        #expect(text.contains("\n  \"empty\": [],\n  \"nothing\": {},\n"))
        #expect(text.contains("\n    {\n      \"k\": [\n        1.5,\n"), "\(text)")
        #expect(JSONValue.number(.infinity).formatted() == "null")
    }

    @Test(
        "one terminal-safe line: DEL, C1, bidi controls and separators as \\u escapes, keys too; the same value read back"
    )
    func terminalSafeLine() throws {
        let hostile = "a\u{1B}[31m\u{7F}\u{85}\u{9B}\u{202E}\u{2066}\u{200F}\u{2029}ü€z"
        let value = JSONValue.object([
            ("value", .string(hostile)), ("k\u{202E}ey", .array([.number(1.5), .bool(false), .null])),
            ("n", .number(3)),
        ])
        let line = value.terminalSafeLine()
        #expect(try JSONValue.parse(line) == value)
        #expect(!line.contains("\n"))
        #expect(!line.unicodeScalars.contains(where: TerminalText.needsEscape), "\(line.debugDescription)")
        #expect(
            line
                == #"{"value":"a\u001b[31m\u007f\u0085\u009b\u202e\u2066\u200f\u2029ü€z","k\u202eey":[1.5,false,null],"n":3}"#,
            "\(line)")
        #expect(!value.formatted().unicodeScalars.contains { $0 != "\n" && TerminalText.needsEscape($0) })
    }
}
