import ScanTestTiming
import Testing

@testable import ScanCore
@testable import ScanMedia

@Suite("Y4M headers", .timed)
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

@Suite("Y4M streams", .timed)
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
