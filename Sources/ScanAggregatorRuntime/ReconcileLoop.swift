import Foundation
import Logging
import ScanCore
import ScanEvents
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
    /// Camera parcels merged into parcel passes, parcel passes closed and published.
    public var parcelsMerged = 0
    public var parcelPassesClosed = 0
    public var parcelPassesPublished = 0
    /// Divert decisions made for parcel passes as they closed (lanes with a `decision`), and
    /// published.
    public var decisions = 0
    public var decisionsPublished = 0
    /// Measurements attached to a parcel pass, and given up on (no pass of their lane near them).
    public var measurementsAttached = 0
    public var measurementsUnmatched = 0
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
        parcelsMerged += round.parcelsMerged
        parcelPassesClosed += round.parcelPassesClosed
        parcelPassesPublished += round.parcelPassesPublished
        decisions += round.decisions
        decisionsPublished += round.decisionsPublished
        measurementsAttached += round.measurementsAttached
        measurementsUnmatched += round.measurementsUnmatched
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

    /// One round, in one transaction, then what it left to publish (and what earlier rounds
    /// could not) published from the outbox, after the round's transaction committed and its
    /// lock was let go. A lost store connection is reported as an error; the caller retries.
    @discardableResult
    public func runOnce() throws -> ReconcileCounts {
        var counts =
            try store.round { db in
                var counts = ReconcileCounts()
                counts.leader = true
                let topology = try db.topology()
                // The lanes' watermarks as this round leaves them, read once for every step.
                let watermarks = try reconcile(db, topology: topology, counts: &counts)
                try settleNoReads(db, topology: topology, watermarks: watermarks, counts: &counts)
                try mergeParcels(db, topology: topology, watermarks: watermarks, counts: &counts)
                try pack(db, topology: topology, counts: &counts)
                return counts
            } ?? ReconcileCounts()
        _ = try store.outbox { outbox in try publish(outbox, counts: &counts) }
        totals.add(counts)
        return counts
    }

    // MARK: item passes

    /// Places the waiting sightings and closes what is due; returns the lanes' watermarks.
    private func reconcile(_ db: any ReconcileTransaction, topology: Topology, counts: inout ReconcileCounts) throws
        -> [LaneKey: Timestamp]
    {
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
        return laneWatermark
    }

    // MARK: no-reads

    /// Attaches each lane camera's no-read to the item pass another camera of the lane read
    /// (`Reconciliation.pass(forNoReadAt:)`), once the lane has moved past it: its watermark
    /// (or, a lane gone quiet, the wall clock since the no-read was stored) is beyond the
    /// no-read by the lane's span, window and grace. A no-read off any lane, or with no such
    /// pass, is settled without one.
    private func settleNoReads(
        _ db: any ReconcileTransaction, topology: Topology, watermarks: [LaneKey: Timestamp],
        counts: inout ReconcileCounts
    )
        throws
    {
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

    // MARK: parcel passes

    /// Merges the lane cameras' parcels into parcel passes (`ParcelMerging.place`) once each code's
    /// sighting has found its item pass (or, stored long ago, with what is known), and closes a
    /// pass when every lane camera has sent its parcel or the lane has moved past it: its
    /// watermark, or (a lane gone quiet) the wall clock since the pass last changed, beyond the
    /// lane's span, window and grace. A parcel of a camera on no lane is set aside unmerged.
    private func mergeParcels(
        _ db: any ReconcileTransaction, topology: Topology, watermarks: [LaneKey: Timestamp],
        counts: inout ReconcileCounts
    )
        throws
    {
        let now = clock.now.milliseconds
        let waiting = try db.unmergedParcels(limit: batchSize)
        let states = try db.sightingStates(trackIds: waiting.flatMap(\.trackIds))
        var ready: [(site: String, parcel: LaneParcel, lane: Topology.Lane, readElsewhere: Bool)] = []
        var setAside: [String] = []
        for row in waiting {
            guard let lane = topology.lane(site: row.site, camera: row.parcel.camera) else {
                setAside.append(row.parcel.eventId)
                continue
            }
            let margin = lane.span + lane.windowMilliseconds + lane.graceMilliseconds
            let settled = row.trackIds.allSatisfy { id in states[id].map { $0.reconciled || !$0.accepted } ?? false }
            guard settled || now > row.received.milliseconds + margin else { continue }
            var parcel = row.parcel
            for index in parcel.codes.indices where index < row.trackIds.count {
                parcel.codes[index].itemId = states[row.trackIds[index]]?.itemId
            }
            let readElsewhere = row.trackIds.contains { states[$0]?.readElsewhere ?? false }
            ready.append((row.site, parcel, lane, readElsewhere))
        }
        try db.markParcelsMerged(eventIds: setAside)
        let measurements = try unsettledMeasurements(db, topology: topology, counts: &counts)
        let times =
            ready.flatMap { [$0.parcel.firstSeen.milliseconds, $0.parcel.lastSeen.milliseconds] }
            + measurements.map { $0.row.measurement.time.milliseconds - $0.lane.measureOffsetMilliseconds }
        let reach =
            (ready.map(\.lane) + measurements.map(\.lane)).map {
                $0.span + $0.windowMilliseconds + $0.graceMilliseconds
            }.max() ?? 0
        var (passes, updatedAt) = try db.parcelPasses(
            from: Timestamp(milliseconds: (times.min() ?? now) - reach),
            to: Timestamp(milliseconds: (times.max() ?? now) + reach))
        var touched: Set<Int> = []
        // Parcels holding a code another camera read go first and join only by that code, so that
        // the other camera's parcel of the same box finds them; then the rest, by time.
        let ordered = ready.filter(\.readElsewhere) + ready.filter { !$0.readElsewhere }
        for (site, parcel, lane, readElsewhere) in ordered {
            if let index = passes.firstIndex(where: { $0.members.contains { $0.eventId == parcel.eventId } }) {
                touched.insert(index)  // merged before, in a round whose marking was lost
                continue
            }
            if let index = ParcelMerging.place(parcel, lane: lane, site: site, passes: passes, byTime: !readElsewhere) {
                passes[index].members.append(parcel)
                if passes[index].closed { passes[index].revision += 1 }
                touched.insert(index)
            } else {
                var pass = ParcelPass(passId: newId(), site: site, lane: lane.id)
                pass.members = [parcel]
                passes.append(pass)
                touched.insert(passes.count - 1)
            }
            counts.parcelsMerged += 1
        }
        // Before closing: a measurement that finds its pass open goes out with its first revision.
        try attach(
            measurements, to: &passes, touched: &touched, watermarks: watermarks, db: db, counts: &counts)
        for index in passes.indices where !passes[index].closed {
            let pass = passes[index]
            guard let lane = topology.lane(site: pass.site, id: pass.lane) else { continue }
            let watermark = watermarks[LaneKey(site: pass.site, lane: pass.lane)] ?? Timestamp(milliseconds: 0)
            let margin = lane.span + lane.windowMilliseconds + lane.graceMilliseconds
            let quiet = !touched.contains(index) && now - (updatedAt[pass.passId]?.milliseconds ?? now) > margin
            if ParcelMerging.isDue(pass, lane: lane, watermark: watermark) || quiet {
                passes[index].closed = true
                passes[index].revision = 1
                touched.insert(index)
                counts.parcelPassesClosed += 1
                if let rules = lane.decision {
                    // Once, as it closes: a camera's parcel joining later cannot call a parcel back.
                    try db.insertDecision(
                        passes[index].decision(lane: lane, rules: rules, at: clock.now) { id in
                            try db.orderLines(site: pass.site, id)
                        })
                    counts.decisions += 1
                }
            }
        }
        try db.saveParcelPasses(
            touched.sorted().map { index in
                let pass = passes[index]
                return ParcelPassRow(
                    pass: pass, camerasExpected: topology.lane(site: pass.site, id: pass.lane)?.cameras.count ?? 0)
            })
        try db.markParcelsMerged(eventIds: ready.map(\.parcel.eventId))
    }

    // MARK: measurements

    /// The measurements waiting for their parcel pass, with their lanes; one for a lane the
    /// topology does not have is settled without one at once.
    private func unsettledMeasurements(
        _ db: any ReconcileTransaction, topology: Topology, counts: inout ReconcileCounts
    ) throws -> [(row: UnsettledMeasurement, lane: Topology.Lane)] {
        var placed: [(row: UnsettledMeasurement, lane: Topology.Lane)] = []
        for row in try db.unsettledMeasurements(limit: batchSize) {
            guard let lane = topology.lane(site: row.measurement.site, id: row.measurement.lane) else {
                try db.settleMeasurement(row.measurement, passId: nil)
                counts.measurementsUnmatched += 1
                continue
            }
            placed.append((row, lane))
        }
        return placed
    }

    /// Attaches each dimensioner or scale reading to the parcel pass that was at the device
    /// (`ParcelMerging.place(_:lane:passes:)`); a closed pass goes out again as revision + 1. One
    /// with no such pass waits until the lane has moved past it (its watermark, or the wall clock
    /// since it was stored, beyond its time by the lane's span, window and grace), then is settled
    /// without one.
    private func attach(
        _ measurements: [(row: UnsettledMeasurement, lane: Topology.Lane)], to passes: inout [ParcelPass],
        touched: inout Set<Int>, watermarks: [LaneKey: Timestamp], db: any ReconcileTransaction,
        counts: inout ReconcileCounts
    ) throws {
        let now = clock.now.milliseconds
        for (row, lane) in measurements {
            let measurement = row.measurement
            if let index = ParcelMerging.place(measurement, lane: lane, passes: passes) {
                passes[index].measurement = measurement
                if passes[index].closed { passes[index].revision += 1 }
                touched.insert(index)
                try db.settleMeasurement(measurement, passId: passes[index].passId)
                counts.measurementsAttached += 1
                continue
            }
            let time = measurement.time.milliseconds - lane.measureOffsetMilliseconds
            let margin = lane.span + lane.windowMilliseconds + lane.graceMilliseconds
            let watermark = watermarks[LaneKey(site: measurement.site, lane: lane.id)]?.milliseconds ?? 0
            // A device upstream of the first camera measures before any camera sees the parcel.
            let wait = margin + max(0, -lane.measureOffsetMilliseconds)
            if watermark > time + margin || now > row.received.milliseconds + wait {
                try db.settleMeasurement(measurement, passId: nil)
                counts.measurementsUnmatched += 1
            }
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
            let lines = try orderId.map { id in try db.orderLines(site: session.site, id) } ?? nil
            let result = PackEvaluation.evaluate(sessionOrderId: event.orderId, codes: codes) { _ in lines }
            let stored = try db.insertPack(
                sessionId: event.sessionId, site: session.site, station: station, camera: session.camera,
                startedAt: event.startedAt ?? event.time, completedAt: event.time, result: result)
            if stored { counts.packs += 1 }
        }
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
                message: { ($0.json, $0.eventId) },
                mark: { decision in
                    try db.markDecisionPublished(decision)
                    metrics.decision(decision)
                }),
            try publishEach(
                try db.unpublishedPasses(limit: 500), counted: &counts.itemsPublished,
                subject: { pass throws(SubjectTokenError) in try subjects.item(site: pass.site, lane: pass.lane) },
                message: { ($0.json, $0.eventId) },
                mark: { pass in try db.markPassPublished(itemId: pass.itemId, revision: pass.revision) }),
            try publishEach(
                try db.unpublishedParcelPasses(limit: 500), counted: &counts.parcelPassesPublished,
                subject: { pass throws(SubjectTokenError) in try subjects.parcelPass(site: pass.site, lane: pass.lane)
                },
                message: { ($0.json, $0.eventId) },
                mark: { pass in try db.markParcelPassPublished(passId: pass.passId, revision: pass.revision) })
        else { return }
        _ = try publishEach(
            try db.unpublishedPacks(limit: 500), counted: &counts.packsPublished,
            subject: { pack throws(SubjectTokenError) in try subjects.pack(site: pack.site, station: pack.station) },
            message: { ($0.json, $0.eventId) }, mark: { pack in try db.markPackPublished(sessionId: pack.sessionId) })
    }

    /// Publishes each result and marks it published (one whose subject cannot be built is marked
    /// and skipped); false, leaving the rest for a later round, when the publisher is away.
    private func publishEach<Result>(
        _ results: [Result], counted: inout Int, subject build: (Result) throws(SubjectTokenError) -> String,
        message: (Result) -> (bytes: [UInt8], id: String), mark: (Result) throws -> Void
    ) throws -> Bool {
        for result in results {
            guard let subject = subject({ () throws(SubjectTokenError) in try build(result) }) else {
                try mark(result)
                continue
            }
            let (bytes, id) = message(result)
            guard send(subject: subject, bytes: bytes, id: id) else { return false }
            try mark(result)
            counted += 1
        }
        return true
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
