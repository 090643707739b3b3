import Foundation
import Logging
import ScanAgentRuntime
import ScanCore
import ScanServices
import ScanV4L2

/// A V4L2 camera through libv4l2, reopened when it goes away: state `reconnecting` while the
/// device is missing or failing, one log line per distinct error, a retry every second.
final class CameraSource: FrameSource, @unchecked Sendable {
    // @unchecked: the capture object lives on the capture thread only; `stateWord` is thread-safe.
    let kind = "v4l2"
    let blocking = false
    let request: CaptureRequest
    let clock: any AgentClock
    let logger: Logger
    private let stateWord = SourceState()
    var state: String { stateWord.current }

    init(request: CaptureRequest, clock: any AgentClock, logger: Logger) {
        self.request = request
        self.clock = clock
        self.logger = logger
    }

    func capture(into queue: FrameQueue, stop: StopToken) {
        defer {
            stateWord.set("ended")
            if !stop.isStopped { queue.finish() }  // the end of the stream, not a shutdown
        }
        var index = 0
        var lastError = ""
        while !stop.isStopped {
            let capture: V4L2Capture
            do {
                capture = try V4L2Capture(request)
            } catch {
                stateWord.set("reconnecting")
                if error.description != lastError {
                    logger.error("camera unavailable; retrying every second", metadata: ["error": "\(error)"])
                    lastError = error.description
                }
                stop.sleep(for: .seconds(1))
                continue
            }
            logger.info("camera streaming", metadata: ["device": "\(request.device)", "format": "\(capture.format)"])
            lastError = ""
            stateWord.set("streaming")
            var image = GrayImage(width: capture.format.width, height: capture.format.height, fill: 0)
            while !stop.isStopped {
                do {
                    guard try capture.nextFrame(into: &image, timeoutMilliseconds: 1000) else { continue }
                } catch {
                    logger.error("camera failed; reopening", metadata: ["error": "\(error)"])
                    lastError = error.description
                    stateWord.set("reconnecting")
                    break
                }
                queue.put(CapturedFrame(image: image, index: index, time: clock.now))
                index += 1
            }
        }
    }
}
