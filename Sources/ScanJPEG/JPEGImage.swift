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
}
