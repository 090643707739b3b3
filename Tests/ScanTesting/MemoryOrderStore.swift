import Foundation
import ScanAggregatorRuntime
import ScanEvents

/// Orders in memory, with PostgreSQL's rule (`scantrack_apply_order`): keyed by site and id, a newer
/// revision replaces the lines or cancels, an older or equal one changes nothing, one more than a
/// million past the stored one is refused. It can fail the next calls as a
/// restarting database would.
public final class MemoryOrderStore: OrderStore, @unchecked Sendable {
    // @unchecked: guarded by the lock.
    private let lock = NSLock()
    private var stored: [String: (revision: Int, cancelled: Bool, lines: [OrderMessage.Line])] = [:]
    private var letters: [RefusedMessage] = []
    private var failures = 0

    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String { "the database system is starting up" }
    }

    public init() {}

    /// The next `count` calls fail with a transient error.
    public func failNext(_ count: Int) { lock.withLock { failures = count } }

    /// A site's order (keyed by site and id, as in PostgreSQL).
    public func order(_ id: String, site: String = "dc1") -> (
        revision: Int, cancelled: Bool, lines: [OrderMessage.Line]
    )? {
        lock.withLock { stored[site + "\u{0}" + id] }
    }
    public var deadLetters: [RefusedMessage] { lock.withLock { letters } }

    private func failing() throws {
        if failures > 0 {
            failures -= 1
            throw Unavailable()
        }
    }

    public func apply(_ order: OrderMessage) throws -> OrderOutcome {
        try lock.withLock {
            try failing()
            let key = order.site + "\u{0}" + order.orderId
            if let current = stored[key], current.revision >= order.revision {
                return .unchanged(storedRevision: current.revision)
            }
            if let current = stored[key], order.revision > current.revision + 1_000_000 {
                return .revisionJump(maxJump: 1_000_000)
            }
            stored[key] = (
                order.revision, order.action == .cancel, order.action == .cancel ? [] : order.lines
            )
            return .applied
        }
    }

    public func refuse(_ message: RefusedMessage) throws {
        try lock.withLock {
            try failing()
            letters.append(message)
        }
    }

    public func isTransient(_ error: any Error) -> Bool { error is Unavailable }
    public func reset() {}
}
