import Logging
import ScanCore
import ScanEvents
import ScanReconciliation
import ScanServices

// The seams between the aggregator's runtime and the world. The runtime (IngestLoop,
// ReconcileLoop and the services in AggregatorRuntime) sees only these; ScanAggregator plugs in
// JetStream and PostgreSQL, and ScanTesting plugs in fakes, so that ingest retries, redelivery,
// reconciliation timing, result publishing and shutdown order are tested in-process on a
// manual clock (`ServiceClock`).

/// One message taken from the agents' durable stream, acknowledged once it is stored.
public protocol ConsumedMessage: Sendable {
    var subject: String { get }
    var bytes: [UInt8] { get }
    /// Its sequence in the stream (dead letters are published deduplicated by it); nil when it
    /// cannot be read.
    var streamSequence: UInt64? { get }
    /// Tells the stream the message is stored; a lost acknowledgement makes it come again.
    func ack() throws
    /// When the stream stored it (the agent's publish, to the stream's clock); nil when unknown.
    var storedInStream: Timestamp? { get }
    /// Its `traceparent` header as sent; nil when it has none.
    var traceparent: String? { get }
}

extension ConsumedMessage {
    public var storedInStream: Timestamp? { nil }
    public var traceparent: String? { nil }
}

/// Where ingest takes agent events from: a durable consumer that delivers what is not
/// acknowledged again after its ack wait.
public protocol EventConsumer: AnyObject {
    /// Up to `batch` messages, waiting at most `timeoutMilliseconds` for the first; empty when
    /// none came. Throws while the stream cannot deliver.
    func fetch(batch: Int, timeoutMilliseconds: Int64) throws -> [any ConsumedMessage]
    /// Binds to the consumer again (creating it when it was deleted).
    func rebind() throws
    /// Whether the connection to the server is up now (readiness).
    var isConnected: Bool { get }
    /// Messages waiting for this consumer and delivered but not acknowledged (gauges); nil when
    /// unknown.
    func backlog() -> (pending: UInt64, ackPending: Int64)?
    /// The streams it reads: each one's name, the bytes it holds and its limit (-1: none); empty
    /// when unknown. A full stream refuses its senders' events, so the fill is a gauge with an alert.
    func streamUsages() -> [(stream: String, bytes: UInt64, maxBytes: Int64)]
    /// What it consumes, for logs and readiness (`aggregator on SCANTRACK`).
    var description: String { get }
}

extension EventConsumer {
    public func streamUsages() -> [(stream: String, bytes: UInt64, maxBytes: Int64)] { [] }
}

/// Where results (item passes, pack records, dead letters) go: a stream that deduplicates by
/// message id, so publishing one again after a lost acknowledgement adds nothing.
public protocol ResultPublisher: AnyObject {
    /// `trace`: sent as the message's `traceparent` header (nil: none).
    func publish(subject: String, bytes: [UInt8], messageID: String, trace: TraceContext?) throws
}

extension ResultPublisher {
    /// A message that continues no trace (an order's acknowledgement, a dead letter).
    public func publish(subject: String, bytes: [UInt8], messageID: String) throws {
        try publish(subject: subject, bytes: bytes, messageID: messageID, trace: nil)
    }
}

/// A message refused at ingest, kept with its reason.
public struct RefusedMessage: Sendable, Equatable {
    public var subject: String
    public var reason: String
    public var detail: String
    public var payload: [UInt8]

    public init(subject: String, reason: String, detail: String, payload: [UInt8]) {
        self.subject = subject
        self.reason = reason
        self.detail = detail
        self.payload = payload
    }
}

/// One fetched batch, validated: the events to store, each with its body (the JSON as it came),
/// and the messages refused.
public struct EventBatch: Sendable {
    public var events: [(event: IngestEvent, body: String)] = []
    /// Each event's trace (`traceparent` as sent, when valid), by its index in `events`.
    public var traces: [Int: TraceContext] = [:]
    public var refused: [RefusedMessage] = []

    public init() {}

    public mutating func append(_ event: IngestEvent, body: String, trace: TraceContext? = nil) {
        if let trace { traces[events.count] = trace }
        events.append((event, body))
    }

    /// The events of one family, each with its body, in the batch's order: `extract` gives the
    /// family's wire type of an event, nil for other families.
    public func family<Event>(_ extract: (IngestEvent) -> Event?) -> [(record: Event, body: String)] {
        traced(extract).map { ($0.record, $0.body) }
    }

    /// The same, each with its trace id (nil: none came).
    public func traced<Event>(_ extract: (IngestEvent) -> Event?) -> [(record: Event, body: String, traceId: String?)] {
        events.enumerated().compactMap { index, entry in
            extract(entry.event).map { ($0, entry.body, traces[index]?.traceId) }
        }
    }
}

/// Ingest's port to storage: one batch in one transaction, idempotent on event ids (a batch
/// stored twice adds nothing the second time). PostgreSQL in production; in memory in tests.
public protocol SightingStore: AnyObject {
    /// Stores the batch atomically (the refused as dead letters); returns what it added of each
    /// kind (fewer than given when some were stored before).
    func store(_ batch: EventBatch) throws -> StoredCounts
    /// True when the error is worth waiting out (the server restarting, the connection lost).
    func isTransient(_ error: any Error) -> Bool
    /// Forgets a broken connection; the next call opens a new one.
    func reset()
    /// Throws when the store cannot be reached now (readiness while no batch comes).
    func ping() throws
    /// The site layout events are checked against (a lane or station a camera names must be its
    /// own). Called on the ingest thread while a batch may be being stored on another.
    func topology() throws -> Topology
}

/// What one stored batch added, by family (fewer than given when some were stored before).
public struct StoredCounts: Sendable, Equatable {
    private var counts: [SubjectFamily: Int] = [:]

    public init(_ counts: [SubjectFamily: Int] = [:]) { self.counts = counts }

    public subscript(family: SubjectFamily) -> Int {
        get { counts[family] ?? 0 }
        set { counts[family] = newValue }
    }

    /// Every family's, added up.
    public var total: Int { counts.values.reduce(0, +) }

    public static func + (a: StoredCounts, b: StoredCounts) -> StoredCounts {
        StoredCounts(a.counts.merging(b.counts, uniquingKeysWith: +))
    }
}

extension SightingStore {
    public func ping() throws {}
    public func topology() throws -> Topology { Topology(sites: []) }
}

/// Reconciliation's port to storage: each round runs in one transaction that holds the
/// reconciliation lock, so one replica at a time does the work and a round that fails leaves
/// nothing half done. A round is data both ways: the store takes a `RoundSnapshot` (everything
/// the round reads, with the store's own `now`), the pure `RoundPlan` turns it into
/// `RoundChanges`, and the store writes them. What a round makes to be published (a closed pass,
/// a pack record, a decision) is written as not yet published: the store is the results' outbox,
/// read and marked by the publisher after the round, outside its transaction and lock, so a
/// stalled NATS never holds either.
public protocol ReconcileStore: AnyObject {
    /// In one transaction holding the lock: takes the round's snapshot (`settings` say how much),
    /// hands it to `plan` and writes the changes `plan` returns; nil (and `plan` not called) when
    /// another replica holds the lock. A failure, `plan`'s included, rolls the whole round back.
    func round(settings: RoundSettings, _ plan: (RoundSnapshot) throws -> RoundChanges) throws -> RoundChanges?
    /// Runs `body` on the outbox, outside any round's transaction and not holding the
    /// reconciliation lock, but holding the publisher's own (one replica publishes at a time, so
    /// results go out in the outbox's order); nil (and `body` not run) when another replica's
    /// publisher holds it. Each mark stands on its own: a result published and marked stays so.
    func outbox<T>(_ body: (any ResultOutbox) throws -> T) throws -> T?
    /// Seconds since the oldest sighting still waiting for reconciliation was first seen.
    func lagSeconds() throws -> Double
}

/// The results a round left to be published, oldest first within each kind, and their marks. A
/// mark names the revision published: a result a later round changed again stays in the outbox.
public protocol ResultOutbox {
    /// The aggregator's decisions not published yet, oldest first.
    func unpublishedDecisions(limit: Int) throws -> [DecisionEvent]
    /// Marks a decision published, stored as it was sent (`late` when sent after its deadline).
    func markDecisionPublished(_ decision: DecisionEvent) throws
    /// Closed (or changed) passes whose revision was not published yet, oldest first.
    func unpublishedPasses(limit: Int) throws -> [ItemPassEvent]
    func markPassPublished(itemId: String, revision: Int) throws
    /// Closed (or changed) parcel passes whose revision was not published yet, oldest first.
    func unpublishedParcelPasses(limit: Int) throws -> [ParcelPassEvent]
    func markParcelPassPublished(passId: String, revision: Int) throws
    func unpublishedPacks(limit: Int) throws -> [PackRecordEvent]
    func markPackPublished(sessionId: String) throws
    /// No-reads a person resolved (`scanadmin noreads resolve`) not published yet, oldest first.
    func unpublishedCodings(limit: Int) throws -> [CodedEvent]
    func markCodingPublished(_ coding: CodedEvent) throws
}

/// What a runtime says of its connections (`/health/ready` in the programs).
public protocol HealthReport: AnyObject, Sendable {
    func set(_ name: String, ok: Bool, detail: String)
}

/// What storing an order did.
public enum OrderOutcome: Sendable, Equatable {
    /// The order now has the message's revision (created, replaced or cancelled).
    case applied
    /// Nothing changed: the stored revision (equal to the message's, or newer) stands.
    case unchanged(storedRevision: Int)
    /// Nothing changed: the revision jumps further past the stored one than an order may (a
    /// message that would freeze the order at the last revision); refused.
    case revisionJump(maxJump: Int)
}

/// Orders' port to storage: applying one is idempotent on its revision (a redelivery or an older
/// revision changes nothing). PostgreSQL in production; in memory in tests.
public protocol OrderStore: AnyObject {
    func apply(_ order: OrderMessage) throws -> OrderOutcome
    /// Keeps a refused order message with its reason (the dead letters).
    func refuse(_ message: RefusedMessage) throws
    /// True when the error is worth waiting out (the server restarting, the connection lost).
    func isTransient(_ error: any Error) -> Bool
    /// Forgets a broken connection; the next call opens a new one.
    func reset()
}

/// Fetching from a consumer that may be away (a node or the connection gone, a stream leader being
/// elected): the loop pauses on the poll and resumes, never ends on it; after 20 failures in a
/// row the consumer is bound again (created if it was deleted). Each new error logged once.
struct ConsumerFetch {
    let consumer: any EventConsumer
    private var retry: RetryLog
    private let resumed: String

    /// `paused` / `resumed`: what the log says when fetching stops and starts working again.
    init(_ consumer: any EventConsumer, paused: String, resumed: String, logger: Logger) {
        self.consumer = consumer
        self.resumed = resumed
        retry = RetryLog(paused, logger: logger, policy: .poll)
    }

    /// The next messages, or none (after `failed` is told the error and the poll waited on
    /// `clock`) while the consumer cannot deliver.
    mutating func next(
        batch: Int, timeoutMilliseconds: Int64, stop: StopToken, clock: any ServiceClock,
        failed: (any Error) -> Void = { _ in }
    ) -> [any ConsumedMessage]? {
        do {
            let messages = try consumer.fetch(batch: batch, timeoutMilliseconds: timeoutMilliseconds)
            retry.succeeded(resumed)
            return messages
        } catch {
            failed(error)
            retry.failedAndWait(error, stop: stop, sleeper: clock)
            if retry.failures % 20 == 0 { try? consumer.rebind() }
            return nil
        }
    }
}
