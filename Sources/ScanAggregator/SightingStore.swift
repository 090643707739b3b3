import ScanCore
import ScanPostgres

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

/// Ingest's port to storage: one batch in one transaction, idempotent on event ids (a batch
/// stored twice adds nothing the second time). PostgreSQL in production; an in-memory store
/// in tests of the ingest logic.
public protocol SightingStore: AnyObject {
    /// Stores the batch atomically; returns the sightings, session events and no-reads it added (fewer
    /// than given when some were stored before).
    func store(
        sightings: [(record: SightingEvent, body: String)], sessions: [(record: SessionEvent, body: String)],
        noReads: [NoReadEvent], refused: [RefusedMessage]
    ) throws -> (sightings: Int, sessions: Int, noReads: Int)
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

extension SightingStore {
    public func ping() throws {}
    public func topology() throws -> Topology { Topology(sites: []) }
}

/// The PostgreSQL store (`EventStore` in one transaction), reconnecting after a loss.
public final class PostgresSightingStore: SightingStore {
    private let database: PGReconnecting
    /// A connection of its own for `topology()`, which runs beside `store` on another thread.
    private let layout: PGReconnecting

    public init(dsn: String) {
        database = PGReconnecting(dsn: dsn)
        layout = PGReconnecting(dsn: dsn)
    }

    public func topology() throws -> Topology {
        do {
            return try SiteStore(connection: try layout.connection()).topology()
        } catch {
            layout.reset()
            throw error
        }
    }

    public func store(
        sightings: [(record: SightingEvent, body: String)], sessions: [(record: SessionEvent, body: String)],
        noReads: [NoReadEvent], refused: [RefusedMessage]
    ) throws -> (sightings: Int, sessions: Int, noReads: Int) {
        let connection = try database.connection()
        let store = EventStore(connection: connection)
        return try connection.transaction { () throws(PGError) in
            let storedSightings = try store.insertSightings(sightings)
            let storedSessions = try store.insertSessionEvents(sessions)
            let storedNoReads = try store.insertNoReads(noReads)
            for message in refused {
                try store.insertDeadLetter(
                    subject: message.subject, reason: message.reason, detail: message.detail, payload: message.payload)
            }
            return (storedSightings, storedSessions, storedNoReads)
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
