internal import CGIF
internal import CTIFF
internal import CWebP
import ScanCore

/// An image format read through a Debian library, decoded to 8-bit luma: colour through
/// `GrayImage.luma`, transparency laid over white. Each refuses an image over `maxPixels` from its
/// header, before its pixels are allocated, and a damaged file is an error, never a partial picture.
public struct ImageFormatError: Error, CustomStringConvertible, Equatable {
    public var reason: String
    public var description: String { reason }
    public init(_ reason: String) { self.reason = reason }

    static func tooLarge(_ format: String, _ width: Int, _ height: Int, _ maxPixels: Int) -> ImageFormatError {
        ImageFormatError("\(format) of \(width)x\(height) pixels is larger than \(maxPixels) pixels")
    }
}

/// WebP (lossy and lossless, with or without alpha; the first frame of an animation is not
/// read: libwebp's simple API refuses animations) through libwebp.
public enum WebPImage {
    public static func isWebP(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 12 && bytes.starts(with: Array("RIFF".utf8)) && Array(bytes[8..<12]) == Array("WEBP".utf8)
    }

    public static func decode(_ bytes: [UInt8], maxPixels: Int = 100_000_000) throws(ImageFormatError) -> GrayImage {
        let result = bytes.withUnsafeBufferPointer { input -> Result<GrayImage, ImageFormatError> in
            var width: Int32 = 0
            var height: Int32 = 0
            guard WebPGetInfo(input.baseAddress, input.count, &width, &height) != 0 else {
                return .failure(ImageFormatError("damaged WebP header (or an animated WebP, which is not read)"))
            }
            let w = Int(width)
            let h = Int(height)
            guard w > 0, h > 0, w * h <= maxPixels else { return .failure(.tooLarge("WebP", w, h, maxPixels)) }
            guard let rgba = WebPDecodeRGBA(input.baseAddress, input.count, &width, &height) else {
                return .failure(ImageFormatError("damaged WebP"))
            }
            defer { WebPFree(rgba) }
            return .success(RGBA.luma(rgba, width: w, height: h))
        }
        return try result.get()
    }
}

/// TIFF (any of libtiff's compressions, bit depths and photometric kinds it can turn into RGBA;
/// the first page) through libtiff, read from memory.
public enum TIFFImage {
    public static func isTIFF(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: [0x49, 0x49, 0x2A, 0x00]) || bytes.starts(with: [0x4D, 0x4D, 0x00, 0x2A])
            || bytes.starts(with: [0x49, 0x49, 0x2B, 0x00]) || bytes.starts(with: [0x4D, 0x4D, 0x00, 0x2B])
    }

    public static func decode(_ bytes: [UInt8], maxPixels: Int = 100_000_000) throws(ImageFormatError) -> GrayImage {
        let result = bytes.withUnsafeBufferPointer { input -> Result<GrayImage, ImageFormatError> in
            var memory = scantrack_tiff_memory(data: input.baseAddress, size: UInt64(input.count), position: 0)
            return withUnsafeMutablePointer(to: &memory) { memory in
                guard let tiff = scantrack_tiff_open(memory) else {
                    return .failure(ImageFormatError("damaged TIFF header"))
                }
                defer { TIFFClose(tiff) }
                var width: UInt32 = 0
                var height: UInt32 = 0
                guard scantrack_tiff_dimensions(tiff, &width, &height) != 0 else {
                    return .failure(ImageFormatError("damaged TIFF: no image size"))
                }
                let w = Int(width)
                let h = Int(height)
                guard w > 0, h > 0, w.multipliedReportingOverflow(by: h).partialValue <= maxPixels else {
                    return .failure(.tooLarge("TIFF", w, h, maxPixels))
                }
                // ABGR words: in memory R, G, B, A on a little-endian machine, as RGBA.luma reads.
                var raster = [UInt32](repeating: 0, count: w * h)
                let read = raster.withUnsafeMutableBufferPointer {
                    TIFFReadRGBAImageOriented(tiff, width, height, $0.baseAddress, Int32(ORIENTATION_TOPLEFT), 0)
                }
                guard read == 1 else {
                    return .failure(ImageFormatError("damaged TIFF (or a kind libtiff cannot turn into colour)"))
                }
                let pixels = raster.map { word in
                    GrayImage.luma(
                        red: UInt8(word & 0xFF), green: UInt8(word >> 8 & 0xFF), blue: UInt8(word >> 16 & 0xFF),
                        alpha: UInt8(word >> 24))
                }
                return .success(GrayImage(width: w, height: h, pixels: pixels))
            }
        }
        return try result.get()
    }
}

/// GIF (87a and 89a, interlaced or not, a transparent colour laid over white; the first image)
/// through giflib's low-level API, reading only as far as that image.
public enum GIFImage {
    public static func isGIF(_ bytes: [UInt8]) -> Bool { bytes.starts(with: Array("GIF8".utf8)) }

    /// The bytes giflib reads, and how far it has read.
    private final class Source {
        let bytes: [UInt8]
        var position = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }
    }

    public static func decode(_ bytes: [UInt8], maxPixels: Int = 100_000_000) throws(ImageFormatError) -> GrayImage {
        let source = Source(bytes)
        var error: Int32 = 0
        let reader: InputFunc = { gif, buffer, count in
            guard let gif, let buffer, count > 0, let user = gif.pointee.UserData else { return 0 }
            let source = Unmanaged<Source>.fromOpaque(user).takeUnretainedValue()
            let n = min(Int(count), source.bytes.count - source.position)
            guard n > 0 else { return 0 }
            source.bytes.withUnsafeBufferPointer {
                guard let base = $0.baseAddress else { return }
                buffer.update(from: base + source.position, count: n)
            }
            source.position += n
            return Int32(n)
        }
        let context = Unmanaged.passUnretained(source).toOpaque()
        guard let gif = DGifOpen(context, reader, &error) else {
            throw ImageFormatError("damaged GIF header (\(String(cString: GifErrorString(error))))")
        }
        defer {
            var closing: Int32 = 0
            DGifCloseFile(gif, &closing)
            withExtendedLifetime(source) {}
        }
        func failure(_ what: String) -> ImageFormatError {
            ImageFormatError("\(what) (\(String(cString: GifErrorString(gif.pointee.Error))))")
        }
        var transparent: Int?
        while true {
            var record = UNDEFINED_RECORD_TYPE
            guard DGifGetRecordType(gif, &record) == GIF_OK else { throw failure("damaged GIF") }
            switch record {
            case IMAGE_DESC_RECORD_TYPE:
                guard DGifGetImageDesc(gif) == GIF_OK else { throw failure("damaged GIF image") }
                return try firstImage(gif, transparent: transparent, maxPixels: maxPixels)
            case EXTENSION_RECORD_TYPE:
                var code: Int32 = 0
                var block: UnsafeMutablePointer<GifByteType>?
                guard DGifGetExtension(gif, &code, &block) == GIF_OK else { throw failure("damaged GIF extension") }
                // A graphics control block: length 4, flags (bit 0: a transparent colour), delay, index.
                if code == GRAPHICS_EXT_FUNC_CODE, let block, block[0] >= 4, block[1] & 1 == 1 {
                    transparent = Int(block[4])
                }
                while block != nil {
                    guard DGifGetExtensionNext(gif, &block) == GIF_OK else { throw failure("damaged GIF extension") }
                }
            case TERMINATE_RECORD_TYPE: throw ImageFormatError("GIF without an image")
            default: throw failure("damaged GIF")
            }
        }
    }

    private static func firstImage(
        _ gif: UnsafeMutablePointer<GifFileType>, transparent: Int?, maxPixels: Int
    ) throws(ImageFormatError) -> GrayImage {
        let description = gif.pointee.Image
        let w = Int(description.Width)
        let h = Int(description.Height)
        guard w > 0, h > 0, w * h <= maxPixels else { throw .tooLarge("GIF", w, h, maxPixels) }
        guard let map = description.ColorMap ?? gif.pointee.SColorMap, let colours = map.pointee.Colors else {
            throw ImageFormatError("GIF without a colour map")
        }
        let palette = (0..<Int(map.pointee.ColorCount)).map { index in
            index == transparent
                ? 255 : GrayImage.luma(red: colours[index].Red, green: colours[index].Green, blue: colours[index].Blue)
        }
        // Interlaced: every 8th row from 0, every 8th from 4, every 4th from 2, every 2nd from 1.
        let rows: [Int] =
            description.Interlace
            ? [(0, 8), (4, 8), (2, 4), (1, 2)].flatMap { start, step in Array(stride(from: start, to: h, by: step)) }
            : Array(0..<h)
        var indices = [UInt8](repeating: 0, count: w * h)
        for row in rows {
            let status = indices.withUnsafeMutableBufferPointer { pixels -> Int32 in
                guard let base = pixels.baseAddress else { return GIF_ERROR }
                return DGifGetLine(gif, base + row * w, Int32(w))
            }
            guard status == GIF_OK else {
                throw ImageFormatError("damaged GIF pixels (\(String(cString: GifErrorString(gif.pointee.Error))))")
            }
        }
        return GrayImage(width: w, height: h, pixels: indices.map { Int($0) < palette.count ? palette[Int($0)] : 0 })
    }
}

/// Interleaved 8-bit RGBA to luma.
enum RGBA {
    static func luma(_ rgba: UnsafePointer<UInt8>, width: Int, height: Int) -> GrayImage {
        var pixels = [UInt8](repeating: 0, count: width * height)
        for index in 0..<width * height {
            let at = index * 4
            pixels[index] = GrayImage.luma(red: rgba[at], green: rgba[at + 1], blue: rgba[at + 2], alpha: rgba[at + 3])
        }
        return GrayImage(width: width, height: height, pixels: pixels)
    }
}
