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
            stored.sightings = try store.insertSightings(batch.sightings)
            stored.sessions = try store.insertSessionEvents(batch.sessions)
            stored.noReads = try store.insertNoReads(batch.noReads)
            stored.readings = try store.insertReadings(batch.readings)
            stored.parcels = try store.insertParcels(batch.parcels)
            stored.decisions = try store.insertDecisions(batch.decisions)
            stored.measurements = try store.insertMeasurements(batch.measurements)
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

    public func round<T>(_ body: (any ReconcileTransaction) throws -> T) throws -> T? {
        let db = try connection()
        // An error of the round's own (not PostgreSQL's) still rolls the transaction back.
        var failure: (any Error)?
        do {
            let value = try db.transaction { () throws(PGError) -> T? in
                let passes = PassStore(connection: db)
                guard try passes.tryLock() else { return nil }
                do {
                    return try body(Transaction(passes: passes, sites: SiteStore(connection: db)))
                } catch let error as PGError {
                    throw error
                } catch {
                    failure = error
                    throw PGError(
                        code: .queryFailed, function: "reconciliation round", input: "", message: "\(error)")
                }
            }
            return value
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

    /// One round's queries, on the round's connection.
    struct Transaction: ReconcileTransaction {
        let passes: PassStore
        let sites: SiteStore

        func topology() throws -> Topology { try sites.topology() }
        func unreconciled(limit: Int) throws -> [UnreconciledSighting] { try passes.unreconciled(limit: limit) }
        func markReconciled(_ sightings: [UnreconciledSighting]) throws { try passes.markReconciled(sightings) }
        func raiseWatermarks(_ watermarks: [LaneKey: Timestamp]) throws { try passes.raiseWatermarks(watermarks) }
        func watermarks() throws -> [LaneKey: Timestamp] { try passes.watermarks() }
        func candidatePasses(values: [String], lateMinutes: Int) throws -> (
            passes: [ItemPass], updatedAt: [String: Timestamp]
        ) { try passes.candidatePasses(values: values, lateMinutes: lateMinutes) }
        func savePasses(_ rows: [PassRow]) throws { try passes.savePasses(rows) }
        func insertMembers(_ members: [(itemId: String, member: PassMember, late: Bool)]) throws {
            try passes.insertMembers(members)
        }
        func unsettledNoReads(limit: Int) throws -> [UnsettledNoRead] { try passes.unsettledNoReads(limit: limit) }
        func passes(site: String, lane: String, from: Timestamp, to: Timestamp) throws -> [ItemPass] {
            try passes.passes(site: site, lane: lane, from: from, to: to)
        }
        func settleNoRead(_ noRead: UnsettledNoRead, itemId: String?) throws {
            try passes.settleNoRead(noRead, itemId: itemId)
        }
        func takeCompletedSessions(limit: Int) throws -> [CompletedSession] {
            try passes.takeCompletedSessions(limit: limit)
        }
        func orderLines(site: String, _ orderId: String) throws -> [OrderLine]? {
            try sites.orderLines(site: site, orderId)
        }
        func insertPack(
            sessionId: String, site: String, station: String, camera: String, startedAt: Timestamp,
            completedAt: Timestamp, result: PackResult
        ) throws -> Bool {
            try passes.insertPack(
                sessionId: sessionId, site: site, station: station, camera: camera, startedAt: startedAt,
                completedAt: completedAt, result: result)
        }
        var parcels: ParcelPassStore { ParcelPassStore(connection: passes.connection) }
        func unmergedParcels(limit: Int) throws -> [UnmergedParcel] { try parcels.unmergedParcels(limit: limit) }
        func sightingStates(trackIds: [String]) throws -> [String: SightingState] {
            try parcels.sightingStates(trackIds: trackIds)
        }
        func parcelPasses(from: Timestamp, to: Timestamp) throws -> (
            passes: [ParcelPass], updatedAt: [String: Timestamp]
        ) { try parcels.parcelPasses(from: from, to: to) }
        func saveParcelPasses(_ rows: [ParcelPassRow]) throws { try parcels.saveParcelPasses(rows) }
        func markParcelsMerged(eventIds: [String]) throws { try parcels.markParcelsMerged(eventIds: eventIds) }
        func insertDecision(_ decision: DecisionEvent) throws { try parcels.insertDecision(decision) }
        func unsettledMeasurements(limit: Int) throws -> [UnsettledMeasurement] {
            try parcels.unsettledMeasurements(limit: limit)
        }
        func settleMeasurement(_ measurement: MeasureEvent, passId: String?) throws {
            try parcels.settleMeasurement(measurement, passId: passId)
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
    }
}
