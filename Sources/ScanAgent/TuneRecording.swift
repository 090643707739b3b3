import Foundation
import Logging
import ScanAgentRuntime
import ScanCore
import ScanRTSP
import ScanServices
import ScanV4L2
import ScanAgentConfig
import ScanMedia

/// `scan-agent tune --camera ID --seconds N`: records what a camera sees into a YUV4MPEG2 clip,
/// which `tune` then measures like any recording.
struct TuneRecording {
    /// The camera as `source` config keys and as a frame source.
    struct Camera {
        var source: JSONWriter
        var frames: any FrameSource
    }

    /// A GenICam id, a V4L2 device (`/dev/videoN`) or an RTSP URL, opened with the camera's own
    /// settings (what tune measures is what the camera does now).
    static func camera(_ id: String, logger: Logger) throws -> Camera {
        var source = JSONWriter()
        let clock = SystemClock()
        if id.lowercased().hasPrefix("rtsp") {
            let address: RTSPAddress
            do {
                address = try RTSPAddress(id)
            } catch {
                throw TuneFailure("--camera \(TerminalText.escaped(id)): \(error)")
            }
            source.field("type", "rtsp")
            source.field("url", address.redacted)
            return Camera(
                source: source,
                frames: RTSPSource(
                    address: address, url: nil, transport: .tcp, policy: RTSPGuardPolicy(), clock: clock,
                    logger: logger))
        }
        if id.hasPrefix("/dev/") {
            source.field("type", "v4l2")
            source.field("device", id)
            return Camera(
                source: source,
                frames: CameraSource(
                    request: CaptureRequest(device: id, width: 1280, height: 720, fps: 30), clock: clock,
                    logger: logger))
        }
        source.field("type", "genicam")
        source.field("camera", id)
        return Camera(
            source: source,
            frames: GenICamSource(camera: id, controls: CameraControls(), clock: clock, logger: logger))
    }

    /// Takes `seconds` of frames from `camera` into `path`; returns the frames written. The clip's
    /// frame rate is the one measured; a frame of another size (the camera reconfigured) ends it.
    /// Frames go to disk as they come (beside `path`, then behind the header once the rate is
    /// known), so a long recording of a large sensor holds one frame in memory, not all of them.
    static func record(_ camera: Camera, seconds: Double, to path: String, logger: Logger) throws -> Int {
        let body = path + ".frames"
        guard FileManager.default.createFile(atPath: path, contents: nil),
            FileManager.default.createFile(atPath: body, contents: nil),
            let file = FileHandle(forWritingAtPath: path), let frameFile = FileHandle(forWritingAtPath: body)
        else { throw TuneFailure("cannot write the recording \(TerminalText.escaped(path))") }
        defer {
            try? file.close()
            try? frameFile.close()
            try? FileManager.default.removeItem(atPath: body)
        }
        let queue = FrameQueue(capacity: 256, blocking: false)
        let stop = StopToken()
        let done = DispatchSemaphore(value: 0)
        let source = camera.frames
        Thread.detachNewThread {
            source.capture(into: queue, stop: stop)
            done.signal()
        }
        defer {
            stop.stop()
            queue.stopProducing()
            done.wait()
        }
        var count = 0
        var size: (width: Int, height: Int)?
        var first: ContinuousClock.Instant?
        var last = ContinuousClock.now
        let length = Duration.milliseconds(Int64(seconds * 1000))
        let deadline = ContinuousClock.now + length + .seconds(10)
        while ContinuousClock.now < deadline {
            if let first, ContinuousClock.now - first >= length { break }
            guard case .frame(let frame) = queue.take(timeout: .milliseconds(200)) else { continue }
            if let size, size.width != frame.image.width || size.height != frame.image.height {
                logger.warning("the camera changed its frame size; the recording ends here")
                break
            }
            if first == nil { first = ContinuousClock.now }
            size = (frame.image.width, frame.image.height)
            last = ContinuousClock.now
            frameFile.write(Data("FRAME\n".utf8))
            frameFile.write(frame.image.pixels.withUnsafeBufferPointer { Data(buffer: $0) })
            count += 1
        }
        guard let size, let first, count > 1 else {
            throw TuneFailure("the camera sent \(count) frame(s) in \(seconds) s; is it streaming?")
        }
        let elapsed = (last - first).seconds
        let rate = max(1, Int((Double(count - 1) / max(elapsed, 0.001) * 1000).rounded()))
        let header = Y4MHeader(
            width: size.width, height: size.height, frameRateNumerator: rate, frameRateDenominator: 1000, chroma: .mono)
        file.write(Data(header.line.utf8))
        try? frameFile.close()
        guard let frames = FileHandle(forReadingAtPath: body) else {
            throw TuneFailure("cannot read back the recording's frames \(TerminalText.escaped(body))")
        }
        defer { try? frames.close() }
        while true {
            let chunk = frames.readData(ofLength: 4 << 20)
            if chunk.isEmpty { break }
            file.write(chunk)
        }
        if queue.dropped > 0 {
            logger.warning("frames dropped while recording", metadata: ["frames": .stringConvertible(queue.dropped)])
        }
        return count
    }
}

struct TuneFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
