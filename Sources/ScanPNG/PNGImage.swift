internal import CPNG
import ScanCore

/// PNG still images through libpng's simplified API: read as 8-bit luma (colour is turned into
/// luma, transparency laid over white, 16-bit reduced to 8), written as 8-bit greyscale.
public enum PNGImage {
    /// What went wrong, in libpng's words.
    public struct PNGError: Error, CustomStringConvertible, Equatable {
        public var reason: String
        public var description: String { reason }
    }

    /// The eight bytes every PNG file starts with.
    public static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    public static func isPNG(_ bytes: [UInt8]) -> Bool { bytes.starts(with: signature) }

    /// Decodes a whole PNG file held in memory. Images over `maxPixels` are refused before their
    /// pixels are allocated (a damaged or hostile header may claim any size).
    public static func decode(_ bytes: [UInt8], maxPixels: Int = 100_000_000) throws(PNGError) -> GrayImage {
        guard isPNG(bytes) else { throw PNGError(reason: "not a PNG image (no PNG signature)") }
        // libpng reads from the bytes until the image is finished: one borrow for both calls.
        let result = bytes.withUnsafeBytes { raw -> Result<GrayImage, PNGError> in
            var image = png_image()
            image.version = scantrack_png_image_version()
            guard png_image_begin_read_from_memory(&image, raw.baseAddress, raw.count) != 0 else {
                return .failure(PNGError(reason: "damaged PNG: \(message(of: &image))"))
            }
            let width = Int(image.width)
            let height = Int(image.height)
            guard width > 0, height > 0, width.multipliedReportingOverflow(by: height).partialValue <= maxPixels else {
                png_image_free(&image)
                return .failure(PNGError(reason: "PNG of \(width)x\(height) pixels is larger than \(maxPixels) pixels"))
            }
            image.format = scantrack_png_format_gray()
            var pixels = [UInt8](repeating: 0, count: width * height)
            var white = png_color(red: 255, green: 255, blue: 255)
            let finished = pixels.withUnsafeMutableBytes { buffer in
                png_image_finish_read(&image, &white, buffer.baseAddress, png_int_32(width), nil)
            }
            guard finished != 0 else { return .failure(PNGError(reason: "damaged PNG: \(message(of: &image))")) }
            return .success(GrayImage(width: width, height: height, pixels: pixels))
        }
        return try result.get()
    }

    /// Encodes an image as an 8-bit greyscale PNG.
    public static func encode(_ gray: GrayImage) throws(PNGError) -> [UInt8] {
        guard gray.width > 0, gray.height > 0 else { throw PNGError(reason: "an empty image has no PNG") }
        var image = png_image()
        image.version = scantrack_png_image_version()
        image.width = png_uint_32(gray.width)
        image.height = png_uint_32(gray.height)
        image.format = scantrack_png_format_gray()
        var size: png_alloc_size_t = 0
        // First the size, then the bytes.
        let sized = gray.pixels.withUnsafeBytes { pixels in
            png_image_write_to_memory(&image, nil, &size, 0, pixels.baseAddress, png_int_32(gray.width), nil)
        }
        guard sized != 0, size > 0 else { throw PNGError(reason: "PNG encoding failed: \(message(of: &image))") }
        var output = [UInt8](repeating: 0, count: Int(size))
        let written = output.withUnsafeMutableBytes { memory in
            gray.pixels.withUnsafeBytes { pixels in
                png_image_write_to_memory(
                    &image, memory.baseAddress, &size, 0, pixels.baseAddress, png_int_32(gray.width), nil)
            }
        }
        guard written != 0 else { throw PNGError(reason: "PNG encoding failed: \(message(of: &image))") }
        return Array(output.prefix(Int(size)))
    }

    private static func message(of image: inout png_image) -> String {
        withUnsafeBytes(of: &image.message) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return bytes.isEmpty ? "unknown libpng error" : String(decoding: bytes, as: UTF8.self)
        }
    }
}
