import Foundation
import Logging
import ScanCore
import ScanReconciliation
import ScanServices

/// What one reconciliation round did.
public struct ReconcileCounts: Sendable, Equatable {
    public var sightings = 0
    public var passesOpened = 0
    public var passesClosed = 0
    public var lateSightings = 0
    public var packs = 0
    public var itemsPublished = 0
    public var packsPublished = 0
    /// No-reads settled: attached to the item pass another camera read, or to none.
    public var noReadsSettled = 0
    public var noReadsAttached = 0
    /// False when another replica held the reconciliation lock this round.
    public var leader = false

    public init() {}

    mutating func add(_ round: ReconcileCounts) {
        sightings += round.sightings
        passesOpened += round.passesOpened
        passesClosed += round.passesClosed
        lateSightings += round.lateSightings
        packs += round.packs
        itemsPublished += round.itemsPublished
        packsPublished += round.packsPublished
        noReadsSettled += round.noReadsSettled
        noReadsAttached += round.noReadsAttached
    }
}

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
    public var batchSize = 2_000
    /// Closed passes stay candidates for late sightings this long (wall time).
    public var lateMinutes = 10
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

    /// One round, in one transaction. A lost store connection is reported as an error; the
    /// caller retries.
    @discardableResult
    public func runOnce() throws -> ReconcileCounts {
        let counts =
            try store.round { db in
                var counts = ReconcileCounts()
                counts.leader = true
                let topology = try db.topology()
                try reconcile(db, topology: topology, counts: &counts)
                try settleNoReads(db, topology: topology, counts: &counts)
                try pack(db, topology: topology, counts: &counts)
                try publish(db, counts: &counts)
                return counts
            } ?? ReconcileCounts()
        totals.add(counts)
        return counts
    }

    // MARK: item passes

    private func reconcile(_ db: any ReconcileTransaction, topology: Topology, counts: inout ReconcileCounts) throws {
        let sightings = try db.unreconciled(limit: batchSize)
        var placed: [(sighting: LaneSighting, lane: Topology.Lane)] = []
        for sighting in sightings where sighting.accepted {
            guard let lane = topology.lane(site: sighting.site, camera: sighting.camera) else { continue }
            let member = PassMember(
                eventId: sighting.eventId, camera: sighting.camera, trackId: sighting.trackId,
                firstSeen: sighting.firstSeen, lastSeen: sighting.lastSeen)
            placed.append(
                (
                    LaneSighting(
                        site: sighting.site, symbology: sighting.symbology, value: sighting.value,
                        valueEncoding: sighting.valueEncoding, member: member), lane
                ))
        }
        counts.sightings = sightings.count

        // The passes these sightings may join, and every open pass (they may be due).
        var (passes, updatedAt) = try db.candidatePasses(
            values: Array(Set(placed.map(\.sighting.value))), lateMinutes: lateMinutes)
        var touched: Set<Int> = []
        var newMembers: [(index: Int, member: PassMember, late: Bool)] = []
        var watermarks: [LaneKey: Timestamp] = [:]
        for (sighting, lane) in placed {
            let key = LaneKey(site: sighting.site, lane: lane.id)
            watermarks[key] = max(watermarks[key] ?? sighting.member.firstSeen, sighting.member.firstSeen)
            switch Reconciliation.place(sighting, lane: lane, passes: &passes, newId: newId) {
            case .opened(let index):
                counts.passesOpened += 1
                touched.insert(index)
                newMembers.append((index, sighting.member, false))
            case .joined(let index):
                touched.insert(index)
                newMembers.append((index, sighting.member, false))
            case .late(let index):
                counts.lateSightings += 1
                touched.insert(index)
                newMembers.append((index, sighting.member, true))
            case .known:
                break
            }
        }
        // Watermarks: the latest sighting time per lane, kept across rounds.
        try db.raiseWatermarks(watermarks)
        let laneWatermark = try db.watermarks()

        // Close what is due: by event time, or (a lane gone quiet) when nothing joined for as
        // long as the lane's whole window in wall time.
        let now = clock.now.milliseconds
        for index in passes.indices where !passes[index].closed {
            let pass = passes[index]
            guard let lane = topology.lane(site: pass.site, id: pass.lane) else { continue }
            let watermark = laneWatermark[LaneKey(site: pass.site, lane: pass.lane)] ?? Timestamp(milliseconds: 0)
            let quiet =
                !touched.contains(index)
                && now - (updatedAt[pass.itemId]?.milliseconds ?? now) > lane.span + lane.windowMilliseconds
                    + lane.graceMilliseconds
            if Reconciliation.isDue(pass, lane: lane, watermark: watermark) || quiet {
                passes[index].closed = true
                passes[index].revision = 1
                touched.insert(index)
                counts.passesClosed += 1
            }
        }
        try db.savePasses(
            touched.sorted().map { index in
                let pass = passes[index]
                let lane = topology.lane(site: pass.site, id: pass.lane)
                return PassRow(
                    pass: pass, camerasExpected: lane?.cameras.count ?? 0,
                    missing: lane.map { pass.missing(on: $0) } ?? [])
            })
        try db.insertMembers(newMembers.map { (passes[$0.index].itemId, $0.member, $0.late) })
        try db.markReconciled(sightings)
    }

    // MARK: no-reads

    /// Attaches each lane camera's no-read to the item pass another camera of the lane read
    /// (`Reconciliation.pass(forNoReadAt:)`), once the lane has moved past it: its watermark
    /// (or, a lane gone quiet, the wall clock since the no-read was stored) is beyond the
    /// no-read by the lane's span, window and grace. A no-read off any lane, or with no such
    /// pass, is settled without one.
    private func settleNoReads(_ db: any ReconcileTransaction, topology: Topology, counts: inout ReconcileCounts)
        throws
    {
        let watermarks = try db.watermarks()
        let now = clock.now.milliseconds
        for noRead in try db.unsettledNoReads(limit: batchSize) {
            guard let lane = topology.lane(site: noRead.site, camera: noRead.camera) else {
                try db.settleNoRead(noRead, itemId: nil)
                counts.noReadsSettled += 1
                continue
            }
            let margin = lane.span + lane.windowMilliseconds + lane.graceMilliseconds
            let watermark = watermarks[LaneKey(site: noRead.site, lane: lane.id)]?.milliseconds ?? 0
            guard watermark > noRead.firstSeen.milliseconds + margin || now > noRead.received.milliseconds + margin
            else { continue }
            let anchor = noRead.firstSeen.milliseconds - (lane.offset(of: noRead.camera) ?? 0)
            let passes = try db.passes(
                site: noRead.site, lane: lane.id, from: Timestamp(milliseconds: anchor - margin),
                to: Timestamp(milliseconds: anchor + margin))
            let index = Reconciliation.pass(
                forNoReadAt: noRead.firstSeen, camera: noRead.camera, lane: lane, passes: passes)
            try db.settleNoRead(noRead, itemId: index.map { passes[$0].itemId })
            counts.noReadsSettled += 1
            if index != nil { counts.noReadsAttached += 1 }
        }
    }

    // MARK: pack records

    /// A session that names a station makes a pack record. Its station is the topology's for the
    /// camera that sent it (ingest refused a session naming another one), so a camera at no
    /// station of a site the topology describes makes none; on a site the topology does not
    /// describe, the station the session names (a checked token) stands.
    private func pack(_ db: any ReconcileTransaction, topology: Topology, counts: inout ReconcileCounts) throws {
        for session in try db.takeCompletedSessions(limit: 200) {
            guard let event = session.event, let named = event.station,
                let station = topology.site(session.site) == nil
                    ? named : topology.station(site: session.site, camera: session.camera)?.id
            else { continue }
            let codes = event.codes.map {
                CountedCode(value: $0.value, symbology: $0.symbology, count: $0.count, role: $0.role)
            }
            let orderId = event.orderId ?? codes.first { $0.role == "order" }?.value
            let lines = try orderId.map { id in try db.orderLines(id) } ?? nil
            let result = PackEvaluation.evaluate(sessionOrderId: event.orderId, codes: codes) { _ in lines }
            let stored = try db.insertPack(
                sessionId: event.sessionId, site: session.site, station: station, camera: session.camera,
                startedAt: event.startedAt ?? event.time, completedAt: event.time, result: result)
            if stored { counts.packs += 1 }
        }
    }

    // MARK: publishing

    private func publish(_ db: any ReconcileTransaction, counts: inout ReconcileCounts) throws {
        for pass in try db.unpublishedPasses(limit: 500) {
            guard
                let subject = subject({ () throws(SubjectTokenError) in
                    try subjects.item(site: pass.site, lane: pass.lane)
                })
            else {
                try db.markPassPublished(itemId: pass.itemId, revision: pass.revision)
                continue
            }
            guard send(subject: subject, bytes: pass.json, id: pass.eventId) else { return }
            try db.markPassPublished(itemId: pass.itemId, revision: pass.revision)
            counts.itemsPublished += 1
        }
        for pack in try db.unpublishedPacks(limit: 500) {
            guard
                let subject = subject({ () throws(SubjectTokenError) in
                    try subjects.pack(site: pack.site, station: pack.station)
                })
            else {
                try db.markPackPublished(sessionId: pack.sessionId)
                continue
            }
            guard send(subject: subject, bytes: pack.json, id: pack.eventId) else { return }
            try db.markPackPublished(sessionId: pack.sessionId)
            counts.packsPublished += 1
        }
    }

    /// A result's subject, or nil (logged) when a stored site, lane or station cannot be a subject
    /// token: such a row (stored before tokens were checked) is skipped rather than left to block
    /// the results behind it.
    private func subject(_ build: () throws(SubjectTokenError) -> String) -> String? {
        do {
            return try build()
        } catch {
            logger.error("result not published: its subject cannot be built", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// Publishes; false (and one warning until it works again) when the publisher is away: the
    /// record stays unpublished in the store and goes out in a later round.
    private func send(subject: String, bytes: [UInt8], id: String) -> Bool {
        do {
            try publisher.publish(subject: subject, bytes: bytes, messageID: id)
            publishRetry.succeeded("JetStream acknowledges results again")
            return true
        } catch {
            // No wait here: the round ends and the next one (the reconcile loop's pace) tries again.
            publishRetry.failed(error)
            return false
        }
    }
}
