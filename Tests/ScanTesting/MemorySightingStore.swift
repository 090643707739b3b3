import Foundation
import ScanAggregatorRuntime
import ScanCore
import ScanEvents
import ScanReconciliation

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
    private var decisionsById: [String: DecisionEvent] = [:]
    private var measurementsById: [String: MeasureEvent] = [:]
    private var letters: [RefusedMessage] = []
    private var failures = 0
    private var calls = 0
    private var resets = 0

    public struct Unavailable: Error {}

    /// The site layout ingest checks events against (none: no site described).
    public var layout: Topology {
        get { lock.withLock { site } }
        set { lock.withLock { site = newValue } }
    }
    private var site = Topology(sites: [])
    public func topology() throws -> Topology { layout }

    public init() {}

    /// The next `count` calls fail with a transient error.
    public func failNext(_ count: Int) { lock.withLock { failures = count } }

    public var sightings: [SightingEvent] { lock.withLock { Array(sightingsById.values) } }
    public var sessions: [SessionEvent] { lock.withLock { Array(sessionsById.values) } }
    public var noReads: [NoReadEvent] { lock.withLock { Array(noReadsById.values) } }
    public var readings: [ReadingEvent] { lock.withLock { Array(readingsById.values) } }
    public var parcels: [ParcelEvent] { lock.withLock { Array(parcelsById.values) } }
    public var decisions: [DecisionEvent] { lock.withLock { Array(decisionsById.values) } }
    public var measurements: [MeasureEvent] { lock.withLock { Array(measurementsById.values) } }
    public var deadLetters: [RefusedMessage] { lock.withLock { letters } }
    public var attempts: Int { lock.withLock { calls } }
    public var resetCount: Int { lock.withLock { resets } }

    public func store(_ batch: EventBatch) throws -> StoredCounts {
        try lock.withLock {
            calls += 1
            if failures > 0 {
                failures -= 1
                throw Unavailable()
            }
            var added = StoredCounts()
            for (sighting, _) in batch.sightings where sightingsById[sighting.eventId] == nil {
                sightingsById[sighting.eventId] = sighting
                added.sightings += 1
            }
            for (session, _) in batch.sessions where sessionsById[session.eventId] == nil {
                sessionsById[session.eventId] = session
                added.sessions += 1
            }
            for noRead in batch.noReads where noReadsById[noRead.eventId] == nil {
                noReadsById[noRead.eventId] = noRead
                added.noReads += 1
            }
            for reading in batch.readings where readingsById[reading.eventId] == nil {
                readingsById[reading.eventId] = reading
                added.readings += 1
            }
            for (parcel, _) in batch.parcels where parcelsById[parcel.eventId] == nil {
                parcelsById[parcel.eventId] = parcel
                added.parcels += 1
            }
            for (decision, _) in batch.decisions where decisionsById[decision.eventId] == nil {
                decisionsById[decision.eventId] = decision
                added.decisions += 1
            }
            for (measurement, _) in batch.measurements where measurementsById[measurement.eventId] == nil {
                measurementsById[measurement.eventId] = measurement
                added.measurements += 1
            }
            letters += batch.refused
            return added
        }
    }

    public func isTransient(_ error: any Error) -> Bool { error is Unavailable }

    public func reset() { lock.withLock { resets += 1 } }
}
