import Foundation
import Logging
import ScanAggregatorRuntime
import ScanCore
import ScanEvents
import ScanReconciliation
import ScanServices
import ScanTestTiming
import ScanTesting
import ServiceLifecycle
import Testing

/// The runtime's services in one group, over fakes on a manual clock: start, work, shutdown order.
@Suite("aggregator runtime services", .timed)
struct AggregatorRuntimeTests {
    @Test(
        "graceful shutdown stops ingest first (every message it fetched is stored and acknowledged), then reconciliation"
    )
    func shutdownOrder() async throws {
        let clock = ManualClock()
        let consumer = ScriptedConsumer(clock: clock)
        let store = MemorySightingStore()
        let reconcileStore = MemoryReconcileStore(clock: clock)
        let results = RecordingPublisher()
        let recorder = LogRecorder()
        let logger = recorder.logger()
        var settings = IngestLoop.Settings(subjects: ContractSubjects(prefix: "scantrack"))
        settings.batchSize = 7
        for n in 0..<40 {
            consumer.append(subject: "scantrack.v1.sighting.dc1.cam-1", bytes: SampleEvents.sighting(n))
        }
        let ingestSettings = settings
        let runtime = AggregatorRuntime(
            ingest: { _ in
                IngestLoop(
                    settings: ingestSettings, consumer: consumer, store: store, publisher: results, clock: clock,
                    logger: logger)
            },
            reconcile: { _ in
                ReconcileLoop(
                    store: reconcileStore, publisher: results, subjects: ingestSettings.subjects, clock: clock,
                    logger: logger)
            }, clock: clock, logger: logger)
        let group = programGroup(runtime.services, stopsOnSignals: false, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            #expect(await waitUntil { consumer.deliveries.count >= 14 })
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        // Nothing fetched is left for the ack wait: what ingest held, it stored and acknowledged.
        #expect(consumer.acknowledged.count == consumer.deliveries.count)
        #expect(store.sightings.count == consumer.deliveries.count)
        #expect(runtime.ingestTotals.stored[.sighting] == store.sightings.count)
        // Ingest stopped first, then reconciliation.
        let messages = recorder.messages
        let ingestStopped = try #require(messages.firstIndex(of: "ingest stopped"))
        let reconcilerStopped = try #require(messages.firstIndex(of: "reconciler stopped"))
        #expect(ingestStopped < reconcilerStopped, "\(messages)")
    }

    @Test("a failing reconciliation round is retried on the poll, each wait on the clock; the service keeps going")
    func reconcileRetries() async throws {
        let clock = ManualClock()
        let inner = MemoryReconcileStore(clock: clock)
        inner.failNext(5)
        let results = RecordingPublisher()
        let logger = Logger(label: "test")
        let loop = ReconcileLoop(
            store: inner, publisher: results, subjects: ContractSubjects(prefix: "scantrack"), clock: clock,
            logger: logger)
        // Ingest beside it, with nothing to take.
        let ingest = IngestLoop(
            settings: IngestLoop.Settings(subjects: ContractSubjects(prefix: "scantrack")),
            consumer: ScriptedConsumer(clock: clock), store: MemorySightingStore(), publisher: results, clock: clock,
            logger: logger)
        let runtime = AggregatorRuntime(
            ingest: { _ in ingest }, reconcile: { _ in loop }, clock: clock, logger: logger)
        let group = programGroup(runtime.services, stopsOnSignals: false, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            #expect(await waitUntil { clock.sleeps.count >= 7 })
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        let sleeps = clock.sleeps
        #expect(sleeps.count >= 6)
        // Five retries at the poll's 0.25 s ± 20 %, then the pause between quiet rounds.
        #expect(sleeps.prefix(5).allSatisfy { $0 >= .milliseconds(200) && $0 <= .milliseconds(300) }, "\(sleeps)")
        #expect(sleeps[5] == runtime.reconcilePause)
    }

    /// The system's clock, counting the sleeps begun on it.
    final class CountingWallClock: ServiceClock, @unchecked Sendable {
        // @unchecked: guarded by the lock.
        private let system = SystemClock()
        private let lock = NSLock()
        private var begun = 0
        var sleepsBegun: Int { lock.withLock { begun } }
        var now: Timestamp { system.now }
        var elapsed: Duration { system.elapsed }
        func sleep(for duration: Duration, stop: StopToken) -> Bool {
            lock.withLock { begun += 1 }
            return system.sleep(for: duration, stop: stop)
        }
    }

    @Test(
        "parcels stored by ingest end the reconciliation pause at once (a decision is waiting), an hour-long pause included; a stop ends it too"
    )
    func parcelsWakeReconciliation() async throws {
        let clock = ManualClock()
        let wall = CountingWallClock()
        let consumer = ScriptedConsumer(clock: clock)
        let reconcileStore = MemoryReconcileStore(clock: clock)
        reconcileStore.setTopology(
            Topology(sites: [
                Topology.Site(
                    id: "dc1",
                    lanes: [Topology.Lane(id: "L1", cameras: [Topology.LaneCamera(id: "cam-1", offsetMilliseconds: 0)])]
                )
            ]))
        let results = RecordingPublisher()
        let logger = Logger(label: "test")
        let settings = IngestLoop.Settings(subjects: ContractSubjects(prefix: "scantrack"))
        let runtime = AggregatorRuntime(
            ingest: { _ in
                IngestLoop(
                    settings: settings, consumer: consumer, store: MemorySightingStore(), publisher: results,
                    clock: clock, logger: logger)
            },
            reconcile: { _ in
                ReconcileLoop(
                    store: reconcileStore, publisher: results, subjects: settings.subjects, clock: clock, logger: logger
                )
            }, clock: wall, logger: logger, reconcilePause: .seconds(3600))
        let group = programGroup(runtime.services, stopsOnSignals: false, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            // The first round found nothing and the reconciler sleeps for an hour.
            #expect(await waitUntil { wall.sleepsBegun >= 1 })
            let body = #"""
                {"type": "parcel", "eventId": "p1.parcel", "site": "dc1", "camera": "cam-1", "time": "\#(clock.now)",
                 "parcelId": "p1", "lane": "L1", "firstSeen": "\#(clock.now)", "lastSeen": "\#(clock.now)",
                 "outline": [[0, 0], [9, 0], [9, 9], [0, 9]], "codes": [], "missing": [], "noReads": []}
                """#
            // What ingest stores reaches reconciliation through the store in production; here both.
            reconcileStore.addParcel(try ParcelEvent.parse(try JSONValue.parse(Array(body.utf8))))
            consumer.append(subject: "scantrack.v1.parcel.dc1.cam-1", bytes: Array(body.utf8))
            let started = ContinuousClock.now
            var published = false
            while !published && ContinuousClock.now - started < .seconds(60) {
                published = results.published.contains { $0.subject == "scantrack.v1.parcelpass.dc1.L1" }
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(published, "the parcel pass went out without waiting out the pause")
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(runtime.reconcileTotals.parcelPassesPublished == 1)
    }
}
