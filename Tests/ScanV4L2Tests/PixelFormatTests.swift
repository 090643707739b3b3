import ScanCore
import ScanTestSupport
import ScanTestTiming
import Testing

@testable import ScanV4L2

@Suite("V4L2 format negotiation and luma extraction", .timed)
struct PixelFormatTests {
    static func fourCC(_ text: String) -> UInt32 {
        text.utf8.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
    }

    @Test("the FourCC codes are the kernel's")
    func codes() {
        #expect(PixelFormat.grey.rawValue == Self.fourCC("GREY"))
        #expect(PixelFormat.yuyv.rawValue == Self.fourCC("YUYV"))
        #expect(PixelFormat.yuv420.rawValue == Self.fourCC("YU12"))
        #expect(PixelFormat.rgb24.rawValue == Self.fourCC("RGB3"))
        #expect(PixelFormat.fourCC(Self.fourCC("MJPG")) == "MJPG")
    }

    @Test("the cheapest luma wins; formats we cannot read are passed over")
    func choice() {
        #expect(PixelFormat.choose(offered: [Self.fourCC("MJPG"), Self.fourCC("YUYV"), Self.fourCC("GREY")]) == .grey)
        #expect(PixelFormat.choose(offered: [Self.fourCC("MJPG"), Self.fourCC("RGB3"), Self.fourCC("YUYV")]) == .yuyv)
        // What libv4l2 adds for an MJPEG-only camera: its software conversions.
        #expect(
            PixelFormat.choose(offered: [
                Self.fourCC("MJPG"), Self.fourCC("RGB3"), Self.fourCC("BGR3"), Self.fourCC("YU12"),
            ]) == .yuv420)
        #expect(PixelFormat.choose(offered: [Self.fourCC("MJPG"), Self.fourCC("H264")]) == nil)
    }

    @Test("luma from each format, honouring the driver's line stride")
    func extraction() {
        let width = 3
        let height = 2
        let expected: [UInt8] = [10, 20, 30, 40, 50, 60]
        var image = GrayImage(width: width, height: height, fill: 0)
        // GREY with 2 bytes of padding per line.
        let grey: [UInt8] = [10, 20, 30, 0, 0, 40, 50, 60, 0, 0]
        #expect(grey.withUnsafeBytes { PixelFormat.grey.extractLuma(from: $0, bytesPerLine: 5, into: &image) })
        #expect(image.pixels == expected)
        // YUYV: Y0 U Y1 V.
        image = GrayImage(width: width, height: height, fill: 0)
        let yuyv: [UInt8] = [10, 128, 20, 128, 30, 128, 40, 128, 50, 128, 60, 128]
        #expect(yuyv.withUnsafeBytes { PixelFormat.yuyv.extractLuma(from: $0, bytesPerLine: 6, into: &image) })
        #expect(image.pixels == expected)
        // UYVY: U Y0 V Y1.
        image = GrayImage(width: width, height: height, fill: 0)
        let uyvy: [UInt8] = [128, 10, 128, 20, 128, 30, 128, 40, 128, 50, 128, 60]
        #expect(uyvy.withUnsafeBytes { PixelFormat.uyvy.extractLuma(from: $0, bytesPerLine: 0, into: &image) })
        #expect(image.pixels == expected)
        // RGB: white, black and a pure green.
        var rgbImage = GrayImage(width: 3, height: 1, fill: 0)
        let rgb: [UInt8] = [255, 255, 255, 0, 0, 0, 0, 255, 0]
        #expect(rgb.withUnsafeBytes { PixelFormat.rgb24.extractLuma(from: $0, bytesPerLine: 9, into: &rgbImage) })
        #expect(rgbImage.pixels[0] >= 254)
        #expect(rgbImage.pixels[1] == 0)
        #expect(rgbImage.pixels[2] == UInt8((150 * 255) >> 8))
    }

    @Test("a buffer shorter than the format needs is refused, not read past")
    func shortBuffer() {
        var image = GrayImage(width: 4, height: 4, fill: 7)
        let short = [UInt8](repeating: 1, count: 10)
        #expect(!short.withUnsafeBytes { PixelFormat.yuyv.extractLuma(from: $0, bytesPerLine: 8, into: &image) })
        #expect(image.pixels.allSatisfy { $0 == 7 })
    }

    @Test("capture on a missing device or a non-camera fails naming the device")
    func captureErrors() {
        for path in ["/dev/video-scantrack-missing", "/dev/null"] {
            do {
                _ = try V4L2Capture(CaptureRequest(device: path, width: 640, height: 480, fps: 30))
                Issue.record("\(path) opened as a camera")
            } catch {
                #expect(error.description.contains(path))
            }
        }
    }
}
