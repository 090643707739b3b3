import Foundation
import Logging
import ScanCore
import ScanReconciliation
import ScanNATS
import ScanPostgres
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
}

/// The aggregator's second loop: stored sightings become item passes, completed pack-station
/// sessions become pack records, and both are published for the WMS. State lives in PostgreSQL
/// only, and one replica at a time does the work (a transaction-scoped advisory lock), so
/// replicas and restarts see the same passes; what was closed but not yet acknowledged by
/// JetStream is published again (deduplicated by message id).
/// Blocking (cnats and libpq): run it on a thread of its own.
public final class Reconciler: @unchecked Sendable {
    // @unchecked: handed to the one thread that runs it and used only there.
    public let settings: IngestSettings
    private let logger: Logger
    private let jetStream: JetStream
    private let database: PGReconnecting
    /// Publishing while JetStream is away: one warning, then one line when it acknowledges again.
    private var publishRetry: RetryLog
    public var batchSize = 2_000
    /// Closed passes stay candidates for late sightings this long (wall time).
    public var lateMinutes = 10
    public private(set) var totals = ReconcileCounts()

    public init(settings: IngestSettings, logger: Logger) throws {
        self.settings = settings
        self.logger = logger
        publishRetry = RetryLog(
            "results not published; they are kept and sent later", logger: logger,
            policy: RetryPolicy(first: .zero, limit: .zero, jitter: 0, logEvery: .max))
        database = PGReconnecting(dsn: settings.postgresDSN)
        var options = NATSConnection.Options()
        options.name = "scan-aggregator reconciler"
        jetStream = try NATSConnection(url: settings.natsURL, options: options).jetStream()
        try jetStream.ensureStream(settings.subjects.resultsStreamSpec(replicas: settings.replicas))
    }

    /// Seconds since the oldest sighting still waiting for reconciliation was first seen (0 when
    /// none waits): how far item passes lag behind the cameras.
    public func lagSeconds() throws(PGError) -> Double {
        try PassStore(connection: try database.connection()).reconciliationLagSeconds()
    }

    /// One round. A lost PostgreSQL connection is reported as an error; the caller retries.
    @discardableResult
    public func runOnce() throws(PGError) -> ReconcileCounts {
        let db: PGConnection
        do {
            db = try database.connection()
        } catch {
            database.reset()
            throw error
        }
        do {
            let counts = try db.transaction { () throws(PGError) -> ReconcileCounts in
                var counts = ReconcileCounts()
                let store = PassStore(connection: db)
                guard try store.tryLock() else { return counts }
                counts.leader = true
                let topology = try SiteStore(connection: db).topology()
                try reconcile(store, topology: topology, counts: &counts)
                try settleNoReads(store, topology: topology, counts: &counts)
                try pack(store, sites: SiteStore(connection: db), topology: topology, counts: &counts)
                try publish(store, counts: &counts)
                return counts
            }
            totals.sightings += counts.sightings
            totals.passesOpened += counts.passesOpened
            totals.passesClosed += counts.passesClosed
            totals.lateSightings += counts.lateSightings
            totals.packs += counts.packs
            totals.itemsPublished += counts.itemsPublished
            totals.packsPublished += counts.packsPublished
            totals.noReadsSettled += counts.noReadsSettled
            totals.noReadsAttached += counts.noReadsAttached
            return counts
        } catch {
            if !db.isHealthy { database.reset() }
            throw error
        }
    }

    // MARK: item passes

    private func reconcile(_ store: PassStore, topology: Topology, counts: inout ReconcileCounts) throws(PGError) {
        let sightings = try store.unreconciled(limit: batchSize)
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
        var (passes, updatedAt) = try store.candidatePasses(
            values: Array(Set(placed.map(\.sighting.value))), lateMinutes: lateMinutes)
        var touched: Set<Int> = []
        var newMembers: [(index: Int, member: PassMember, late: Bool)] = []
        var watermarks: [PassStore.LaneKey: Timestamp] = [:]
        for (sighting, lane) in placed {
            let key = PassStore.LaneKey(site: sighting.site, lane: lane.id)
            watermarks[key] = max(watermarks[key] ?? sighting.member.firstSeen, sighting.member.firstSeen)
            switch Reconciliation.place(
                sighting, lane: lane, passes: &passes, newId: { UUID().uuidString.lowercased() })
            {
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
        try store.raiseWatermarks(watermarks)
        let laneWatermark = try store.watermarks()

        // Close what is due: by event time, or (a lane gone quiet) when nothing joined for as
        // long as the lane's whole window in wall time.
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        for index in passes.indices where !passes[index].closed {
            let pass = passes[index]
            guard let lane = topology.lane(site: pass.site, id: pass.lane) else { continue }
            let watermark =
                laneWatermark[PassStore.LaneKey(site: pass.site, lane: pass.lane)] ?? Timestamp(milliseconds: 0)
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
        try store.savePasses(
            touched.sorted().map { index in
                let pass = passes[index]
                let lane = topology.lane(site: pass.site, id: pass.lane)
                return PassStore.PassRow(
                    pass: pass, camerasExpected: lane?.cameras.count ?? 0,
                    missing: lane.map { pass.missing(on: $0) } ?? [])
            })
        try store.insertMembers(newMembers.map { (passes[$0.index].itemId, $0.member, $0.late) })
        try store.markReconciled(sightings)
    }

    // MARK: no-reads

    /// Attaches each lane camera's no-read to the item pass another camera of the lane read
    /// (`Reconciliation.pass(forNoReadAt:)`), once the lane has moved past it: its watermark
    /// (or, a lane gone quiet, the wall clock since the no-read was stored) is beyond the
    /// no-read by the lane's span, window and grace. A no-read off any lane, or with no such
    /// pass, is settled without one.
    private func settleNoReads(_ store: PassStore, topology: Topology, counts: inout ReconcileCounts) throws(PGError) {
        let watermarks = try store.watermarks()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        for noRead in try store.unsettledNoReads(limit: batchSize) {
            guard let lane = topology.lane(site: noRead.site, camera: noRead.camera) else {
                try store.settleNoRead(noRead, itemId: nil)
                counts.noReadsSettled += 1
                continue
            }
            let margin = lane.span + lane.windowMilliseconds + lane.graceMilliseconds
            let watermark = watermarks[PassStore.LaneKey(site: noRead.site, lane: lane.id)]?.milliseconds ?? 0
            guard watermark > noRead.firstSeen.milliseconds + margin || now > noRead.received.milliseconds + margin
            else { continue }
            let anchor = noRead.firstSeen.milliseconds - (lane.offset(of: noRead.camera) ?? 0)
            let passes = try store.passes(
                site: noRead.site, lane: lane.id, from: Timestamp(milliseconds: anchor - margin),
                to: Timestamp(milliseconds: anchor + margin))
            let index = Reconciliation.pass(
                forNoReadAt: noRead.firstSeen, camera: noRead.camera, lane: lane, passes: passes)
            try store.settleNoRead(noRead, itemId: index.map { passes[$0].itemId })
            counts.noReadsSettled += 1
            if index != nil { counts.noReadsAttached += 1 }
        }
    }

    // MARK: pack records

    /// A session that names a station makes a pack record. Its station is the topology's for the
    /// camera that sent it (ingest refused a session naming another one), so a camera at no
    /// station of a site the topology describes makes none; on a site the topology does not
    /// describe, the station the session names (a checked token) stands.
    private func pack(_ store: PassStore, sites: SiteStore, topology: Topology, counts: inout ReconcileCounts)
        throws(PGError)
    {
        for session in try store.takeCompletedSessions(limit: 200) {
            guard let event = session.event, let named = event.station,
                let station = topology.site(session.site) == nil
                    ? named : topology.station(site: session.site, camera: session.camera)?.id
            else { continue }
            let codes = event.codes.map {
                CountedCode(value: $0.value, symbology: $0.symbology, count: $0.count, role: $0.role)
            }
            let orderId = event.orderId ?? codes.first { $0.role == "order" }?.value
            let lines = try orderId.map { id throws(PGError) in try sites.orderLines(id) } ?? nil
            let result = PackEvaluation.evaluate(sessionOrderId: event.orderId, codes: codes) { _ in lines }
            let stored = try store.insertPack(
                sessionId: event.sessionId, site: session.site, station: station, camera: session.camera,
                startedAt: event.startedAt ?? event.time, completedAt: event.time, result: result)
            if stored { counts.packs += 1 }
        }
    }

    // MARK: publishing

    private func publish(_ store: PassStore, counts: inout ReconcileCounts) throws(PGError) {
        for pass in try store.unpublishedPasses(limit: 500) {
            guard
                let subject = subject({ () throws(SubjectTokenError) in
                    try settings.subjects.item(site: pass.site, lane: pass.lane)
                })
            else {
                try store.markPassPublished(itemId: pass.itemId, revision: pass.revision)
                continue
            }
            guard send(subject: subject, bytes: pass.json, id: pass.eventId) else { return }
            try store.markPassPublished(itemId: pass.itemId, revision: pass.revision)
            counts.itemsPublished += 1
        }
        for pack in try store.unpublishedPacks(limit: 500) {
            guard
                let subject = subject({ () throws(SubjectTokenError) in
                    try settings.subjects.pack(site: pack.site, station: pack.station)
                })
            else {
                try store.markPackPublished(sessionId: pack.sessionId)
                continue
            }
            guard send(subject: subject, bytes: pack.json, id: pack.eventId) else { return }
            try store.markPackPublished(sessionId: pack.sessionId)
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

    /// Publishes to JetStream; false (and one warning until it works again) when it is away:
    /// the record stays unpublished in PostgreSQL and goes out in a later round.
    private func send(subject: String, bytes: [UInt8], id: String) -> Bool {
        do {
            _ = try jetStream.publish(subject: subject, bytes: bytes, messageID: id)
            publishRetry.succeeded("JetStream acknowledges results again")
            return true
        } catch {
            // No wait here: the round ends and the next one (the reconcile loop's pace) tries again.
            publishRetry.failed(error)
            return false
        }
    }
}
