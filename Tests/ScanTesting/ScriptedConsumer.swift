import Foundation
import ScanAggregatorRuntime
import ScanCore
import ScanServices

/// A durable consumer in memory, as JetStream's behaves: what is not acknowledged comes again
/// once its ack wait has passed on the clock; it can fail fetches (a node gone) and lose
/// acknowledgements (the connection dropped after the commit).
public final class ScriptedConsumer: EventConsumer, @unchecked Sendable {
    // @unchecked: guarded by the lock (the ingest thread, its writer thread and the test use it).
    private let lock = NSLock()
    private let clock: ManualClock
    private let ackWait: Duration
    private var stream: [(subject: String, bytes: [UInt8], traceparent: String?)] = []
    private var acked: Set<UInt64> = []
    /// When each delivered, unacknowledged message is due again.
    private var dueAgain: [UInt64: Duration] = [:]
    private var deliveryCount: [UInt64: Int] = [:]
    private var fetchFailures = 0
    private var ackFailures = 0
    private var binds = 0

    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String { "no responders: stream not available" }
    }

    /// `ackWait`: how long a delivered message waits for its acknowledgement before it is
    /// delivered again (on `clock`).
    public init(clock: ManualClock, ackWait: Duration = .seconds(10)) {
        self.clock = clock
        self.ackWait = ackWait
    }

    /// Appends a message (with its `traceparent` header, if any) to the stream; returns its
    /// sequence (from 1).
    @discardableResult
    public func append(subject: String, bytes: [UInt8], traceparent: String? = nil) -> UInt64 {
        lock.withLock {
            stream.append((subject, bytes, traceparent))
            return UInt64(stream.count)
        }
    }

    /// The next `count` fetches throw.
    public func failNextFetches(_ count: Int) { lock.withLock { fetchFailures = count } }
    /// The next `count` acknowledgements are lost.
    public func loseNextAcks(_ count: Int) { lock.withLock { ackFailures = count } }

    public var acknowledged: Set<UInt64> { lock.withLock { acked } }
    /// How often each sequence was delivered.
    public var deliveries: [UInt64: Int] { lock.withLock { deliveryCount } }
    public var rebinds: Int { lock.withLock { binds } }

    public func fetch(batch: Int, timeoutMilliseconds: Int64) throws -> [any ConsumedMessage] {
        let now = clock.elapsed
        let taken: [Message] = try lock.withLock {
            if fetchFailures > 0 {
                fetchFailures -= 1
                throw Unavailable()
            }
            var taken: [Message] = []
            for (offset, message) in stream.enumerated() where taken.count < batch {
                let sequence = UInt64(offset + 1)
                guard !acked.contains(sequence), dueAgain[sequence].map({ $0 <= now }) ?? true else { continue }
                dueAgain[sequence] = now + ackWait
                deliveryCount[sequence, default: 0] += 1
                taken.append(
                    Message(
                        subject: message.subject, bytes: message.bytes, streamSequence: sequence,
                        traceparent: message.traceparent, consumer: self))
            }
            return taken
        }
        // Nothing waiting: the fetch waits out its timeout on the clock, as the server's does
        // (and yields the thread a moment, so that an in-process loop does not spin).
        if taken.isEmpty {
            clock.advance(by: .milliseconds(timeoutMilliseconds))
            usleep(1_000)
        }
        return taken
    }

    public func rebind() throws { lock.withLock { binds += 1 } }
    public var isConnected: Bool { true }

    public func backlog() -> (pending: UInt64, ackPending: Int64)? {
        lock.withLock {
            let open = stream.indices.map { UInt64($0 + 1) }.filter { !acked.contains($0) }
            let delivered = open.filter { dueAgain[$0] != nil }.count
            return (UInt64(open.count - delivered), Int64(delivered))
        }
    }

    public var description: String { "scripted consumer" }

    fileprivate func ack(_ sequence: UInt64) throws {
        try lock.withLock {
            if ackFailures > 0 {
                ackFailures -= 1
                throw Unavailable()
            }
            acked.insert(sequence)
            dueAgain[sequence] = nil
        }
    }

    struct Message: ConsumedMessage {
        var subject: String
        var bytes: [UInt8]
        var streamSequence: UInt64?
        var traceparent: String?
        let consumer: ScriptedConsumer

        func ack() throws { try consumer.ack(streamSequence ?? 0) }
    }
}

/// A results stream in memory: records what was published, drops a message id it has seen (as
/// JetStream's deduplication does), and can refuse the next publishes (JetStream away).
public final class RecordingPublisher: ResultPublisher, @unchecked Sendable {
    // @unchecked: guarded by the lock.
    private let lock = NSLock()
    private var records: [(subject: String, bytes: [UInt8], id: String)] = []
    private var ids: Set<String> = []
    private var failures = 0
    private var traceRecords: [String: TraceContext] = [:]
    private var refusedCount = 0

    public struct Away: Error, CustomStringConvertible {
        public var description: String { "JetStream not available" }
    }

    public init() {}

    /// The next `count` publishes fail.
    public func failNext(_ count: Int) { lock.withLock { failures = count } }

    /// What was published, once per message id, in order.
    public var published: [(subject: String, bytes: [UInt8], id: String)] { lock.withLock { records } }
    public var refused: Int { lock.withLock { refusedCount } }

    /// The trace each message was sent with, by message id (none: not there).
    public var traces: [String: TraceContext] { lock.withLock { traceRecords } }

    public func publish(subject: String, bytes: [UInt8], messageID: String, trace: TraceContext?) throws {
        try lock.withLock {
            if failures > 0 {
                failures -= 1
                refusedCount += 1
                throw Away()
            }
            guard ids.insert(messageID).inserted else { return }
            records.append((subject, bytes, messageID))
            if let trace { traceRecords[messageID] = trace }
        }
    }
}
