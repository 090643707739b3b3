import Foundation
import Logging
import ScanCore
import ScanEvents
import ScanReconciliation
import ScanServices

/// The aggregator's second loop, over its ports: stored sightings become item passes, completed
/// pack-station sessions become pack records, and both are published for the WMS. State lives
/// in the store only, and one replica at a time does the work (the store's lock), so replicas
/// and restarts see the same passes; what was closed but not yet acknowledged by the publisher
/// is published again (deduplicated by message id).
public final class ReconcileLoop: @unchecked Sendable {
    // @unchecked: handed to the one thread that runs it and used only there.
    private let store: any ReconcileStore
    private let publisher: any ResultPublisher
    private let clock: any ServiceClock
    private let subjects: ContractSubjects
    private let logger: Logger
    private let newId: @Sendable () -> String
    /// Publishing while JetStream is away: one warning, then one line when it acknowledges again.
    private var publishRetry: RetryLog
    /// How much a round takes, and how long closed passes take late sightings.
    public var settings = RoundSettings()
    public var batchSize: Int {
        get { settings.batchSize }
        set { settings.batchSize = newValue }
    }
    public var lateMinutes: Int {
        get { settings.lateMinutes }
        set { settings.lateMinutes = newValue }
    }
    public private(set) var totals = ReconcileCounts()

    /// `newId`: a new pass's item id (random UUIDs unless a test wants them predictable).
    public init(
        store: any ReconcileStore, publisher: any ResultPublisher, subjects: ContractSubjects,
        clock: any ServiceClock, logger: Logger,
        newId: @escaping @Sendable () -> String = { UUID().uuidString.lowercased() }
    ) {
        self.store = store
        self.publisher = publisher
        self.subjects = subjects
        self.clock = clock
        self.logger = logger
        self.newId = newId
        publishRetry = RetryLog(
            "results not published; they are kept and sent later", logger: logger,
            policy: RetryPolicy(first: .zero, limit: .zero, jitter: 0, logEvery: .max))
    }

    /// Seconds since the oldest sighting still waiting for reconciliation was first seen (0 when
    /// none waits): how far item passes lag behind the cameras.
    public func lagSeconds() throws -> Double { try store.lagSeconds() }

    /// One round, in one transaction (the store's snapshot, `RoundPlan`, the store writing its
    /// changes), then what it left to publish (and what earlier rounds could not) published from
    /// the outbox, after the round's transaction committed and its lock was let go. A lost store
    /// connection is reported as an error; the caller retries.
    @discardableResult
    public func runOnce() throws -> ReconcileCounts {
        let newId = self.newId
        var counts =
            try store.round(settings: settings) { snapshot in RoundPlan.plan(snapshot, newId: newId) }?.counts
            ?? ReconcileCounts()
        _ = try store.outbox { outbox in try publish(outbox, counts: &counts) }
        totals.add(counts)
        return counts
    }

    // MARK: publishing

    private let metrics = AggregatorMetrics()

    private func publish(_ db: any ResultOutbox, counts: inout ReconcileCounts) throws {
        // Decisions first: a diverter is waiting for them.
        let now = clock.now
        guard
            try publishEach(
                try db.unpublishedDecisions(limit: 500).map { $0.sent(at: now) }, counted: &counts.decisionsPublished,
                subject: { decision throws(SubjectTokenError) in
                    try subjects.decision(site: decision.site, lane: decision.lane)
                },
                message: { ($0.json, $0.eventId, $0.traceId) },
                mark: { decision in
                    try db.markDecisionPublished(decision)
                    metrics.decision(decision)
                }),
            try publishEach(
                try db.unpublishedPasses(limit: 500), counted: &counts.itemsPublished,
                subject: { pass throws(SubjectTokenError) in try subjects.item(site: pass.site, lane: pass.lane) },
                message: { ($0.json, $0.eventId, $0.traceId) },
                mark: { pass in try db.markPassPublished(itemId: pass.itemId, revision: pass.revision) }),
            try publishEach(
                try db.unpublishedParcelPasses(limit: 500), counted: &counts.parcelPassesPublished,
                subject: { pass throws(SubjectTokenError) in try subjects.parcelPass(site: pass.site, lane: pass.lane)
                },
                message: { ($0.json, $0.eventId, $0.traceId) },
                mark: { pass in try db.markParcelPassPublished(passId: pass.passId, revision: pass.revision) }),
            try publishEach(
                try db.unpublishedCodings(limit: 500), counted: &counts.codingsPublished,
                subject: { coding throws(SubjectTokenError) in try subjects.coded(site: coding.site, lane: coding.lane)
                },
                message: { ($0.json, $0.eventId, $0.traceId) }, mark: { coding in try db.markCodingPublished(coding) })
        else { return }
        _ = try publishEach(
            try db.unpublishedPacks(limit: 500), counted: &counts.packsPublished,
            subject: { pack throws(SubjectTokenError) in try subjects.pack(site: pack.site, station: pack.station) },
            message: { ($0.json, $0.eventId, $0.traceId) },
            mark: { pack in try db.markPackPublished(sessionId: pack.sessionId) })
    }

    /// Publishes each result and marks it published (one whose subject cannot be built is marked
    /// and skipped); false, leaving the rest for a later round, when the publisher is away.
    private func publishEach<Result>(
        _ results: [Result], counted: inout Int, subject build: (Result) throws(SubjectTokenError) -> String,
        message: (Result) -> (bytes: [UInt8], id: String, traceId: String?), mark: (Result) throws -> Void
    ) throws -> Bool {
        for result in results {
            let (bytes, id, traceId) = message(result)
            // A new span of the trace the result began with, named by the result's id, so each
            // revision is a span of its own and the same revision sent again is the same span.
            let trace = traceId.flatMap { TraceContext.continuing($0, as: id) }
            guard let subject = subject({ () throws(SubjectTokenError) in try build(result) }, id: id, trace: trace)
            else {
                try mark(result)
                continue
            }
            guard send(subject: subject, bytes: bytes, id: id, trace: trace) else { return false }
            logger.debug(
                "result published",
                metadata: LogKey.about(event: id, trace: trace).merging(["subject": "\(subject)"]) { $1 })
            try mark(result)
            counted += 1
        }
        return true
    }

    /// A result's subject, or nil (logged) when a stored site, lane or station cannot be a subject
    /// token: such a row (stored before tokens were checked) is skipped rather than left to block
    /// the results behind it.
    private func subject(_ build: () throws(SubjectTokenError) -> String, id: String, trace: TraceContext?)
        -> String?
    {
        do {
            return try build()
        } catch {
            logger.error(
                "result not published: its subject cannot be built",
                metadata: LogKey.about(event: id, trace: trace).merging([LogKey.error: "\(error)"]) { $1 })
            return nil
        }
    }

    /// Publishes; false (and one warning until it works again) when the publisher is away: the
    /// record stays unpublished in the store and goes out in a later round.
    private func send(subject: String, bytes: [UInt8], id: String, trace: TraceContext?) -> Bool {
        do {
            try publisher.publish(subject: subject, bytes: bytes, messageID: id, trace: trace)
            publishRetry.succeeded("JetStream acknowledges results again")
            return true
        } catch {
            // No wait here: the round ends and the next one (the reconcile loop's pace) tries again.
            publishRetry.failed(error)
            return false
        }
    }
}
