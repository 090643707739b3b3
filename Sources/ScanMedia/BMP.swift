import ScanCore

/// Windows bitmaps (BMP), read to 8-bit luma: uncompressed 1, 4, 8 (palette), 16, 24 and 32 bits a
/// pixel, bit fields for 16 and 32, rows bottom-up or top-down; the info headers of every version
/// (OS/2's 12 bytes to V5's 124). Run-length compressed files are refused by name. Every size and
/// offset is checked against the file before it is used.
public enum BMP {
    public struct ParseError: Error, CustomStringConvertible, Equatable {
        public var reason: String
        public var description: String { reason }
    }

    public static func isBMP(_ bytes: [UInt8]) -> Bool { bytes.count >= 2 && bytes[0] == 0x42 && bytes[1] == 0x4D }

    public static func parse(_ bytes: [UInt8], maxPixels: Int = 100_000_000) throws(ParseError) -> GrayImage {
        func fail(_ reason: String) -> ParseError { ParseError(reason: reason) }
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> UInt32 {
            UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
        }
        guard isBMP(bytes) else { throw fail("not a BMP image (no BM signature)") }
        guard bytes.count >= 26 else { throw fail("truncated BMP header") }
        let pixelOffset = Int(u32(10))
        let headerSize = Int(u32(14))
        guard [12, 40, 52, 56, 64, 108, 124].contains(headerSize), bytes.count >= 14 + headerSize else {
            throw fail("damaged BMP: an info header of \(headerSize) bytes")
        }
        let width: Int
        let signedHeight: Int
        let bits: Int
        var compression: UInt32 = 0
        var colours = 0
        if headerSize == 12 {
            width = u16(18)
            signedHeight = u16(20)
            bits = u16(24)
        } else {
            width = Int(Int32(bitPattern: u32(18)))
            signedHeight = Int(Int32(bitPattern: u32(22)))
            bits = u16(28)
            compression = u32(30)
            colours = Int(u32(46))
        }
        let topDown = signedHeight < 0
        let height = abs(signedHeight)
        guard width > 0, height > 0 else { throw fail("empty BMP (\(width)x\(height))") }
        guard width.multipliedReportingOverflow(by: height).partialValue <= maxPixels, width <= 1 << 20,
            height <= 1 << 20
        else { throw fail("BMP of \(width)x\(height) pixels is larger than \(maxPixels) pixels") }
        guard [1, 4, 8, 16, 24, 32].contains(bits) else { throw fail("BMP with \(bits) bits a pixel is not read") }
        // 0 none, 3 bit fields (6: with alpha); 1, 2 run lengths, 4, 5 JPEG or PNG inside.
        guard [0, 3, 6].contains(compression) else {
            let name = [1: "RLE8", 2: "RLE4", 4: "JPEG", 5: "PNG"][Int(compression)] ?? "type \(compression)"
            throw fail("\(name)-compressed BMP is not read: convert it first, e.g. convert FILE FILE.png")
        }

        // Channel masks: given after the 40-byte header (or inside a longer one), else the defaults.
        var masks: [UInt32] = bits == 16 ? [0x7C00, 0x03E0, 0x001F, 0] : [0xFF_0000, 0xFF00, 0xFF, 0]
        if compression != 0 {
            guard bits == 16 || bits == 32 else { throw fail("BMP bit fields with \(bits) bits a pixel") }
            let withAlpha = headerSize >= 56 || compression == 6
            guard bytes.count >= (withAlpha ? 70 : 66) else { throw fail("truncated BMP bit fields") }
            masks = [u32(54), u32(58), u32(62), withAlpha ? u32(66) : 0]
        } else if bits == 32 {
            masks[3] = 0  // BI_RGB 32-bit: the fourth byte is unused, not alpha
        }

        // The palette, for 8 bits and fewer: 4 bytes an entry (3 in OS/2 files), as luma.
        var palette: [UInt8] = []
        if bits <= 8 {
            let entrySize = headerSize == 12 ? 3 : 4
            let count = colours == 0 || colours > 1 << bits ? 1 << bits : colours
            let start = 14 + headerSize  // bit fields come only with 16 and 32 bits
            guard start + count * entrySize <= bytes.count else { throw fail("truncated BMP palette") }
            palette = (0..<count).map { entry in
                let at = start + entry * entrySize
                return GrayImage.luma(red: bytes[at + 2], green: bytes[at + 1], blue: bytes[at])
            }
        }

        let rowBytes = ((width * bits + 31) / 32) * 4
        guard pixelOffset >= 14 + headerSize, pixelOffset <= bytes.count,
            rowBytes.multipliedReportingOverflow(by: height).partialValue <= bytes.count - pixelOffset
        else { throw fail("truncated BMP: \(bytes.count - min(pixelOffset, bytes.count)) bytes of pixels") }

        let channel = masks.map(Channel.init)
        var luma = [UInt8](repeating: 0, count: width * height)
        for row in 0..<height {
            let source = pixelOffset + row * rowBytes
            let target = (topDown ? row : height - 1 - row) * width
            for x in 0..<width {
                let value: UInt8
                switch bits {
                case 1, 4, 8:
                    let bit = x * bits
                    let index = Int(bytes[source + bit / 8] >> (8 - bits - bit % 8)) & ((1 << bits) - 1)
                    value = index < palette.count ? palette[index] : 0
                case 24:
                    let at = source + x * 3
                    value = GrayImage.luma(red: bytes[at + 2], green: bytes[at + 1], blue: bytes[at])
                default:
                    let word = bits == 16 ? UInt32(u16(source + x * 2)) : u32(source + x * 4)
                    value = GrayImage.luma(
                        red: channel[0].read(word), green: channel[1].read(word), blue: channel[2].read(word),
                        alpha: masks[3] == 0 ? 255 : channel[3].read(word))
                }
                luma[target + x] = value
            }
        }
        return GrayImage(width: width, height: height, pixels: luma)
    }

    /// One colour channel's bit field, scaled to 8 bits.
    struct Channel {
        let shift: UInt32
        let maximum: UInt64

        init(_ mask: UInt32) {
            shift = mask == 0 ? 0 : UInt32(mask.trailingZeroBitCount)
            maximum = UInt64(mask >> shift)
        }

        func read(_ word: UInt32) -> UInt8 {
            guard maximum > 0 else { return 0 }
            return UInt8((UInt64(word >> shift) & maximum) * 255 / maximum)
        }
    }
}
