import Foundation
import ScanAgentRuntime
import ScanCore
import ScanServices

/// An event bus that records what it is given, in order, and fails when told to.
public final class RecordingBus: EventBus, @unchecked Sendable {
    // @unchecked: guarded by the lock.
    public struct Published: Sendable {
        public var subject: String
        public var bytes: [UInt8]
        /// The event id for a durable publish; nil for core NATS.
        public var messageID: String?
        /// The trace sent as its `traceparent` (durable events; nil for chunks and core NATS).
        public var trace: TraceContext? = nil
        public var json: JSONValue? { try? JSONValue.parse(bytes) }
    }

    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String { "bus unavailable (test)" }
    }

    private let lock = NSLock()
    private var log: [Published] = []
    private var seenIDs: Set<String> = []
    private var failuresLeft = 0
    private var down = false
    private var flushes = 0

    public init() {}

    public var isConnected: Bool { lock.withLock { !down } }
    public let address = "nats://bus.test:4222"
    /// Everything published, core and durable, in order.
    public var published: [Published] { lock.withLock { log } }
    public var durable: [Published] { published.filter { $0.messageID != nil } }
    public var core: [Published] { published.filter { $0.messageID == nil } }
    public var flushCount: Int { lock.withLock { flushes } }

    /// The next `count` durable publishes fail.
    public func failNext(_ count: Int) { lock.withLock { failuresLeft = count } }
    /// Every publish fails until `setDown(false)`.
    public func setDown(_ isDown: Bool) { lock.withLock { down = isDown } }

    public func publishCore(subject: String, bytes: [UInt8]) throws {
        try lock.withLock {
            if down { throw Unavailable() }
            log.append(Published(subject: subject, bytes: bytes, messageID: nil))
        }
    }

    public func prepareStream() throws {
        try lock.withLock { if down { throw Unavailable() } }
    }

    public func publishDurable(subject: String, bytes: [UInt8], messageID: String, trace: TraceContext?) throws
        -> Bool
    {
        try lock.withLock {
            if down { throw Unavailable() }
            if failuresLeft > 0 {
                failuresLeft -= 1
                throw Unavailable()
            }
            log.append(Published(subject: subject, bytes: bytes, messageID: messageID, trace: trace))
            return !seenIDs.insert(messageID).inserted
        }
    }

    public func flush(timeout: Duration) { lock.withLock { flushes += 1 } }
}

/// A durable sink in memory, with the spool's order and acknowledgement rules.
public final class MemorySpool: DurableSink, @unchecked Sendable {
    // @unchecked: guarded by `condition`.
    private let condition = NSCondition()
    private var records: [SpoolRecord] = []
    private var cursor = 0
    private var saves = 0
    private let capacity: Int
    private var droppedCount = 0

    /// `capacity`: events it holds before refusing new ones (counted as dropped).
    public init(capacity: Int = .max) { self.capacity = capacity }

    /// Every event ever appended, in order.
    public var appended: [SpoolRecord] { condition.withLock { records } }
    public var cursorSaves: Int { condition.withLock { saves } }

    public func append(subject: String, eventId: String, payload: [UInt8]) -> Bool {
        condition.withLock {
            guard records.count - cursor < capacity else {
                droppedCount += 1
                return false
            }
            let end = Int64(records.count + 1)
            records.append(SpoolRecord(subject: subject, eventId: eventId, payload: payload, segment: 1, end: end))
            condition.broadcast()
            return true
        }
    }

    public var depth: Int { condition.withLock { records.count - cursor } }
    public var pendingBytes: Int { condition.withLock { records[cursor...].reduce(0) { $0 + $1.payload.count } } }
    public var dropped: Int { condition.withLock { droppedCount } }

    public func next(limit: Int) -> [SpoolRecord] {
        condition.withLock { Array(records[cursor..<min(records.count, cursor + limit)]) }
    }

    public func acknowledge(_ record: SpoolRecord) {
        condition.withLock { cursor = max(cursor, Int(record.end)) }
    }

    public func saveCursor() { condition.withLock { saves += 1 } }

    public func waitForRecords(for duration: Duration) {
        condition.withLock {
            if records.count == cursor {
                _ = condition.wait(until: Date(timeIntervalSinceNow: min(duration.seconds, 0.05)))
            }
        }
    }

    public func wake() { condition.withLock { condition.broadcast() } }
}
