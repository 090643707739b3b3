internal import CAravis
import Foundation
import ScanCore
import Synchronization

/// A GigE Vision camera on the network that shows a recorded clip: Aravis's fake GigE Vision
/// camera (real GVCP and GVSP over UDP) on an address of this machine, whose frames are the
/// clip's, one a frame period, then blank (white) frames once the clip has been shown. For tests
/// and demonstrations of the `genicam` source; agents never link it (scan-fake-camera does).
public final class ClipCamera {
    private let gvCamera: OpaquePointer
    private let painter: Painter

    /// Frames of the clip shown so far (a frame past the end counts too).
    public var framesShown: Int { painter.shown.withLock { $0 } }

    /// `address`: where it listens (127.0.0.1 for tests); `serial`: its serial number (its
    /// Aravis id is then `Aravis-<serial>`); `framesPerSecond`: its default frame rate.
    /// `lostRatio`: the share of GVSP packets it leaves out (0…1), a lossy network for tests.
    /// `loop`: show the clip again and again (measurements) instead of once.
    public init(
        clip: [GrayImage], address: String, serial: String, framesPerSecond: Double, lostRatio: Double = 0,
        loop: Bool = false
    ) throws(GenICamError) {
        guard let first = clip.first else {
            throw GenICamError(function: "clip camera", input: serial, message: "the clip has no frame")
        }
        painter = Painter(frames: clip, payload: first.width * first.height, loop: loop)
        guard let made = arv_gv_fake_camera_new(address, serial) else {
            throw GenICamError(function: "arv_gv_fake_camera_new", input: "\(address) \(serial)", message: "not made")
        }
        gvCamera = made
        guard arv_gv_fake_camera_is_running(gvCamera) != 0 else {
            scantrack_arv_unref(UnsafeMutableRawPointer(gvCamera))
            throw GenICamError(
                function: "arv_gv_fake_camera_new", input: "\(address) \(serial)",
                message: "not running (the address is not this machine's, or GVCP's port 3956 is taken)")
        }
        if lostRatio > 0 { scantrack_arv_fake_set_lost_ratio(gvCamera, min(1, lostRatio)) }
        let fake = arv_gv_fake_camera_get_fake_camera(gvCamera)
        for (register, value) in [
            (scantrack_arv_fake_sensor_width, first.width), (scantrack_arv_fake_sensor_height, first.height),
            (scantrack_arv_fake_width, first.width), (scantrack_arv_fake_height, first.height),
            (scantrack_arv_fake_frame_period_us, Int(1_000_000 / max(1, framesPerSecond))),
        ] {
            arv_fake_camera_write_register(fake, register, UInt32(value))
        }
        arv_fake_camera_set_fill_pattern(
            fake,
            { buffer, data, _, _, _ in
                guard let buffer, let data else { return }
                Unmanaged<Painter>.fromOpaque(data).takeUnretainedValue().paint(buffer)
            }, Unmanaged.passUnretained(painter).toOpaque())
    }

    deinit { scantrack_arv_unref(UnsafeMutableRawPointer(gvCamera)) }

    /// Paints the next frame of the clip into each buffer the fake camera sends.
    final class Painter: Sendable {
        let frames: [GrayImage]
        /// Bytes a buffer holds: the clip's frame (Mono8, the camera's full size).
        let payload: Int
        let loop: Bool
        let shown = Mutex(0)

        init(frames: [GrayImage], payload: Int, loop: Bool) {
            self.frames = frames
            self.payload = payload
            self.loop = loop
        }

        func paint(_ buffer: OpaquePointer) {
            let index = shown.withLock { count in
                defer { count += 1 }
                return loop ? count % frames.count : count
            }
            guard let bytes = scantrack_arv_buffer_bytes(buffer) else { return }
            let frame = index < frames.count ? frames[index] : frames[0]
            // The camera's region: the clip's size unless a client set a smaller one (then its top left).
            let width = max(1, Int(arv_buffer_get_image_width(buffer)))
            let height = Int(arv_buffer_get_image_height(buffer))
            let size = min(payload, width * height)
            let target = bytes.bindMemory(to: UInt8.self, capacity: size)
            guard index < frames.count else {
                target.update(repeating: 255, count: size)  // the clip has been shown: blank frames
                return
            }
            // The camera's region may be smaller than the clip (a region of interest): its top left.
            frame.pixels.withUnsafeBufferPointer { pixels in
                guard let source = pixels.baseAddress else { return }
                for row in 0..<min(height, frame.height) where (row + 1) * width <= size {
                    (target + row * width).update(from: source + row * frame.width, count: min(width, frame.width))
                }
            }
        }
    }
}
