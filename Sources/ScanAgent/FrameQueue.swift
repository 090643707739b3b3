import Foundation
import ScanCore

/// One frame as the capture thread hands it over.
struct CapturedFrame: Sendable {
    var image: GrayImage
    /// 0-based index in the stream (per run; a resumed clip keeps the clip's numbering).
    var index: Int
    var time: Timestamp
}

/// The bounded hand-over between the capture thread and the decoding thread. A camera never
/// waits: when decoding falls behind, the oldest waiting frame is replaced by the newest and
/// counted as dropped. A clip waits instead (`blocking`), so a replay decodes every frame.
final class FrameQueue: @unchecked Sendable {
    // @unchecked: all state is guarded by `condition`.
    enum Taken {
        case frame(CapturedFrame)
        case timedOut
        case ended
    }

    private let condition = NSCondition()
    private let capacity: Int
    private let blocking: Bool
    private var frames: [CapturedFrame] = []
    private var finished = false
    private var droppedCount = 0
    private var receivedCount = 0

    init(capacity: Int, blocking: Bool) {
        self.capacity = max(1, capacity)
        self.blocking = blocking
    }

    var dropped: Int { condition.withLock { droppedCount } }
    var received: Int { condition.withLock { receivedCount } }

    /// Hands a frame over. A blocking queue waits for room (false when the queue was closed meanwhile).
    @discardableResult
    func put(_ frame: CapturedFrame) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if blocking {
            while frames.count >= capacity && !finished { condition.wait() }
        } else if frames.count >= capacity {
            frames.removeFirst()
            droppedCount += 1
        }
        guard !finished else { return false }
        frames.append(frame)
        receivedCount += 1
        condition.broadcast()
        return true
    }

    /// The oldest waiting frame; `.ended` once the source finished and every frame was taken.
    func take(timeout seconds: Double) -> Taken {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: seconds)
        while frames.isEmpty && !finished {
            if !condition.wait(until: deadline) { return frames.isEmpty ? (finished ? .ended : .timedOut) : takeFirst() }
        }
        return frames.isEmpty ? .ended : takeFirst()
    }

    private func takeFirst() -> Taken {
        let frame = frames.removeFirst()
        condition.broadcast()
        return .frame(frame)
    }

    /// No more frames will come (end of clip, shutdown); waiting producers and consumers return.
    func finish() {
        condition.withLock {
            finished = true
            condition.broadcast()
        }
    }
}

/// Set once (a signal, the end of the stream), read by every thread of the agent.
final class StopSignal: @unchecked Sendable {
    // @unchecked: the one Bool is guarded by the lock.
    private let condition = NSCondition()
    private var stopped = false
    func set() {
        condition.withLock {
            stopped = true
            condition.broadcast()
        }
    }
    var isSet: Bool { condition.withLock { stopped } }

    /// Sleeps up to `seconds`; returns early (true) when stopped.
    @discardableResult
    func sleep(seconds: Double) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if !stopped { _ = condition.wait(until: Date(timeIntervalSinceNow: seconds)) }
        return stopped
    }
}

func wallClock() -> Timestamp { Timestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000)) }
