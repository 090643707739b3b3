import ScanAggregatorRuntime
import ScanCore
import ScanPostgres
import ScanReconciliation
import ScanEvents

/// The PostgreSQL store (`EventStore` in one transaction), reconnecting after a loss.
public final class PostgresSightingStore: SightingStore {
    private let database: PGReconnecting
    /// A connection of its own for `topology()`, which runs beside `store` on another thread.
    private let layout: PGReconnecting

    public init(dsn: String, passwordFile: String? = nil) {
        database = PGReconnecting(dsn: dsn, passwordFile: passwordFile)
        layout = PGReconnecting(dsn: dsn, passwordFile: passwordFile)
    }

    public func topology() throws -> Topology {
        do {
            return try SiteStore(connection: try layout.connection()).topology()
        } catch {
            layout.reset()
            throw error
        }
    }

    public func store(_ batch: EventBatch) throws -> StoredCounts {
        let connection = try database.connection()
        let store = EventStore(connection: connection)
        return try connection.transaction { () throws(PGError) in
            var stored = StoredCounts()
            stored[.sighting] = try store.insertSightings(
                batch.traced { if case .sighting(let e) = $0 { e } else { nil } })
            stored[.session] = try store.insertSessionEvents(
                batch.traced { if case .session(let e) = $0 { e } else { nil } })
            stored[.noread] = try store.insertNoReads(
                batch.traced { if case .noRead(let e) = $0 { e } else { nil } }.map { ($0.record, $0.traceId) })
            stored[.reading] = try store.insertReadings(
                batch.family { if case .reading(let e) = $0 { e } else { nil } }.map(\.record))
            stored[.parcel] = try store.insertParcels(batch.traced { if case .parcel(let e) = $0 { e } else { nil } })
            stored[.decision] = try store.insertDecisions(
                batch.family { if case .decision(let e) = $0 { e } else { nil } })
            stored[.measure] = try store.insertMeasurements(
                batch.family { if case .measure(let e) = $0 { e } else { nil } })
            for message in batch.refused {
                try store.insertDeadLetter(
                    subject: message.subject, reason: message.reason, detail: message.detail, payload: message.payload)
            }
            return stored
        }
    }

    public func isTransient(_ error: any Error) -> Bool { (error as? PGError)?.isConnectionLoss ?? false }

    public func reset() { database.reset() }

    public func ping() throws {
        do {
            _ = try database.connection().query("SELECT 1")
        } catch {
            database.reset()
            throw error
        }
    }
}

/// Reconciliation's store in PostgreSQL (`PassStore`, `SiteStore`): each round one transaction
/// holding a transaction-scoped advisory lock, reconnecting after a loss.
public final class PostgresReconcileStore: ReconcileStore {
    private let database: PGReconnecting

    public init(dsn: String, passwordFile: String? = nil) {
        database = PGReconnecting(dsn: dsn, passwordFile: passwordFile)
    }

    /// The store's connection, opened again after a loss.
    private func connection() throws -> PGConnection {
        do {
            return try database.connection()
        } catch {
            database.reset()
            throw error
        }
    }

    public func round(settings: RoundSettings, _ plan: (RoundSnapshot) throws -> RoundChanges) throws
        -> RoundChanges?
    {
        let db = try connection()
        // An error of the round's own (not PostgreSQL's) still rolls the transaction back.
        var failure: (any Error)?
        do {
            let changes = try db.transaction { () throws(PGError) -> RoundChanges? in
                let round = Round(db)
                guard try round.passes.tryLock() else { return nil }
                let snapshot = try round.snapshot(settings)
                let changes: RoundChanges
                do {
                    changes = try plan(snapshot)
                } catch {
                    failure = error
                    throw PGError(
                        code: .queryFailed, function: "reconciliation round", input: "", message: "\(error)")
                }
                try round.apply(changes)
                return changes
            }
            return changes
        } catch {
            if !db.isHealthy { database.reset() }
            throw failure ?? error
        }
    }

    public func outbox<T>(_ body: (any ResultOutbox) throws -> T) throws -> T? {
        let db = try connection()
        let passes = PassStore(connection: db)
        do {
            guard try passes.tryPublisherLock() else { return nil }
            defer { try? passes.publisherUnlock() }
            return try body(Outbox(passes: passes))
        } catch {
            if !db.isHealthy { database.reset() }
            throw error
        }
    }

    public func lagSeconds() throws -> Double {
        do {
            return try PassStore(connection: try connection()).reconciliationLagSeconds()
        } catch {
            database.reset()
            throw error
        }
    }

    /// One round's reads and writes, on the round's connection inside its transaction.
    struct Round {
        let passes: PassStore
        let parcels: ParcelPassStore
        let sites: SiteStore
        let codings: NoReadCodingStore

        init(_ connection: PGConnection) {
            passes = PassStore(connection: connection)
            parcels = ParcelPassStore(connection: connection)
            sites = SiteStore(connection: connection)
            codings = NoReadCodingStore(connection: connection)
        }

        /// What the round reads, each part as `RoundSnapshot` describes it.
        func snapshot(_ settings: RoundSettings) throws(PGError) -> RoundSnapshot {
            var snapshot = RoundSnapshot(now: try passes.now(), topology: try sites.topology())
            snapshot.sightings = try passes.unreconciled(limit: settings.batchSize)
            (snapshot.candidatePasses, snapshot.passesUpdatedAt) = try passes.candidatePasses(
                values: Array(Set(snapshot.sightings.filter(\.accepted).map(\.value))),
                lateMinutes: settings.lateMinutes)
            snapshot.watermarks = try passes.watermarks()
            snapshot.noReads = try passes.unsettledNoReads(limit: settings.batchSize)
            for window in RoundSnapshot.noReadWindows(
                snapshot.noReads, topology: snapshot.topology, watermarks: snapshot.roundWatermarks, now: snapshot.now)
            {
                snapshot.noReadPasses += try passes.passes(
                    site: window.lane.site, lane: window.lane.lane, from: window.from, to: window.to)
            }
            snapshot.sessions = try passes.completedSessions(limit: settings.sessionBatch)
            snapshot.packedSessions = try passes.packedSessions(snapshot.sessions.compactMap(\.event?.sessionId))
            snapshot.parcels = try parcels.unmergedParcels(limit: settings.batchSize)
            snapshot.sightingStates = try parcels.sightingStates(trackIds: snapshot.parcels.flatMap(\.trackIds))
            snapshot.measurements = try parcels.unsettledMeasurements(limit: settings.batchSize)
            let window = RoundSnapshot.parcelPassWindow(
                parcels: snapshot.parcels, measurements: snapshot.measurements, topology: snapshot.topology,
                now: snapshot.now)
            snapshot.codings = try codings.unapplied(limit: settings.batchSize)
            (snapshot.parcelPasses, snapshot.parcelPassesUpdatedAt) = try parcels.parcelPasses(
                from: window.from, to: window.to, ids: Array(Set(snapshot.codings.compactMap(\.parcelPassId))).sorted())
            snapshot.orders = try sites.orders(
                ids: RoundSnapshot.orderIds(
                    sessions: snapshot.sessions, parcels: snapshot.parcels, parcelPasses: snapshot.parcelPasses,
                    topology: snapshot.topology))
            return snapshot
        }

        /// Writes what the round changed, in `RoundChanges`' order.
        func apply(_ changes: RoundChanges) throws(PGError) {
            try passes.raiseWatermarks(changes.watermarks)
            try passes.savePasses(changes.passes)
            try passes.insertMembers(changes.members.map { ($0.itemId, $0.member, $0.late) })
            try passes.markReconciled(changes.reconciled)
            for (noRead, itemId) in changes.noReads { try passes.settleNoRead(noRead, itemId: itemId) }
            try passes.markSessionsTaken(eventIds: changes.sessionsTaken.map(\.eventId))
            for pack in changes.packs {
                _ = try passes.insertPack(
                    sessionId: pack.sessionId, site: pack.site, station: pack.station, camera: pack.camera,
                    startedAt: pack.startedAt, completedAt: pack.completedAt, result: pack.result)
            }
            for (measurement, passId) in changes.measurements {
                try parcels.settleMeasurement(measurement, passId: passId)
            }
            try parcels.saveParcelPasses(changes.parcelPasses)
            try parcels.markParcelsMerged(eventIds: changes.parcelsMerged)
            for decision in changes.decisions { try parcels.insertDecision(decision) }
            try codings.markApplied(changes.codingsApplied)
        }
    }

    /// The outbox's queries, on the round's connection between rounds (no transaction: each mark
    /// commits on its own).
    struct Outbox: ResultOutbox {
        let passes: PassStore
        var parcels: ParcelPassStore { ParcelPassStore(connection: passes.connection) }

        func unpublishedDecisions(limit: Int) throws -> [DecisionEvent] {
            try parcels.unpublishedDecisions(limit: limit)
        }
        func markDecisionPublished(_ decision: DecisionEvent) throws { try parcels.markDecisionPublished(decision) }
        func unpublishedPasses(limit: Int) throws -> [ItemPassEvent] { try passes.unpublishedPasses(limit: limit) }
        func markPassPublished(itemId: String, revision: Int) throws {
            try passes.markPassPublished(itemId: itemId, revision: revision)
        }
        func unpublishedParcelPasses(limit: Int) throws -> [ParcelPassEvent] {
            try parcels.unpublishedParcelPasses(limit: limit)
        }
        func markParcelPassPublished(passId: String, revision: Int) throws {
            try parcels.markParcelPassPublished(passId: passId, revision: revision)
        }
        func unpublishedPacks(limit: Int) throws -> [PackRecordEvent] { try passes.unpublishedPacks(limit: limit) }
        func markPackPublished(sessionId: String) throws { try passes.markPackPublished(sessionId: sessionId) }
        func unpublishedCodings(limit: Int) throws -> [CodedEvent] {
            try NoReadCodingStore(connection: passes.connection).unpublished(limit: limit)
        }
        func markCodingPublished(_ coding: CodedEvent) throws {
            try NoReadCodingStore(connection: passes.connection).markPublished(coding)
        }
    }
}
