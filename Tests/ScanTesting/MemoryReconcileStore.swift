import Foundation
import ScanAggregatorRuntime
import ScanCore
import ScanReconciliation
import ScanServices
import ScanEvents

/// Reconciliation's store in memory, with PostgreSQL's rules: a round is one transaction (all
/// or nothing), rows are stamped by the store's clock (`updated_at`, `received_at`), a closed
/// pass keeps its first closing time, a pass is published per revision, and the lock can be
/// held by another replica. It can fail the next rounds as a restarting database would.
public final class MemoryReconcileStore: ReconcileStore, @unchecked Sendable {
    // @unchecked: guarded by the lock (the reconciler thread and the test).
    private let lock = NSLock()
    private let clock: any ServiceClock
    private var tables = Tables()
    private var failures = 0
    private var lockedElsewhere = false

    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String { "the database system is starting up" }
    }

    struct StoredPass {
        var pass: ItemPass
        var camerasExpected = 0
        var missing: [String] = []
        var closedAt: Timestamp?
        var updatedAt: Timestamp
        var publishedRevision = 0
    }

    struct StoredSighting {
        var row: UnreconciledSighting
        var reconciled = false
    }

    struct Tables {
        var topology = Topology(sites: [])
        var sightings: [StoredSighting] = []
        var passes: [String: StoredPass] = [:]
        var members: [String: [(member: PassMember, late: Bool)]] = [:]
        var memberIds: Set<String> = []
        var watermarks: [LaneKey: Timestamp] = [:]
        var noReads: [(row: UnsettledNoRead, settled: Bool, itemId: String?)] = []
        var sessions: [(row: CompletedSession, time: Timestamp, packed: Bool)] = []
        var orders: [OrderKey: StoredOrder] = [:]
        var packs: [(record: PackRecordEvent, published: Bool)] = []
        var parcels: [(row: UnmergedParcel, merged: Bool)] = []
        var parcelPasses: [String: StoredParcelPass] = [:]
        var decisions: [(decision: DecisionEvent, published: Bool)] = []
        var measurements: [(row: UnsettledMeasurement, settled: Bool, passId: String?)] = []
        var codings: [(coding: CodedEvent, published: Bool, applied: Bool)] = []
    }

    struct StoredParcelPass {
        var pass: ParcelPass
        var camerasExpected: Int
        var closedAt: Timestamp?
        var updatedAt: Timestamp
        var publishedRevision = 0
    }

    public init(clock: any ServiceClock) { self.clock = clock }

    // MARK: what a test puts in and reads back

    public func setTopology(_ topology: Topology) { lock.withLock { tables.topology = topology } }
    /// An order of `site` ('' for every site).
    public func addOrder(_ id: String, site: String = "", lines: [OrderLine]) {
        lock.withLock { tables.orders[OrderKey(site: site, orderId: id)] = StoredOrder(lines: lines) }
    }

    /// A sighting as ingest stores it.
    public func addSighting(_ row: UnreconciledSighting) {
        lock.withLock { tables.sightings.append(StoredSighting(row: row)) }
    }

    /// A no-read as ingest stores it, received now.
    public func addNoRead(eventId: String, site: String, camera: String, firstSeen: Timestamp) {
        lock.withLock {
            tables.noReads.append(
                (
                    UnsettledNoRead(
                        eventId: eventId, site: site, camera: camera, firstSeen: firstSeen, received: clock.now),
                    false, nil
                ))
        }
    }

    /// A completed session event as ingest stores it.
    public func addCompletedSession(_ event: SessionEvent) {
        lock.withLock {
            tables.sessions.append(
                (
                    CompletedSession(
                        eventId: event.eventId, site: event.envelope.site, camera: event.envelope.camera, event: event),
                    event.time, false
                ))
        }
    }

    /// A camera's parcel as ingest stores it, received now: its codes' sightings named by track id.
    public func addParcel(_ event: ParcelEvent) {
        lock.withLock {
            tables.parcels.append(
                (
                    UnmergedParcel(event, received: clock.now),
                    false
                ))
        }
    }

    /// Every parcel pass, oldest first.
    public var parcelPasses: [ParcelPass] {
        lock.withLock {
            tables.parcelPasses.values.map { stored in
                var pass = stored.pass
                pass.closed = stored.closedAt != nil
                return pass
            }.sorted { $0.firstSeen < $1.firstSeen }
        }
    }

    /// The next `count` rounds fail (nothing of them is kept).
    public func failNext(_ count: Int) { lock.withLock { failures = count } }
    /// Another replica holds the reconciliation lock (rounds do nothing) until set false.
    public func holdLockElsewhere(_ held: Bool) { lock.withLock { lockedElsewhere = held } }

    /// Every pass, by item id: the pass with its members, whether it is closed, its revision.
    public var passes: [ItemPass] {
        lock.withLock {
            tables.passes.values.map { stored in
                var pass = stored.pass
                pass.members = (tables.members[pass.itemId] ?? []).map(\.member)
                return pass
            }.sorted { $0.firstSeen < $1.firstSeen }
        }
    }
    /// Sightings not placed yet.
    public var unreconciledCount: Int { lock.withLock { tables.sightings.filter { !$0.reconciled }.count } }
    /// Settled no-reads with the item they were attached to (nil: none).
    public var settledNoReads: [String: String?] {
        lock.withLock {
            Dictionary(uniqueKeysWithValues: tables.noReads.filter(\.settled).map { ($0.row.eventId, $0.itemId) })
        }
    }
    public var packRecords: [PackRecordEvent] { lock.withLock { tables.packs.map(\.record) } }
    /// A no-read's coding as `scanadmin noreads resolve` stores it.
    public func addCoding(_ coding: CodedEvent) { lock.withLock { tables.codings.append((coding, false, false)) } }
    /// A measurement as ingest stores it, received now.
    public func addMeasurement(_ measurement: MeasureEvent) {
        lock.withLock {
            tables.measurements.append((UnsettledMeasurement(measurement, received: clock.now), false, nil))
        }
    }
    /// Each measurement's pass: absent while unsettled, nil when given up on.
    public var measurementPasses: [String: String?] {
        lock.withLock {
            Dictionary(
                uniqueKeysWithValues: tables.measurements.filter(\.settled).map {
                    ($0.row.measurement.eventId, $0.passId)
                })
        }
    }
    /// The aggregator's decisions as stored (a published one as it was sent).
    public var decisions: [(decision: DecisionEvent, published: Bool)] { lock.withLock { tables.decisions } }

    // MARK: ReconcileStore

    public func round(settings: RoundSettings, _ plan: (RoundSnapshot) throws -> RoundChanges) throws
        -> RoundChanges?
    {
        let start: Tables? = try lock.withLock {
            if failures > 0 {
                failures -= 1
                throw Unavailable()
            }
            return lockedElsewhere ? nil : tables
        }
        guard let start else { return nil }
        // The round works on a copy, kept only when it ends without an error (one replica at a
        // time: the lock above stands for PostgreSQL's advisory lock).
        let transaction = Transaction(tables: start, now: clock.now)
        let changes = try plan(transaction.snapshot(settings))
        transaction.apply(changes)
        lock.withLock { tables = transaction.tables }
        return changes
    }

    /// The outbox between rounds, on the tables as they are: each mark stands on its own (as an
    /// UPDATE outside a transaction does), also when publishing stops half way.
    public func outbox<T>(_ body: (any ResultOutbox) throws -> T) throws -> T? {
        try lock.withLock {
            let outbox = Transaction(tables: tables, now: clock.now)
            defer { tables = outbox.tables }
            return try body(outbox)
        }
    }

    public func lagSeconds() throws -> Double {
        lock.withLock {
            guard let oldest = tables.sightings.filter({ !$0.reconciled }).map(\.row.firstSeen).min() else { return 0 }
            return max(0, Double(clock.now.milliseconds - oldest.milliseconds) / 1000)
        }
    }

    final class Transaction: ResultOutbox {
        var tables: Tables
        let now: Timestamp

        init(tables: Tables, now: Timestamp) {
            self.tables = tables
            self.now = now
        }

        /// What a round reads, each part as `RoundSnapshot` describes it.
        func snapshot(_ settings: RoundSettings) -> RoundSnapshot {
            var snapshot = RoundSnapshot(now: now, topology: tables.topology)
            snapshot.sightings = unreconciled(limit: settings.batchSize)
            (snapshot.candidatePasses, snapshot.passesUpdatedAt) = candidatePasses(
                values: snapshot.sightings.filter(\.accepted).map(\.value), lateMinutes: settings.lateMinutes)
            snapshot.watermarks = tables.watermarks
            snapshot.noReads = unsettledNoReads(limit: settings.batchSize)
            for window in RoundSnapshot.noReadWindows(
                snapshot.noReads, topology: snapshot.topology, watermarks: snapshot.roundWatermarks, now: now)
            {
                snapshot.noReadPasses += tables.passes.values.map(withMembers).filter(window.contains)
            }
            snapshot.sessions = completedSessions(limit: settings.sessionBatch)
            snapshot.packedSessions = Set(
                tables.packs.map(\.record.sessionId).filter(
                    Set(snapshot.sessions.compactMap(\.event?.sessionId)).contains))
            snapshot.parcels = unmergedParcels(limit: settings.batchSize)
            snapshot.sightingStates = sightingStates(trackIds: snapshot.parcels.flatMap(\.trackIds))
            snapshot.measurements = Array(
                tables.measurements.filter { !$0.settled }.map(\.row).sorted {
                    ($0.received, $0.measurement.eventId) < ($1.received, $1.measurement.eventId)
                }.prefix(settings.batchSize))
            let window = RoundSnapshot.parcelPassWindow(
                parcels: snapshot.parcels, measurements: snapshot.measurements, topology: snapshot.topology, now: now)
            snapshot.codings = Array(
                tables.codings.filter { !$0.applied && $0.coding.parcelPassId != nil }.map(\.coding).sorted(
                    by: Self.codingOrder
                ).prefix(settings.batchSize))
            (snapshot.parcelPasses, snapshot.parcelPassesUpdatedAt) = parcelPasses(
                from: window.from, to: window.to, ids: Set(snapshot.codings.compactMap(\.parcelPassId)))
            let ids = RoundSnapshot.orderIds(
                sessions: snapshot.sessions, parcels: snapshot.parcels, parcelPasses: snapshot.parcelPasses,
                topology: snapshot.topology)
            snapshot.orders = tables.orders.filter { ids.contains($0.key.orderId) }
            return snapshot
        }

        /// Writes what a round changed.
        func apply(_ changes: RoundChanges) {
            for (lane, time) in changes.watermarks {
                tables.watermarks[lane] = max(tables.watermarks[lane] ?? time, time)
            }
            savePasses(changes.passes)
            for new in changes.members where tables.memberIds.insert(new.member.eventId).inserted {
                tables.members[new.itemId, default: []].append((new.member, new.late))
            }
            let reconciled = Set(changes.reconciled.map(\.eventId))
            for index in tables.sightings.indices where reconciled.contains(tables.sightings[index].row.eventId) {
                tables.sightings[index].reconciled = true
            }
            for (noRead, itemId) in changes.noReads {
                for index in tables.noReads.indices where tables.noReads[index].row.eventId == noRead.eventId {
                    tables.noReads[index].settled = true
                    tables.noReads[index].itemId = itemId
                }
            }
            let taken = Set(changes.sessionsTaken.map(\.eventId))
            for index in tables.sessions.indices where taken.contains(tables.sessions[index].row.eventId) {
                tables.sessions[index].packed = true
            }
            for pack in changes.packs { insertPack(pack) }
            for (measurement, passId) in changes.measurements {
                for index in tables.measurements.indices
                where tables.measurements[index].row.measurement.eventId == measurement.eventId {
                    tables.measurements[index].settled = true
                    tables.measurements[index].passId = passId
                }
            }
            saveParcelPasses(changes.parcelPasses)
            let merged = Set(changes.parcelsMerged)
            for index in tables.parcels.indices where merged.contains(tables.parcels[index].row.parcel.eventId) {
                tables.parcels[index].merged = true
            }
            for decision in changes.decisions
            where !tables.decisions.contains(where: { $0.decision.eventId == decision.eventId }) {
                tables.decisions.append((decision, false))
            }
            for coded in changes.codingsApplied {
                for index in tables.codings.indices where tables.codings[index].coding == coded {
                    tables.codings[index].applied = true
                }
            }
        }

        /// Codings oldest first, as PostgreSQL orders them.
        static func codingOrder(_ a: CodedEvent, _ b: CodedEvent) -> Bool {
            (a.keyedAt, a.site, a.camera, a.noReadId) < (b.keyedAt, b.site, b.camera, b.noReadId)
        }

        func unreconciled(limit: Int) -> [UnreconciledSighting] {
            Array(
                tables.sightings.filter { !$0.reconciled }.map(\.row)
                    .sorted { ($0.firstSeen, $0.eventId) < ($1.firstSeen, $1.eventId) }.prefix(limit))
        }

        private func withMembers(_ stored: StoredPass) -> ItemPass {
            var pass = stored.pass
            pass.closed = stored.closedAt != nil
            pass.members = (tables.members[pass.itemId] ?? []).map(\.member).sorted {
                ($0.firstSeen, $0.eventId) < ($1.firstSeen, $1.eventId)
            }
            return pass
        }

        func candidatePasses(values: [String], lateMinutes: Int) -> (
            passes: [ItemPass], updatedAt: [String: Timestamp]
        ) {
            let recent = now.adding(milliseconds: -Int64(lateMinutes) * 60_000)
            let wanted = Set(values)
            let chosen = tables.passes.values.filter {
                $0.closedAt == nil || (wanted.contains($0.pass.value) && $0.updatedAt > recent)
            }.sorted { $0.pass.itemId < $1.pass.itemId }
            return (
                chosen.map(withMembers),
                Dictionary(uniqueKeysWithValues: chosen.map { ($0.pass.itemId, $0.updatedAt) })
            )
        }

        func savePasses(_ rows: [PassRow]) {
            for row in rows {
                var stored =
                    tables.passes[row.pass.itemId] ?? StoredPass(pass: row.pass, closedAt: nil, updatedAt: now)
                stored.pass = row.pass
                stored.pass.members = []
                stored.camerasExpected = row.camerasExpected
                stored.missing = row.missing
                stored.closedAt = stored.closedAt ?? (row.pass.closed ? now : nil)
                stored.updatedAt = now
                tables.passes[row.pass.itemId] = stored
            }
        }

        func unsettledNoReads(limit: Int) -> [UnsettledNoRead] {
            Array(
                tables.noReads.filter { !$0.settled }.map(\.row).sorted {
                    ($0.firstSeen, $0.eventId) < ($1.firstSeen, $1.eventId)
                }.prefix(limit))
        }

        func completedSessions(limit: Int) -> [CompletedSession] {
            Array(
                tables.sessions.filter { !$0.packed }.sorted { ($0.time, $0.row.eventId) < ($1.time, $1.row.eventId) }
                    .map(\.row).prefix(limit))
        }

        func insertPack(_ pack: NewPack) {
            let (sessionId, site, station, camera, startedAt, completedAt, result) = (
                pack.sessionId, pack.site, pack.station, pack.camera, pack.startedAt, pack.completedAt, pack.result
            )
            guard !tables.packs.contains(where: { $0.record.sessionId == sessionId }) else { return }
            let lines = result.lines.map {
                PackRecordEvent.Line(
                    line: $0.line, code: $0.code, symbology: $0.symbology, expected: $0.expected, counted: $0.counted,
                    verdict: $0.verdict)
            }
            tables.packs.append(
                (
                    PackRecordEvent(
                        sessionId: sessionId, site: site, station: station, camera: camera, orderId: result.orderId,
                        verdict: result.verdict, items: result.lines.reduce(0) { $0 + $1.counted },
                        startedAt: startedAt, completedAt: completedAt, lines: lines), false
                ))
        }

        func unpublishedPasses(limit: Int) throws -> [ItemPassEvent] {
            let due = tables.passes.values.filter { $0.publishedRevision < $0.pass.revision }.sorted {
                ($0.closedAt?.milliseconds ?? .max, $0.pass.itemId) < (
                    $1.closedAt?.milliseconds ?? .max, $1.pass.itemId
                )
            }.prefix(limit)
            return due.map { stored in
                let pass = withMembers(stored)
                let cameras = (tables.members[pass.itemId] ?? []).sorted {
                    ($0.member.firstSeen, $0.member.eventId) < ($1.member.firstSeen, $1.member.eventId)
                }.map {
                    ItemPassEvent.CameraSighting(
                        camera: $0.member.camera, trackId: $0.member.trackId, eventId: $0.member.eventId,
                        firstSeen: $0.member.firstSeen, lastSeen: $0.member.lastSeen, late: $0.late)
                }
                return ItemPassEvent(
                    itemId: pass.itemId, site: pass.site, lane: pass.lane, symbology: pass.symbology,
                    value: pass.value, valueEncoding: pass.valueEncoding == "text" ? nil : pass.valueEncoding,
                    firstSeen: pass.firstSeen, lastSeen: pass.lastSeen, revision: pass.revision,
                    camerasExpected: stored.camerasExpected, cameras: cameras, missing: stored.missing)
            }
        }

        func markPassPublished(itemId: String, revision: Int) throws {
            tables.passes[itemId]?.publishedRevision = revision
        }

        func unpublishedPacks(limit: Int) throws -> [PackRecordEvent] {
            Array(tables.packs.filter { !$0.published }.map(\.record).prefix(limit))
        }

        func markPackPublished(sessionId: String) throws {
            for index in tables.packs.indices where tables.packs[index].record.sessionId == sessionId {
                tables.packs[index].published = true
            }
        }

        func unmergedParcels(limit: Int) -> [UnmergedParcel] {
            Array(
                tables.parcels.filter { !$0.merged }.map(\.row).sorted {
                    ($0.received, $0.parcel.eventId) < ($1.received, $1.parcel.eventId)
                }.prefix(limit))
        }

        func sightingStates(trackIds: [String]) -> [String: SightingState] {
            let wanted = Set(trackIds)
            var states: [String: SightingState] = [:]
            for sighting in tables.sightings where wanted.contains(sighting.row.trackId) {
                let item = tables.members.first { _, members in
                    members.contains { $0.member.eventId == sighting.row.eventId }
                }
                let camera = item?.value.first { $0.member.eventId == sighting.row.eventId }?.member.camera
                states[sighting.row.trackId] = SightingState(
                    reconciled: sighting.reconciled, accepted: sighting.row.accepted, itemId: item?.key,
                    readElsewhere: item?.value.contains { $0.member.camera != camera } ?? false)
            }
            return states
        }

        func parcelPasses(from: Timestamp, to: Timestamp, ids: Set<String>) -> (
            passes: [ParcelPass], updatedAt: [String: Timestamp]
        ) {
            let chosen = tables.parcelPasses.values.filter {
                $0.closedAt == nil || ($0.pass.firstSeen >= from && $0.pass.firstSeen <= to)
                    || ids.contains($0.pass.passId)
            }.sorted { $0.pass.passId < $1.pass.passId }
            return (
                chosen.map { stored in
                    var pass = stored.pass
                    pass.closed = stored.closedAt != nil
                    return pass
                }, Dictionary(uniqueKeysWithValues: chosen.map { ($0.pass.passId, $0.updatedAt) })
            )
        }

        func saveParcelPasses(_ rows: [ParcelPassRow]) {
            for row in rows {
                var stored =
                    tables.parcelPasses[row.pass.passId]
                    ?? StoredParcelPass(pass: row.pass, camerasExpected: row.camerasExpected, updatedAt: now)
                stored.pass = row.pass
                stored.camerasExpected = row.camerasExpected
                stored.closedAt = stored.closedAt ?? (row.pass.closed ? now : nil)
                stored.updatedAt = now
                tables.parcelPasses[row.pass.passId] = stored
            }
        }

        func unpublishedParcelPasses(limit: Int) throws -> [ParcelPassEvent] {
            tables.parcelPasses.values.filter { $0.closedAt != nil && $0.publishedRevision < $0.pass.revision }
                .sorted { ($0.pass.lastSeen, $0.pass.passId) < ($1.pass.lastSeen, $1.pass.passId) }.prefix(limit)
                .map { $0.pass.event(camerasExpected: $0.camerasExpected) }
        }

        func markParcelPassPublished(passId: String, revision: Int) throws {
            if let stored = tables.parcelPasses[passId] {
                tables.parcelPasses[passId]?.publishedRevision = max(stored.publishedRevision, revision)
            }
        }

        func unpublishedDecisions(limit: Int) throws -> [DecisionEvent] {
            Array(
                tables.decisions.filter { !$0.published }.map(\.decision).sorted {
                    ($0.closedAt, $0.eventId) < ($1.closedAt, $1.eventId)
                }.prefix(
                    limit))
        }

        func unpublishedCodings(limit: Int) throws -> [CodedEvent] {
            Array(
                tables.codings.filter { !$0.published }.map(\.coding).sorted(by: Self.codingOrder).prefix(limit))
        }

        func markCodingPublished(_ coding: CodedEvent) throws {
            for index in tables.codings.indices where tables.codings[index].coding == coding {
                tables.codings[index].published = true
            }
        }

        func markDecisionPublished(_ decision: DecisionEvent) throws {
            for index in tables.decisions.indices where tables.decisions[index].decision.eventId == decision.eventId {
                tables.decisions[index] = (decision, true)
            }
        }
    }
}
