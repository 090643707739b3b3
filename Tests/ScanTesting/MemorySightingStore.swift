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
    /// What each family stored, by event id.
    private var stored: [SubjectFamily: [String: IngestEvent]] = [:]
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

    /// The stored events of one family: `extract` gives the family's wire type.
    private func family<Event>(_ family: SubjectFamily, _ extract: (IngestEvent) -> Event?) -> [Event] {
        lock.withLock { (stored[family] ?? [:]).values.compactMap(extract) }
    }
    public var sightings: [SightingEvent] { family(.sighting) { if case .sighting(let e) = $0 { e } else { nil } } }
    public var sessions: [SessionEvent] { family(.session) { if case .session(let e) = $0 { e } else { nil } } }
    public var noReads: [NoReadEvent] { family(.noread) { if case .noRead(let e) = $0 { e } else { nil } } }
    public var readings: [ReadingEvent] { family(.reading) { if case .reading(let e) = $0 { e } else { nil } } }
    public var parcels: [ParcelEvent] { family(.parcel) { if case .parcel(let e) = $0 { e } else { nil } } }
    public var decisions: [DecisionEvent] { family(.decision) { if case .decision(let e) = $0 { e } else { nil } } }
    public var measurements: [MeasureEvent] { family(.measure) { if case .measure(let e) = $0 { e } else { nil } } }
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
            for (event, _) in batch.events where stored[event.family, default: [:]][event.eventId] == nil {
                stored[event.family, default: [:]][event.eventId] = event
                added[event.family] += 1
            }
            letters += batch.refused
            return added
        }
    }

    public func isTransient(_ error: any Error) -> Bool { error is Unavailable }

    public func reset() { lock.withLock { resets += 1 } }
}
