import Foundation
import ScanAggregatorRuntime
import ScanCore
import ScanEvents

/// Ingest's store in memory: idempotent on event ids like the real one, and able to fail the
/// next calls as a restarting database would.
public final class MemorySightingStore: SightingStore, @unchecked Sendable {
    // @unchecked: guarded by the lock (the ingest writer thread and the test read it).
    private let lock = NSLock()
    private var sightingsById: [String: SightingEvent] = [:]
    private var sessionsById: [String: SessionEvent] = [:]
    private var noReadsById: [String: NoReadEvent] = [:]
    private var readingsById: [String: ReadingEvent] = [:]
    private var parcelsById: [String: ParcelEvent] = [:]
    private var letters: [RefusedMessage] = []
    private var failures = 0
    private var calls = 0
    private var resets = 0

    public struct Unavailable: Error {}

    public init() {}

    /// The next `count` calls fail with a transient error.
    public func failNext(_ count: Int) { lock.withLock { failures = count } }

    public var sightings: [SightingEvent] { lock.withLock { Array(sightingsById.values) } }
    public var sessions: [SessionEvent] { lock.withLock { Array(sessionsById.values) } }
    public var noReads: [NoReadEvent] { lock.withLock { Array(noReadsById.values) } }
    public var readings: [ReadingEvent] { lock.withLock { Array(readingsById.values) } }
    public var parcels: [ParcelEvent] { lock.withLock { Array(parcelsById.values) } }
    public var deadLetters: [RefusedMessage] { lock.withLock { letters } }
    public var attempts: Int { lock.withLock { calls } }
    public var resetCount: Int { lock.withLock { resets } }

    public func store(
        sightings: [(record: SightingEvent, body: String)], sessions: [(record: SessionEvent, body: String)],
        noReads: [NoReadEvent], readings: [ReadingEvent], parcels: [(record: ParcelEvent, body: String)],
        refused: [RefusedMessage]
    ) throws -> StoredCounts {
        try lock.withLock {
            calls += 1
            if failures > 0 {
                failures -= 1
                throw Unavailable()
            }
            var added = StoredCounts()
            for (sighting, _) in sightings where sightingsById[sighting.eventId] == nil {
                sightingsById[sighting.eventId] = sighting
                added.sightings += 1
            }
            for (session, _) in sessions where sessionsById[session.eventId] == nil {
                sessionsById[session.eventId] = session
                added.sessions += 1
            }
            for noRead in noReads where noReadsById[noRead.eventId] == nil {
                noReadsById[noRead.eventId] = noRead
                added.noReads += 1
            }
            for reading in readings where readingsById[reading.eventId] == nil {
                readingsById[reading.eventId] = reading
                added.readings += 1
            }
            for (parcel, _) in parcels where parcelsById[parcel.eventId] == nil {
                parcelsById[parcel.eventId] = parcel
                added.parcels += 1
            }
            letters += refused
            return added
        }
    }

    public func isTransient(_ error: any Error) -> Bool { error is Unavailable }

    public func reset() { lock.withLock { resets += 1 } }
}
