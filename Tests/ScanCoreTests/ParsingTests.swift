import ScanTestTiming
import Testing

@testable import ScanCore

@Suite("RFC 3339 timestamps", .timed)
struct TimestampTests {
    @Test("format and parse agree with known instants")
    func known() throws {
        let instant = try #require(Timestamp(rfc3339: "2026-11-21T23:30:05.250Z"))
        #expect(instant.milliseconds == 1_795_303_805_250)
        #expect(instant.description == "2026-11-21T23:30:05.250Z")
        #expect(Timestamp(milliseconds: 0).description == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp(rfc3339: "2024-02-29T12:00:00+01:00")?.description == "2024-02-29T11:00:00.000Z")
        #expect(Timestamp(rfc3339: "2026-03-29T01:59:59.9-02:30")?.description == "2026-03-29T04:29:59.900Z")
        #expect(Timestamp(milliseconds: -1).description == "1969-12-31T23:59:59.999Z")
    }

    @Test("fractions finer than milliseconds are cut to milliseconds (found by make fuzz: more than 3 digits trapped)")
    func fineFractions() {
        #expect(Timestamp(rfc3339: "2026-11-21T23:30:05.2504Z")?.description == "2026-11-21T23:30:05.250Z")
        #expect(Timestamp(rfc3339: "2026-11-21T23:30:05.123456789Z")?.description == "2026-11-21T23:30:05.123Z")
        #expect(
            Timestamp(rfc3339: "2026-11-23T09:00:03.16444444444444444444444444444446Z")?.description
                == "2026-11-23T09:00:03.164Z")
    }

    @Test(
        "malformed times are refused",
        arguments: ["2026-11-21", "2026-13-01T00:00:00Z", "2026-11-21T25:00:00Z", "2026-11-21T10:00:00", "yesterday"])
    func malformed(text: String) {
        #expect(Timestamp(rfc3339: text) == nil)
    }

    @Test("every day of four centuries round-trips through civil dates")
    func civilRoundTrip() {
        for days in stride(from: -146_097, to: 146_097 * 3, by: 37) {
            let (y, m, d) = Timestamp.civil(days: days)
            #expect(Timestamp.days(year: y, month: m, day: d) == days)
        }
    }
}

@Suite("JSON", .timed)
struct JSONTests {
    @Test("parses objects, arrays, escapes and numbers")
    func parse() throws {
        let value = try JSONValue.parse(#"{"a": [1, -2.5e2, true, null], "b": "x\"\u00e9\ud83d\udce6\n"}"#)
        #expect(value["a"] == .array([.number(1), .number(-250), .bool(true), .null]))
        #expect(value["b"] == .string("x\"é📦\n"))
    }

    @Test(
        "errors say where",
        arguments: [
            ("{\"a\": }", 1, 7), ("{\n  \"a\": 1,\n  \"a\": 2}", 3, 6), ("[1, 2", 1, 6), ("{\"a\": tru}", 1, 7),
            ("\"\u{1}\"", 1, 2),
        ])
    func errors(text: String, line: Int, column: Int) {
        do {
            _ = try JSONValue.parse(text)
            Issue.record("parsed \(text)")
        } catch {
            #expect(error.line == line)
            #expect(error.column == column)
        }
    }

    @Test("deep nesting is refused, not a stack overflow")
    func deep() {
        let text = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: JSONParseError.self) { try JSONValue.parse(text) }
    }

    @Test("the writer escapes what JSON needs and the parser reads it back")
    func writerRoundTrip() throws {
        var writer = JSONWriter()
        let hostile = "quote\" back\\slash \u{1D}gs \u{0}nul\ttab\nnl 📦"
        writer.field("s", hostile)
        writer.field("n", 42)
        writer.field("d", 12.345, decimals: 1)
        writer.field("b", true)
        let parsed = try JSONValue.parse(writer.finished())
        #expect(parsed["s"] == .string(hostile))
        #expect(parsed["n"] == .number(42))
        #expect(parsed["d"] == .number(12.3))
        #expect(parsed["b"] == .bool(true))
    }
}
