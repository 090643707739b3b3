import Testing

@testable import ScanCore

@Suite("Y4M headers")
struct Y4MHeaderTests {
    @Test(
        "chroma variants give the right frame sizes",
        arguments: [
            ("Cmono", 64 * 48), ("C420jpeg", 64 * 48 + 2 * 32 * 24), ("C420paldv", 64 * 48 + 2 * 32 * 24),
            ("C420mpeg2", 64 * 48 + 2 * 32 * 24), ("C422", 64 * 48 + 2 * 32 * 48), ("C444", 3 * 64 * 48),
            ("", 64 * 48 + 2 * 32 * 24),
        ])
    func frameSizes(tag: String, bytes: Int) throws {
        let header = try Y4MHeader.parse(Array("YUV4MPEG2 W64 H48 F25:1 Ip A1:1 \(tag)".utf8))
        #expect(header.width == 64 && header.height == 48)
        #expect(header.frameBytes == bytes)
        #expect(header.lumaBytes == 64 * 48)
    }

    @Test("odd sizes round chroma up, and the frame rate sets frame times")
    func oddSizesAndRate() throws {
        let header = try Y4MHeader.parse(Array("YUV4MPEG2 W5 H3 F30000:1001 C420jpeg".utf8))
        #expect(header.frameBytes == 15 + 2 * 3 * 2)
        #expect(header.offsetMilliseconds(frame: 30) == 1001)
    }

    @Test(
        "broken headers are refused with the reason",
        arguments: [
            ("YUV4MPEG W64 H48", "signature"), ("YUV4MPEG2 H48 F30:1", "frame size"),
            ("YUV4MPEG2 W64 H48 F30:0", "frame rate"),
            ("YUV4MPEG2 W64 H48 Cmono16", "not supported"), ("YUV4MPEG2 W0 H48", "frame size"),
        ])
    func broken(line: String, reason: String) {
        #expect {
            try Y4MHeader.parse(Array(line.utf8))
        } throws: { error in
            (error as? Y4MHeader.ParseError)?.reason.contains(reason) == true
        }
    }

    @Test("the header line round-trips")
    func roundTrip() throws {
        let header = Y4MHeader(width: 320, height: 200, frameRateNumerator: 25, frameRateDenominator: 1, chroma: .c422)
        #expect(try Y4MHeader.parse(Array(header.line.utf8.dropLast())) == header)
    }
}

@Suite("RFC 3339 timestamps")
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

@Suite("JSON")
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

@Suite("code normalisation")
struct CodeNormalizerTests {
    @Test("UPC-A becomes EAN-13 with a leading zero")
    func upcA() {
        let detection = Detection(symbology: .upcA, value: Array("036000291452".utf8), points: [])
        let normalized = CodeNormalizer().normalize(detection)
        #expect(normalized.symbology == .ean13)
        #expect(normalized.text == "0036000291452")
        #expect(CodeNormalizer(upcAsEAN13: false).normalize(detection) == detection)
    }

    @Test(
        "UPC-E expands to UPC-A by its last digit's rule",
        arguments: [
            ("01234565", "012345000065"), ("04252614", "042100005264"), ("01234531", "012300000451"),
            ("01234543", "012340000053"),
        ])
    func upcE(upcE: String, upcA: String) {
        #expect(CodeNormalizer.expandUPCE(Array(upcE.utf8)).map { String(decoding: $0, as: UTF8.self) } == upcA)
        #expect(CodeNormalizer.hasValidGS1CheckDigit(Array(upcA.utf8)))
    }

    @Test("GS1 check digits")
    func checkDigits() {
        #expect(CodeNormalizer.hasValidGS1CheckDigit(Array("4006381333931".utf8)))
        #expect(!CodeNormalizer.hasValidGS1CheckDigit(Array("4006381333932".utf8)))
        #expect(CodeNormalizer.hasValidGS1CheckDigit(Array("96385074".utf8)))
        #expect(!CodeNormalizer.hasValidGS1CheckDigit(Array("40063813339X1".utf8)))
    }
}

@Suite("Y4M streams")
struct Y4MStreamTests {
    static func clip(_ header: String, _ frames: [[UInt8]], tail: [UInt8] = []) -> [UInt8] {
        Array((header + "\n").utf8) + frames.flatMap { Array("FRAME\n".utf8) + $0 } + tail
    }

    @Test("frames are read luma first, chroma skipped, to a clean end")
    func framesToTheEnd() throws {
        let chroma = [UInt8](repeating: 128, count: 8)
        var stream = try Y4MStream(
            source: MemoryClipBytes(
                Self.clip("YUV4MPEG2 W4 H4 F25:1 Ip C420jpeg", [Array(0..<16) + chroma, Array(16..<32) + chroma])))
        var image = GrayImage(width: 0, height: 0, pixels: [])
        #expect(try stream.readFrame(into: &image))
        #expect(image.width == 4 && image.height == 4 && image.pixels == Array(0..<16))
        #expect(try stream.readFrame(into: &image))
        #expect(image.pixels == Array(16..<32))
        #expect(try stream.readFrame(into: &image) == false)
        #expect(stream.framesRead == 2)
    }

    @Test("a truncated frame, a damaged marker and a bad header name the frame and what is wrong")
    func damage() throws {
        var image = GrayImage(width: 0, height: 0, pixels: [])
        var truncated = try Y4MStream(
            source: MemoryClipBytes(
                Self.clip(
                    "YUV4MPEG2 W8 H8 F30:1 Cmono", [[UInt8](repeating: 0, count: 64)],
                    tail: Array("FRAME\n".utf8) + [1, 2, 3])))
        #expect(try truncated.readFrame(into: &image))
        #expect(throws: Y4MStream<MemoryClipBytes>.Failure(frame: 1, reason: "truncated: 3 of 64 bytes")) {
            try truncated.readFrame(into: &image)
        }
        var damaged = try Y4MStream(
            source: MemoryClipBytes(Self.clip("YUV4MPEG2 W2 H2 F30:1 Cmono", [], tail: Array("FRAMX\n".utf8))))
        #expect(throws: Y4MStream<MemoryClipBytes>.Failure(frame: 0, reason: "expected a FRAME marker (damaged clip)"))
        {
            try damaged.readFrame(into: &image)
        }
        #expect(throws: Y4MStream<MemoryClipBytes>.Failure.self) {
            try Y4MStream(source: MemoryClipBytes(Array("YUV4MPEG2 W0 H2\n".utf8)))
        }
        #expect(
            throws: Y4MStream<MemoryClipBytes>.Failure(
                frame: nil, reason: "empty file or header longer than 4096 bytes")
        ) {
            try Y4MStream(source: MemoryClipBytes([]))
        }
    }
}
