import Foundation
import ScanCore

/// Time as a runtime sees it (the agent's and the aggregator's): wall time for events and
/// stored rows, a monotonic count for intervals, and waits that a stop cuts short. The system's
/// clocks in the programs, a manual clock in the tests.
public protocol ServiceClock: RetrySleeper {
    /// Wall time (event times of cameras, heartbeats, when a lane went quiet).
    var now: Timestamp { get }
    /// Monotonic time since an arbitrary origin (heartbeat intervals, rates, backoff, drains).
    var elapsed: Duration { get }
    /// Waits `duration` or until `stop`; true when stopped.
    @discardableResult func sleep(for duration: Duration, stop: StopToken) -> Bool
}

/// The system's clocks.
public struct SystemClock: ServiceClock {
    private let origin = ContinuousClock.now
    public init() {}
    public var now: Timestamp { Timestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000)) }
    public var elapsed: Duration { ContinuousClock.now - origin }
    public func sleep(for duration: Duration, stop: StopToken) -> Bool { stop.sleep(for: duration) }
}
