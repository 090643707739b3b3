import ScanCore
import Testing

@Suite("JSONValue.formatted")
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
}
