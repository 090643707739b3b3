import Foundation
import ScanCore
import ScanServices

/// One frame as the capture thread hands it over.
public struct CapturedFrame: Sendable {
    public var image: GrayImage
    /// 0-based index in the stream (per run; a resumed clip keeps the clip's numbering).
    public var index: Int
    public var time: Timestamp

    public init(image: GrayImage, index: Int, time: Timestamp) {
        self.image = image
        self.index = index
        self.time = time
    }
}

/// The bounded hand-over between the capture thread and the decoding thread. A camera never
/// waits: when decoding falls behind, the oldest waiting frame is replaced by the newest and
/// counted as dropped. A clip waits instead (`blocking`), so a replay decodes every frame.
public final class FrameQueue: @unchecked Sendable {
    // @unchecked: all state is guarded by `condition`.
    public enum Taken {
        case frame(CapturedFrame)
        case timedOut
        case ended
    }

    private let condition = NSCondition()
    public let capacity: Int
    private let blocking: Bool
    private var frames: [CapturedFrame] = []
    private var finished = false
    /// The producer was told to stop (shutdown): `put` refuses, but what waits is still taken.
    private var producerStopped = false
    private var droppedCount = 0
    private var receivedCount = 0

    public init(capacity: Int, blocking: Bool) {
        self.capacity = max(1, capacity)
        self.blocking = blocking
    }

    public var dropped: Int { condition.withLock { droppedCount } }
    public var received: Int { condition.withLock { receivedCount } }

    /// Hands a frame over. A blocking queue waits for room (false when the queue was closed meanwhile).
    @discardableResult
    public func put(_ frame: CapturedFrame) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if blocking {
            while frames.count >= capacity && !finished && !producerStopped { condition.wait() }
        } else if frames.count >= capacity {
            frames.removeFirst()
            droppedCount += 1
        }
        guard !finished && !producerStopped else { return false }
        frames.append(frame)
        receivedCount += 1
        condition.broadcast()
        return true
    }

    /// The oldest waiting frame; `.ended` once the source finished and every frame was taken.
    public func take(timeout: Duration) -> Taken {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: timeout.seconds)
        while frames.isEmpty && !finished {
            if !condition.wait(until: deadline) {
                return frames.isEmpty ? (finished ? .ended : .timedOut) : takeFirst()
            }
        }
        return frames.isEmpty ? .ended : takeFirst()
    }

    private func takeFirst() -> Taken {
        let frame = frames.removeFirst()
        condition.broadcast()
        return .frame(frame)
    }

    /// No more frames will come (end of clip, shutdown); waiting producers and consumers return.
    public func finish() {
        condition.withLock {
            finished = true
            condition.broadcast()
        }
    }

    /// The capture thread is stopping (shutdown): a producer waiting for room returns, later
    /// frames are refused, and the consumer keeps what was handed over (the queue is not
    /// finished: the decoding service ends on its own shutdown, not on this).
    public func stopProducing() {
        condition.withLock {
            producerStopped = true
            condition.broadcast()
        }
    }
}
