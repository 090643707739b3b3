internal import CTurboJPEG
import ScanCore

/// JPEG still images (a photo of a label) through libjpeg-turbo's TurboJPEG API, decoded straight
/// to 8-bit luma. TurboJPEG reports errors as return values (no longjmp through Swift frames).
public enum JPEGImage {
    public struct JPEGError: Error, CustomStringConvertible, Equatable {
        public var reason: String
        public var description: String { reason }
    }

    /// Every JPEG file starts with a start-of-image marker followed by another marker.
    public static func isJPEG(_ bytes: [UInt8]) -> Bool { bytes.starts(with: [0xFF, 0xD8, 0xFF]) }

    /// Decodes a whole JPEG file held in memory. Images over `maxPixels` are refused from their
    /// header, before their pixels are allocated; a damaged file is an error (with libjpeg-turbo's
    /// words), never a partial picture.
    public static func decode(_ bytes: [UInt8], maxPixels: Int = 100_000_000) throws(JPEGError) -> GrayImage {
        guard isJPEG(bytes) else { throw JPEGError(reason: "not a JPEG image (no start-of-image marker)") }
        guard let handle = tjInitDecompress() else { throw JPEGError(reason: "cannot start the JPEG decoder") }
        defer { tjDestroy(handle) }
        func failure(_ what: String) -> JPEGError {
            JPEGError(reason: "\(what): \(String(cString: tjGetErrorStr2(handle)))")
        }
        let result = bytes.withUnsafeBufferPointer { input -> Result<GrayImage, JPEGError> in
            var width: Int32 = 0
            var height: Int32 = 0
            var subsampling: Int32 = 0
            var colorspace: Int32 = 0
            guard
                tjDecompressHeader3(
                    handle, input.baseAddress, UInt(input.count), &width, &height, &subsampling, &colorspace) == 0
            else { return .failure(failure("damaged JPEG header")) }
            let w = Int(width)
            let h = Int(height)
            guard w > 0, h > 0, w.multipliedReportingOverflow(by: h).partialValue <= maxPixels else {
                return .failure(JPEGError(reason: "JPEG of \(w)x\(h) pixels is larger than \(maxPixels) pixels"))
            }
            var pixels = [UInt8](repeating: 0, count: w * h)
            let status = pixels.withUnsafeMutableBufferPointer { output in
                tjDecompress2(
                    handle, input.baseAddress, UInt(input.count), output.baseAddress, width, width, height,
                    Int32(TJPF_GRAY.rawValue), Int32(TJFLAG_ACCURATEDCT | TJFLAG_STOPONWARNING))
            }
            guard status == 0 else { return .failure(failure("damaged JPEG")) }
            return .success(GrayImage(width: w, height: h, pixels: pixels))
        }
        return try result.get()
    }

    /// An RGB picture as a baseline JPEG (4:2:0) of `quality` 1–100.
    public static func encode(_ image: RGBImage, quality: Int = 80) throws(JPEGError) -> [UInt8] {
        try compress(
            image.pixels, width: image.width, height: image.height, channels: 3, format: TJPF_RGB,
            sampling: TJSAMP_420, quality: quality)
    }

    /// A grey picture as a one-channel baseline JPEG of `quality` 1–100 (a parcel's picture:
    /// a third of the work and bytes of the same picture in colour).
    public static func encode(_ image: GrayImage, quality: Int = 80) throws(JPEGError) -> [UInt8] {
        try compress(
            image.pixels, width: image.width, height: image.height, channels: 1, format: TJPF_GRAY,
            sampling: TJSAMP_GRAY, quality: quality)
    }

    private static func compress(
        _ pixels: [UInt8], width: Int, height: Int, channels: Int, format: TJPF, sampling: TJSAMP, quality: Int
    ) throws(JPEGError) -> [UInt8] {
        guard width > 0, height > 0 else { throw JPEGError(reason: "an empty picture has no JPEG") }
        guard let handle = tjInitCompress() else { throw JPEGError(reason: "cannot start the JPEG encoder") }
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        defer { if let output { tjFree(output) } }
        let status = pixels.withUnsafeBufferPointer { input in
            tjCompress2(
                handle, input.baseAddress, Int32(width), Int32(width * channels), Int32(height),
                Int32(format.rawValue), &output, &size, Int32(sampling.rawValue), Int32(min(100, max(1, quality))),
                Int32(TJFLAG_ACCURATEDCT))
        }
        guard status == 0, let output else {
            throw JPEGError(reason: "cannot encode the JPEG: \(String(cString: tjGetErrorStr2(handle)))")
        }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }

    /// A JPEG decoded to RGB (what a browser shows of a preview; tests read its colours).
    public static func decodeRGB(_ bytes: [UInt8], maxPixels: Int = 100_000_000) throws(JPEGError) -> RGBImage {
        guard isJPEG(bytes) else { throw JPEGError(reason: "not a JPEG image (no start-of-image marker)") }
        guard let handle = tjInitDecompress() else { throw JPEGError(reason: "cannot start the JPEG decoder") }
        defer { tjDestroy(handle) }
        let result = bytes.withUnsafeBufferPointer { input -> Result<RGBImage, JPEGError> in
            var (width, height, subsampling, colorspace): (Int32, Int32, Int32, Int32) = (0, 0, 0, 0)
            guard
                tjDecompressHeader3(
                    handle, input.baseAddress, UInt(input.count), &width, &height, &subsampling, &colorspace) == 0,
                width > 0, height > 0, Int(width) * Int(height) <= maxPixels
            else { return .failure(JPEGError(reason: "damaged or too large JPEG header")) }
            var pixels = [UInt8](repeating: 0, count: Int(width) * Int(height) * 3)
            let status = pixels.withUnsafeMutableBufferPointer { output in
                tjDecompress2(
                    handle, input.baseAddress, UInt(input.count), output.baseAddress, width, width * 3, height,
                    Int32(TJPF_RGB.rawValue), Int32(TJFLAG_ACCURATEDCT))
            }
            guard status == 0 else { return .failure(JPEGError(reason: "damaged JPEG")) }
            return .success(RGBImage(width: Int(width), height: Int(height), pixels: pixels))
        }
        return try result.get()
    }
}
