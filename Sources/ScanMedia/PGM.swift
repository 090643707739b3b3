import ScanCore

/// Netpbm images, 8-bit: grey (P5) and colour (P6, turned into luma): the still-image formats the
/// decoder tests and `scan-agent decode` read.
public enum PGM {
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
        public init(reason: String) { self.reason = reason }
    }

    public static func parse(_ bytes: [UInt8]) throws(ParseError) -> GrayImage {
        var index = 0
        func skipSpaceAndComments() {
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: "#") {
                    while index < bytes.count && bytes[index] != 0x0A { index += 1 }
                } else if bytes[index] == 0x20 || (0x09...0x0D).contains(bytes[index]) {
                    index += 1
                } else {
                    return
                }
            }
        }
        func number(_ name: String) throws(ParseError) -> Int {
            skipSpaceAndComments()
            var value = 0
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                guard value < 1 << 20 else { throw ParseError(reason: "\(name) is too large") }
                index += 1
            }
            guard index > start else { throw ParseError(reason: "missing \(name) in the header") }
            return value
        }
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "P"),
            bytes[1] == UInt8(ascii: "5") || bytes[1] == UInt8(ascii: "6")
        else {
            throw ParseError(reason: "not a binary PGM (P5) or PPM (P6) image")
        }
        let channels = bytes[1] == UInt8(ascii: "6") ? 3 : 1
        index = 2
        let width = try number("width")
        let height = try number("height")
        let maxValue = try number("maximum value")
        guard maxValue == 255 else {
            throw ParseError(reason: "only 8-bit PGM is supported (maximum value \(maxValue))")
        }
        guard width > 0, height > 0 else { throw ParseError(reason: "empty image (\(width)x\(height))") }
        index += 1  // the single whitespace byte after the header
        let count = width * height * channels
        guard bytes.count - index >= count else {
            throw ParseError(reason: "truncated: \(bytes.count - index) of \(count) pixel bytes")
        }
        guard channels == 3 else {
            return GrayImage(width: width, height: height, pixels: Array(bytes[index..<index + count]))
        }
        var luma = [UInt8](repeating: 0, count: width * height)
        for pixel in 0..<width * height {
            let base = index + pixel * 3
            luma[pixel] = GrayImage.luma(red: bytes[base], green: bytes[base + 1], blue: bytes[base + 2])
        }
        return GrayImage(width: width, height: height, pixels: luma)
    }

    public static func encode(_ image: GrayImage) -> [UInt8] {
        Array("P5\n\(image.width) \(image.height)\n255\n".utf8) + image.pixels
    }
}
