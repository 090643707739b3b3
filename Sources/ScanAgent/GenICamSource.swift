import Foundation
import Logging
import ScanAgentRuntime
import ScanCore
import ScanGenICam
import ScanServices
import Synchronization
import ScanAgentConfig
import ScanEvents

/// A GenICam camera (GigE Vision, USB3 Vision) through Aravis, reopened when it goes away (a
/// cable pulled, the camera rebooted; see `Reconnecting`) with the controls applied again. Frames the
/// camera delivered incomplete (GVSP packets lost) are counted, logged and never decoded.
final class GenICamSource: FrameSource, @unchecked Sendable {
    // @unchecked: the camera and stream live on the capture thread only; the counters and the
    // state word are thread-safe.
    let kind = SourceConfig.Kind.genicam
    let blocking = false
    let cameraId: String?
    /// What the opened camera must say it is (`source.expect`).
    let expect: ExpectedCamera
    /// The controls applied at every (re)connect: the config's, with what `set-controls` changed.
    private let controlState: CameraControlState
    var controls: CameraControls { controlState.controls }
    /// A `set-controls` waiting for the capture thread, and its outcome.
    private let mailbox = ControlsMailbox()
    let clock: any AgentClock
    let logger: Logger
    private let stateWord = SourceState()
    private let counters = SourceCounters()
    var state: SourceStatus { stateWord.current }
    var health: SourceHealth { counters.health }

    /// A region's answer waits for the stream to restart with it (reopening the camera).
    func setControls(_ controls: CameraControls) -> Result<[AgentStatus.SourceControl], CommandError> {
        mailbox.ask(.controls(controls), seconds: controls.region == nil ? 3 : 10)
    }

    func trigger() -> Result<Void, CommandError> {
        mailbox.ask(.trigger).map { _ in () }
    }

    init(
        camera: String?, expect: ExpectedCamera = ExpectedCamera(), controls: CameraControls, clock: any AgentClock,
        logger: Logger
    ) {
        self.cameraId = camera
        self.expect = expect
        self.controlState = CameraControlState(controls, counters: counters, logger: logger)
        self.clock = clock
        self.logger = logger
    }

    /// Opens the camera, checks it is the one expected, applies the controls (logging what it
    /// took) and starts its stream.
    /// A region change waiting for this open is answered here, with what the camera took.
    func open() throws(GenICamError) -> (GenICamCamera, GenICamStream) {
        do {
            let camera = try GenICamCamera(id: cameraId)
            try camera.check(expect)
            let (taken, warnings) = try camera.apply(controls)
            let reported = controlState.report(taken, warnings: warnings, log: true)
            let opened = (camera, try GenICamStream(camera: camera))
            mailbox.answerLater(.success(reported))
            return opened
        } catch {
            mailbox.answerLater(.failure(CommandError(verb: "set-controls", message: "\(error)")))
            throw error
        }
    }

    func capture(into queue: FrameQueue, stop: StopToken) {
        defer { stateWord.set(.ended) }
        var index = 0
        Reconnecting<(GenICamCamera, GenICamStream)>(state: stateWord, counters: counters, logger: logger).run(
            stop: stop, open: open
        ) { opened, connection in
            let (camera, stream) = opened
            logger.info(
                "camera streaming",
                metadata: [
                    "camera": "\(camera.vendor) \(camera.model) \(camera.serial)", "connection": "\(connection)",
                ])
            var quiet = 0
            var seenIncomplete = 0
            var timeline = CameraTimeline()
            while !stop.isStopped {
                var restart = false
                mailbox.serve { request in
                    switch request {
                    case .controls(let change):
                        // A new region needs the stream stopped: checked now, applied as the stream
                        // restarts, answered then with what the camera took (`open`). Exposure,
                        // gain and rate are taken live.
                        if let region = change.region {
                            do {
                                try camera.checkRegion(region)
                            } catch {
                                return .failure(CommandError(verb: "set-controls", message: "\(error)"))
                            }
                            controlState.stage(change)
                            restart = true
                            return nil
                        }
                        return controlState.change(by: change) { now in try camera.apply(now) }
                    case .trigger:
                        guard controls.trigger == .software else {
                            return .failure(
                                CommandError(
                                    verb: "trigger",
                                    message: "the camera is not in software trigger mode (source.controls.trigger)"))
                        }
                        do {
                            try camera.execute("TriggerSoftware")
                            return .success([])
                        } catch {
                            return .failure(CommandError(verb: "trigger", message: "\(error)"))
                        }
                    }
                }
                if restart {
                    logger.info("camera region changed; restarting its stream")
                    return nil
                }
                let frame: GenICamStream.Frame?
                do {
                    frame = try stream.next(timeoutMicroseconds: 1_000_000)
                } catch {
                    logger.error("camera failed; reopening", metadata: ["error": "\(error)"])
                    return "\(error)"
                }
                if stream.incomplete > seenIncomplete {
                    let lost = stream.incomplete - seenIncomplete
                    counters.incomplete.withLock { $0 += lost }
                    seenIncomplete = stream.incomplete
                    logger.debug("incomplete frames dropped", metadata: ["frames": .stringConvertible(lost)])
                }
                guard let frame else {
                    // No frame for 3 s while free running: the camera is gone (or stopped).
                    quiet += 1
                    if quiet >= 3 && (controls.trigger ?? .freeRun) == .freeRun {
                        logger.error("camera sends no frames; reopening")
                        return "no frame for 3 s"
                    }
                    continue
                }
                quiet = 0
                // Event times from the camera's exposure stamps (0: a camera that stamps nothing).
                let stamp = frame.cameraTimestamp > 0 ? Int64(clamping: frame.cameraTimestamp) : nil
                let time = timeline.time(cameraNanoseconds: stamp, arrival: clock.now)
                queue.put(CapturedFrame(image: frame.image, index: index, time: time))
                index += 1
            }
            return nil
        }
    }
}
