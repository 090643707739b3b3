import ScanCore
import ScanMedia
import ScanTestTiming
import Testing

@Suite("BMP", .timed)
struct BMPTests {
    static func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    static func le16(_ value: Int) -> [UInt8] { (0..<2).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

    /// A BMP with a 40-byte info header (or `header` bytes, zero-padded), then `extra` (palette or
    /// bit fields), then the rows given (each padded to 4 bytes here).
    static func bitmap(
        width: Int, height: Int, bits: Int, compression: Int = 0, header: Int = 40, extra: [UInt8] = [],
        rows: [[UInt8]]
    ) -> [UInt8] {
        var info = le32(header) + le32(width) + le32(height) + le16(1) + le16(bits) + le32(compression)
        info += le32(0) + le32(2835) + le32(2835) + le32(0) + le32(0)
        info += [UInt8](repeating: 0, count: max(0, header - info.count))
        let pixels = rows.flatMap { $0 + [UInt8](repeating: 0, count: (4 - $0.count % 4) % 4) }
        let offset = 14 + info.count + extra.count
        return Array("BM".utf8) + le32(offset + pixels.count) + le32(0) + le32(offset) + info + extra + pixels
    }

    @Test("24-bit rows bottom-up become luma top-down; a negative height is top-down")
    func trueColour() throws {
        // Bottom row first: blue, white; then the top row: black, red (bytes are B, G, R).
        let rows: [[UInt8]] = [[255, 0, 0, 255, 255, 255], [0, 0, 0, 0, 0, 255]]
        let image = try BMP.parse(Self.bitmap(width: 2, height: 2, bits: 24, rows: rows))
        #expect(image.width == 2 && image.height == 2)
        #expect(image.pixels == [0, GrayImage.luma(red: 255, green: 0, blue: 0), 28, 255])
        let topDown = try BMP.parse(Self.bitmap(width: 2, height: -2, bits: 24, rows: rows))
        #expect(topDown.pixels == [28, 255, 0, GrayImage.luma(red: 255, green: 0, blue: 0)])
    }

    @Test("1, 4 and 8 bits a pixel through the palette; an index past the palette is black")
    func palettes() throws {
        let grey: [UInt8] = [0, 0, 0, 0] + [255, 255, 255, 0]  // black, white (B, G, R, reserved)
        let mono = try BMP.parse(
            Self.bitmap(width: 10, height: 1, bits: 1, extra: grey, rows: [[0b1010_0000, 0b1100_0000]]))
        #expect(mono.pixels == [255, 0, 255, 0, 0, 0, 0, 0, 255, 255])
        // 4 bits with two colours: indices 1, 0 and 15 (past the palette).
        var sixteen = Self.bitmap(width: 3, height: 1, bits: 4, extra: grey, rows: [[0x10, 0xF0]])
        sixteen.replaceSubrange(46..<50, with: Self.le32(2))
        #expect(try BMP.parse(sixteen).pixels == [255, 0, 0])
        // Colours used 0 means all 16 entries, and only two are there: refused, not read past.
        #expect(throws: BMP.ParseError.self) {
            try BMP.parse(Self.bitmap(width: 3, height: 1, bits: 4, extra: grey, rows: [[0x10, 0xF0]]))
        }
        var eight = Self.bitmap(width: 3, height: 1, bits: 8, extra: grey, rows: [[1, 0, 7]])
        eight.replaceSubrange(46..<50, with: Self.le32(2))  // two colours in the palette
        let image = try BMP.parse(eight)
        #expect(image.pixels == [255, 0, 0])
    }

    @Test("16 and 32 bits with bit fields, alpha laid over white")
    func bitFields() throws {
        // 5-6-5: pure green is 0x07E0.
        let masks565 = Self.le32(0xF800) + Self.le32(0x07E0) + Self.le32(0x001F)
        let green = try BMP.parse(
            Self.bitmap(width: 1, height: 1, bits: 16, compression: 3, extra: masks565, rows: [Self.le16(0x07E0)]))
        #expect(green.pixels == [GrayImage.luma(red: 0, green: 255, blue: 0)])
        // A V4 header (108 bytes) with an alpha mask: a fully transparent black pixel is white.
        var v4 = Self.bitmap(
            width: 2, height: 1, bits: 32, compression: 3, header: 108,
            rows: [
                Self.le32(0x0000_0000) + Self.le32(0xFF00_0000)
            ])
        let masks = Self.le32(0xFF_0000) + Self.le32(0xFF00) + Self.le32(0xFF) + Self.le32(0xFF00_0000)
        v4.replaceSubrange(54..<70, with: masks)
        #expect(try BMP.parse(v4).pixels == [255, 0])
        // A mask of every bit does not overflow.
        var wide = Self.bitmap(width: 1, height: 1, bits: 32, compression: 3, header: 108, rows: [Self.le32(-1)])
        wide.replaceSubrange(54..<70, with: Self.le32(-1) + Self.le32(-1) + Self.le32(-1) + Self.le32(0))
        #expect(try BMP.parse(wide).pixels == [255])
    }

    @Test("hostile and damaged headers are errors that say what is wrong, before any pixel is allocated")
    func refused() throws {
        let rows: [[UInt8]] = [[0, 0, 0, 0]]
        func reason(_ bytes: [UInt8]) -> String {
            do {
                _ = try BMP.parse(bytes)
                return "read"
            } catch {
                return error.reason
            }
        }
        #expect(reason(Array("BM".utf8)) == "truncated BMP header")
        #expect(reason(Self.bitmap(width: 1_000_000, height: 1_000_000, bits: 24, rows: rows)).contains("larger than"))
        #expect(reason(Self.bitmap(width: 0, height: 1, bits: 24, rows: rows)).hasPrefix("empty BMP"))
        #expect(
            reason(Self.bitmap(width: 1, height: 1, bits: 8, compression: 1, rows: rows)).hasPrefix("RLE8-compressed"))
        #expect(reason(Self.bitmap(width: 1, height: 1, bits: 7, rows: rows)).contains("7 bits"))
        #expect(reason(Self.bitmap(width: 1, height: 1, bits: 24, header: 41, rows: rows)).contains("41 bytes"))
        #expect(reason(Self.bitmap(width: 64, height: 64, bits: 24, rows: rows)).hasPrefix("truncated BMP"))
        #expect(reason(Self.bitmap(width: 2, height: 1, bits: 8, rows: [[0, 1]])).hasPrefix("truncated BMP palette"))
        var offset = Self.bitmap(width: 1, height: 1, bits: 24, rows: rows)
        offset.replaceSubrange(10..<14, with: Self.le32(Int(Int32.max)))
        #expect(reason(offset).hasPrefix("truncated BMP"))
        // Every prefix of a valid file is refused or read, never a crash.
        let whole = Self.bitmap(
            width: 3, height: 2, bits: 24, rows: [[1, 2, 3, 4, 5, 6, 7, 8, 9], [9, 8, 7, 6, 5, 4, 3, 2, 1]])
        for length in 0..<whole.count { #expect(reason(Array(whole.prefix(length))) != "read") }
        #expect(reason(whole) == "read")
    }
}
