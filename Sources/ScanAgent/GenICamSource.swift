import Foundation
import Logging
import ScanAgentRuntime
import ScanCore
import ScanGenICam
import ScanServices
import Synchronization

/// A GenICam camera (GigE Vision, USB3 Vision) through Aravis, reopened when it goes away (a
/// cable pulled, the camera rebooted): state `reconnecting` while it is missing or failing, one log
/// line per distinct error, a retry every second with the controls applied again. Frames the
/// camera delivered incomplete (GVSP packets lost) are counted, logged and never decoded.
final class GenICamSource: FrameSource, @unchecked Sendable {
    // @unchecked: the camera and stream live on the capture thread only; the counters and the
    // state word are thread-safe.
    let kind = "genicam"
    let blocking = false
    let cameraId: String?
    let controls: CameraControls
    let clock: any AgentClock
    let logger: Logger
    private let stateWord = SourceState()
    private let counters = Counters()
    var state: String { stateWord.current }
    /// Frames delivered incomplete since the start, over every connection.
    var health: SourceHealth {
        SourceHealth(
            incompleteFrames: counters.incomplete.withLock { $0 }, reconnects: counters.reconnects.withLock { $0 },
            controls: counters.controls.withLock { $0 })
    }

    final class Counters: Sendable {
        let incomplete = Mutex(0)
        let reconnects = Mutex(0)
        let controls = Mutex<[AgentStatus.SourceControl]>([])
    }

    init(camera: String?, controls: CameraControls, clock: any AgentClock, logger: Logger) {
        self.cameraId = camera
        self.controls = controls
        self.clock = clock
        self.logger = logger
    }

    /// Opens the camera, applies the controls (logging what it took) and starts its stream.
    func open() throws(GenICamError) -> (GenICamCamera, GenICamStream) {
        let camera = try GenICamCamera(id: cameraId)
        let (taken, warnings) = try camera.apply(controls)
        for warning in warnings { logger.warning("control clamped", metadata: ["control": "\(warning)"]) }
        counters.controls.withLock { $0 = taken.map { AgentStatus.SourceControl(name: $0.name, value: $0.value) } }
        logger.info(
            "camera controls",
            metadata: Dictionary(uniqueKeysWithValues: taken.map { ($0.name, Logger.MetadataValue.string($0.value)) }))
        return (camera, try GenICamStream(camera: camera))
    }

    func capture(into queue: FrameQueue, stop: StopToken) {
        defer { stateWord.set("ended") }
        var index = 0
        var lastError = ""
        var connections = 0
        while !stop.isStopped {
            let camera: GenICamCamera
            let stream: GenICamStream
            do {
                (camera, stream) = try open()
            } catch {
                stateWord.set("reconnecting")
                if error.description != lastError {
                    logger.error("camera unavailable; retrying every second", metadata: ["error": "\(error)"])
                    lastError = error.description
                }
                stop.sleep(for: .seconds(1))
                continue
            }
            connections += 1
            if connections > 1 {
                counters.reconnects.withLock { $0 += 1 }
                logger.info("camera back", metadata: ["reconnects": "\(connections - 1)"])
            }
            logger.info(
                "camera streaming",
                metadata: [
                    "camera": "\(camera.vendor) \(camera.model) \(camera.serial)", "connection": "\(connections)",
                ])
            lastError = ""
            stateWord.set("streaming")
            var quiet = 0
            var seenIncomplete = 0
            while !stop.isStopped {
                let frame: GenICamStream.Frame?
                do {
                    frame = try stream.next(timeoutMicroseconds: 1_000_000)
                } catch {
                    logger.error("camera failed; reopening", metadata: ["error": "\(error)"])
                    lastError = error.description
                    break
                }
                if stream.incomplete > seenIncomplete {
                    let lost = stream.incomplete - seenIncomplete
                    counters.incomplete.withLock { $0 += lost }
                    seenIncomplete = stream.incomplete
                    logger.debug("incomplete frames dropped", metadata: ["frames": "\(lost)"])
                }
                guard let frame else {
                    // No frame for 3 s while free running: the camera is gone (or stopped).
                    quiet += 1
                    if quiet >= 3 && (controls.trigger ?? .freeRun) == .freeRun {
                        logger.error("camera sends no frames; reopening")
                        break
                    }
                    continue
                }
                quiet = 0
                queue.put(CapturedFrame(image: frame.image, index: index, time: clock.now))
                index += 1
            }
            stateWord.set("reconnecting")
            _ = (camera, stream)
        }
    }
}
