import Foundation
import Logging
import ScanAgentRuntime
import ScanCore
import ScanServices
import ScanV4L2
import ScanAgentConfig
import ScanEvents

/// A thread-safe state word for the heartbeat.
final class SourceState: @unchecked Sendable {
    // @unchecked: guarded by the lock.
    private let lock = NSLock()
    private var value = SourceStatus.starting
    var current: SourceStatus { lock.withLock { value } }
    func set(_ state: SourceStatus) { lock.withLock { value = state } }
}

/// What a paced clip waits on: the time now, and a sleep that a stop ends early (true when it was
/// stopped). The system's by default; a test gives its own, to see each wait without waiting.
struct ClipPacing: Sendable {
    var now: @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    var sleep: @Sendable (Duration, StopToken) -> Bool = { duration, stop in stop.sleep(for: duration) }

    static let system = ClipPacing()
}

/// A YUV4MPEG2 clip played as a camera would deliver it: paced at the clip's frame rate
/// (`realtime`), times from `start` plus the clip's frame offsets; with `dropLate`, a frame the
/// decoder is not ready for is dropped (counted) as a camera's would be, instead of waited for.
/// A paced clip's first frame is due `lead` after capture begins (`source.startAt` still ahead; a
/// negative lead, a start already past, delivers the frames already due at once). Frames before
/// `resumeFrame` (a clip resumed after a crash) are replayed unpaced. A clip damaged part way ends the stream
/// at the damage, with an error naming file and frame.
final class ClipSource: FrameSource, @unchecked Sendable {
    // @unchecked: the reader is used by the capture thread only; `stateWord` is thread-safe.
    let kind = SourceConfig.Kind.clip
    let blocking: Bool
    let reader: ClipReader
    let realtime: Bool
    let start: Timestamp
    let resumeFrame: Int
    let lead: Duration
    let logger: Logger
    let pacing: ClipPacing
    private let stateWord = SourceState()
    var state: SourceStatus { stateWord.current }

    init(
        path: String, realtime: Bool, dropLate: Bool = false, start: Timestamp, resumeFrame: Int,
        lead: Duration = .zero, logger: Logger, pacing: ClipPacing = .system
    ) throws(ClipError) {
        reader = try ClipReader(path: path)
        self.realtime = realtime
        self.blocking = !(realtime && dropLate)
        self.start = start
        self.resumeFrame = resumeFrame
        self.lead = lead
        self.logger = logger
        self.pacing = pacing
    }

    func capture(into queue: FrameQueue, stop: StopToken) {
        defer {
            stateWord.set(.ended)
            if !stop.isStopped { queue.finish() }  // the end of the stream, not a shutdown
        }
        stateWord.set(.streaming)
        let header = reader.header
        let origin = pacing.now() + lead
        var index = 0
        while !stop.isStopped {
            var image = GrayImage(width: header.width, height: header.height, fill: 0)
            do {
                guard try reader.readFrame(into: &image) else { return }
            } catch {
                logger.error("clip damaged; ending the stream", metadata: ["error": "\(error)"])
                return
            }
            if realtime && index >= resumeFrame {
                let due =
                    origin
                    + .milliseconds(
                        header.offsetMilliseconds(frame: index) - header.offsetMilliseconds(frame: resumeFrame))
                let wait = due - pacing.now()
                if wait > .zero, pacing.sleep(wait, stop) { return }
            }
            let frame = CapturedFrame(
                image: image, index: index, time: start.adding(milliseconds: header.offsetMilliseconds(frame: index)))
            guard queue.put(frame) else { return }
            index += 1
        }
    }
}
