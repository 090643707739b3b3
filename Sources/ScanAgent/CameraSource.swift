import Foundation
import Logging
import ScanAgentRuntime
import ScanCore
import ScanServices
import ScanV4L2
import Synchronization
import ScanAgentConfig
import ScanEvents

/// A V4L2 camera through libv4l2, with `source.controls` set on it (exposure, frame rate, focus,
/// driver controls by name) at every open, and reopened when it goes away (see `Reconnecting`).
final class CameraSource: FrameSource, @unchecked Sendable {
    // @unchecked: the capture object lives on the capture thread only; the counters, the state
    // word and the controls are thread-safe.
    let kind = SourceConfig.Kind.v4l2
    let blocking = false
    let request: CaptureRequest
    /// The config's controls, with what `set-controls` changed: applied at every (re)open.
    private let controlState: CameraControlState
    var controls: CameraControls { controlState.controls }
    private let mailbox = ControlsMailbox()
    let clock: any AgentClock
    let logger: Logger
    private let stateWord = SourceState()
    private let counters = SourceCounters()
    var state: SourceStatus { stateWord.current }
    var health: SourceHealth { counters.health }

    init(request: CaptureRequest, controls: CameraControls = CameraControls(), clock: any AgentClock, logger: Logger) {
        self.request = request
        self.controlState = CameraControlState(controls, counters: counters, logger: logger)
        self.clock = clock
        self.logger = logger
    }

    func setControls(_ controls: CameraControls) -> Result<[AgentStatus.SourceControl], CommandError> {
        mailbox.ask(.controls(controls))
    }

    func capture(into queue: FrameQueue, stop: StopToken) {
        defer { stateWord.set(.ended) }
        var index = 0
        Reconnecting<V4L2Capture>(state: stateWord, counters: counters, logger: logger).run(stop: stop) {
            let capture = try V4L2Capture(request)
            if !controls.isEmpty {
                let (taken, warnings) = try V4L2Controls.apply(controls, to: capture.device)
                controlState.report(taken, warnings: warnings, log: true)
            }
            return capture
        } stream: { capture, connection in
            logger.info(
                "camera streaming",
                metadata: [
                    "device": "\(request.device)", "format": "\(capture.format)", "connection": "\(connection)",
                ])
            var image = GrayImage(width: capture.format.width, height: capture.format.height, fill: 0)
            while !stop.isStopped {
                mailbox.serve { request in
                    guard case .controls(let change) = request else {
                        return .failure(CommandError(verb: request.verb, message: "V4L2 cameras have no trigger"))
                    }
                    return controlState.change(by: change) { try V4L2Controls.apply($0, to: capture.device) }
                }
                do {
                    guard try capture.nextFrame(into: &image, timeoutMilliseconds: 1000) else { continue }
                } catch {
                    logger.error("camera failed; reopening", metadata: ["error": "\(error)"])
                    return "\(error)"
                }
                queue.put(CapturedFrame(image: image, index: index, time: clock.now))
                index += 1
            }
            return nil
        }
    }
}
