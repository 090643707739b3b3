import ScanTestSupport
import ScanTestTiming
import Testing

@testable import ScanV4L2

@Suite("V4L2 device errors", .timed)
struct V4L2DeviceTests {
    @Test("opening a missing device names the path and the reason")
    func missingDevice() {
        let path = "/dev/video-scantrack-missing-\(UInt32.random(in: 0...UInt32.max))"
        do {
            _ = try V4L2Device(path: path)
            Issue.record("opening \(path) succeeded")
        } catch {
            #expect(error.code == .cannotOpen)
            #expect(error.description.contains(path))
            #expect(error.description.contains("No such file or directory"))
        }
    }

    @Test("a file that is not a camera is refused, naming the device and the reason")
    func notACamera() {
        // libv4l2 queries the capabilities inside v4l2_open, so the failure may come from either call.
        do {
            let device = try V4L2Device(path: "/dev/null")
            _ = try device.capabilities()
            Issue.record("/dev/null answered VIDIOC_QUERYCAP")
        } catch {
            #expect(error.code == .cannotOpen || error.code == .ioctlFailed)
            #expect(error.description.contains("/dev/null"))
            #expect(error.description.contains("Inappropriate ioctl for device"))
        }
    }
}
