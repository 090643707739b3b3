import Foundation

/// Tells a blocking thread that its service is shutting down. The thread polls `isStopped` or
/// waits in `sleep(for:)`, which returns at once when the stop comes; blocking calls that cannot
/// poll (a frame queue, a spool) register a `whenStopped` action that wakes them.
public final class StopToken: @unchecked Sendable {
    // @unchecked: every field is guarded by `condition`.
    private let condition = NSCondition()
    private var stopped = false
    private var actions: [@Sendable () -> Void] = []

    public init() {}

    public var isStopped: Bool { condition.withLock { stopped } }

    /// Stops (once; later calls do nothing) and runs the registered actions.
    public func stop() {
        let toRun: [@Sendable () -> Void] = condition.withLock {
            guard !stopped else { return [] }
            stopped = true
            condition.broadcast()
            defer { actions.removeAll() }
            return actions
        }
        for action in toRun { action() }
    }

    /// Runs `action` when the token stops (at once when it has stopped already).
    public func whenStopped(_ action: @escaping @Sendable () -> Void) {
        let runNow = condition.withLock {
            if stopped { return true }
            actions.append(action)
            return false
        }
        if runNow { action() }
    }

    /// Sleeps up to `duration` on the wall clock; returns early, true, when stopped.
    @discardableResult
    public func sleep(for duration: Duration) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: duration.seconds)
        while !stopped && condition.wait(until: deadline) {}
        return stopped
    }
}
