import Foundation
import ScanCore
import ScanServices

/// A clock that moves only when told: `advance(by:)`, or a runtime's `sleep`, which moves it by
/// the time slept at once (so backoffs and polls cost no wall time in tests); a sleep on a stopped
/// token returns at once without moving it, as the system clock's does.
public final class ManualClock: ServiceClock, @unchecked Sendable {
    // @unchecked: guarded by the lock.
    private let lock = NSLock()
    private var wall: Timestamp
    private var monotonic: Duration = .zero
    private var slept: [Duration] = []

    public init(start: Timestamp = Timestamp(milliseconds: 1_795_800_000_000)) { wall = start }

    public var now: Timestamp { lock.withLock { wall } }
    public var elapsed: Duration { lock.withLock { monotonic } }
    /// Every sleep the runtime asked for, in order.
    public var sleeps: [Duration] { lock.withLock { slept } }

    public func advance(by duration: Duration) {
        lock.withLock {
            monotonic += duration
            wall = wall.adding(milliseconds: Int64((duration.seconds * 1000).rounded()))
        }
    }

    public func sleep(for duration: Duration, stop: StopToken) -> Bool {
        lock.withLock { slept.append(duration) }
        // As the system clock's: a sleep on a stopped token ends at once, and no time passes (a
        // loop that pauses that way during a drain spins; the test must see it).
        if stop.isStopped { return true }
        advance(by: duration)
        // Let the other threads of an in-process agent run, as a real sleep would, without
        // waiting any real time: the processor is offered to them and taken back.
        sched_yield()
        return stop.isStopped
    }
}
