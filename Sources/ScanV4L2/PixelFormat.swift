import ScanCore

/// The pixel formats the agent can turn into luma, in the order it asks for them. Luma is all
/// zbar reads, so a format that carries it plainly wins: GREY costs a copy, packed YUV a stride-2
/// copy, planar YUV a copy of the first plane; RGB (which libv4l2 offers for any camera, converting
/// MJPEG and Bayer in software) costs a weighted sum per pixel and libv4l2's conversion before it.
public enum PixelFormat: UInt32, Sendable, CaseIterable, CustomStringConvertible {
    case grey = 0x5945_5247  // 'GREY'
    case yuyv = 0x5659_5559  // 'YUYV'
    case uyvy = 0x5956_5955  // 'UYVY'
    case yuv420 = 0x3231_5559  // 'YU12'
    case nv12 = 0x3231_564E  // 'NV12'
    case rgb24 = 0x3342_4752  // 'RGB3'
    case bgr24 = 0x3352_4742  // 'BGR3'

    /// Most preferred first.
    public static let preference: [PixelFormat] = [.grey, .yuyv, .uyvy, .yuv420, .nv12, .rgb24, .bgr24]

    /// The FourCC as text (`YUYV`), also for codes we do not know.
    public static func fourCC(_ code: UInt32) -> String {
        String(decoding: (0..<4).map { UInt8((code >> (8 * $0)) & 0xFF) }, as: UTF8.self)
    }

    public var description: String { Self.fourCC(rawValue) }

    /// The best format among those a device offers, or nil when none can become luma.
    public static func choose(offered: [UInt32]) -> PixelFormat? {
        preference.first { offered.contains($0.rawValue) }
    }

    /// Copies the luma of one frame into `image` (packed rows). `bytesPerLine` is the driver's
    /// stride of the first plane. False when the buffer is shorter than the format needs.
    public func extractLuma(from buffer: UnsafeRawBufferPointer, bytesPerLine: Int, into image: inout GrayImage) -> Bool
    {
        let width = image.width
        let height = image.height
        let minimumStride: Int
        switch self {
        case .grey, .yuv420, .nv12: minimumStride = width
        case .yuyv, .uyvy: minimumStride = width * 2
        case .rgb24, .bgr24: minimumStride = width * 3
        }
        let stride = max(bytesPerLine, minimumStride)
        guard buffer.count >= stride * (height - 1) + minimumStride else { return false }
        let source = buffer.bindMemory(to: UInt8.self)
        image.pixels.withUnsafeMutableBufferPointer { target in
            for y in 0..<height {
                let row = y * stride
                let out = y * width
                switch self {
                case .grey, .yuv420, .nv12:
                    for x in 0..<width { target[out + x] = source[row + x] }
                case .yuyv:
                    for x in 0..<width { target[out + x] = source[row + 2 * x] }
                case .uyvy:
                    for x in 0..<width { target[out + x] = source[row + 2 * x + 1] }
                case .rgb24, .bgr24:
                    let (r, b) = self == .rgb24 ? (0, 2) : (2, 0)
                    for x in 0..<width {
                        let p = row + 3 * x
                        // BT.601 luma in integers: (77 R + 150 G + 29 B) / 256.
                        let sum = 77 * Int(source[p + r]) + 150 * Int(source[p + 1]) + 29 * Int(source[p + b])
                        target[out + x] = UInt8(sum >> 8)
                    }
                }
            }
        }
        return true
    }
}
