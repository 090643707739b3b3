import Logging
import ScanAggregatorRuntime
import ScanCore
import ScanReconciliation
import ScanServices
import ScanTesting
import Testing
import ScanEvents

/// Reconciliation in-process over its ports: the store in memory (one transaction a round, rows
/// stamped by the clock), a recording results stream, on a manual clock.
@Suite("aggregator reconciliation on the manual clock")
struct ReconcileLoopTests {
    /// Lane L1 of dc1: cam-1, then cam-2 1.5 s later; window 1 s, grace 2 s. A pass is due when
    /// both saw it, or when the lane's watermark is 4.5 s past its time at cam-1.
    static let topology = Topology(sites: [
        Topology.Site(
            id: "dc1",
            lanes: [
                Topology.Lane(
                    id: "L1",
                    cameras: [
                        Topology.LaneCamera(id: "cam-1", offsetMilliseconds: 0),
                        Topology.LaneCamera(id: "cam-2", offsetMilliseconds: 1_500),
                    ])
            ])
    ])

    struct Parts {
        let clock = ManualClock()
        let store: MemoryReconcileStore
        let results = RecordingPublisher()
        let loop: ReconcileLoop
        let t0: Timestamp
        private let ids = Counter()

        init() {
            store = MemoryReconcileStore(clock: clock)
            store.setTopology(ReconcileLoopTests.topology)
            t0 = clock.now
            let ids = self.ids
            loop = ReconcileLoop(
                store: store, publisher: results, subjects: ContractSubjects(prefix: "scantrack"), clock: clock,
                logger: Logger(label: "test"), newId: { "item-\(ids.next())" })
        }

        /// A sighting of `value` by `camera`, first seen `at` ms after t0.
        func sight(_ value: String, _ camera: String, at offset: Int64) {
            let first = t0.adding(milliseconds: offset)
            store.addSighting(
                UnreconciledSighting(
                    eventId: "\(camera)-\(value)-\(offset)", site: "dc1", camera: camera, trackId: "t-\(offset)",
                    symbology: "EAN-13", value: value, valueEncoding: "text", accepted: true, firstSeen: first,
                    lastSeen: first.adding(milliseconds: 200)))
        }

        func pass(_ value: String) -> ItemPass? { store.passes.first { $0.value == value } }

        func publishedItems() throws -> [ItemPassEvent] {
            try results.published.map { try ItemPassEvent.parse(try JSONValue.parse($0.bytes)) }
        }
    }

    /// Item ids in order (item-1, item-2, …), so that a test can name them.
    final class Counter: @unchecked Sendable {
        private var value = 0
        func next() -> Int {
            value += 1
            return value
        }
    }

    @Test("a pass seen by every camera of its lane closes in the round that completes it, and is published once")
    func completePass() throws {
        let parts = Parts()
        parts.sight("A", "cam-1", at: 0)
        let first = try parts.loop.runOnce()
        #expect(first.passesOpened == 1 && first.passesClosed == 0)
        #expect(parts.results.published.isEmpty, "an open pass is not a result")
        parts.sight("A", "cam-2", at: 1_520)
        let second = try parts.loop.runOnce()
        #expect(second.passesClosed == 1 && second.itemsPublished == 1)
        let items = try parts.publishedItems()
        #expect(items.map(\.itemId) == ["item-1"])
        #expect(items.first?.cameras.map(\.camera) == ["cam-1", "cam-2"])
        #expect(items.first?.missing == [])
        #expect(parts.results.published.first?.subject == "scantrack.v1.item.dc1.L1")
        #expect(parts.results.published.first?.id == "item-1.r1")
        #expect(try parts.loop.runOnce().itemsPublished == 0, "published once")
    }

    @Test("a pass a camera missed closes when the lane's watermark passes its window, not before")
    func closesWhenWindowEnds() throws {
        let parts = Parts()
        parts.sight("A", "cam-1", at: 0)
        parts.sight("B", "cam-1", at: 4_400)  // the lane moves on, but not past A's window (4.5 s)
        try parts.loop.runOnce()
        #expect(parts.pass("A")?.closed == false)
        parts.sight("C", "cam-1", at: 4_600)  // now it has
        let counts = try parts.loop.runOnce()
        #expect(counts.passesClosed == 1)
        #expect(parts.pass("A")?.closed == true)
        #expect(parts.pass("B")?.closed == false)
        let items = try parts.publishedItems()
        #expect(items.map(\.value) == ["A"])
        #expect(items.first?.missing == ["cam-2"])
        #expect(items.first?.revision == 1)
    }

    @Test("a lane gone quiet closes its open passes once its whole window has passed on the wall clock")
    func quietLane() throws {
        let parts = Parts()
        parts.sight("A", "cam-1", at: 0)
        try parts.loop.runOnce()
        parts.clock.advance(by: .milliseconds(4_400))
        #expect(try parts.loop.runOnce().passesClosed == 0)
        parts.clock.advance(by: .milliseconds(200))
        #expect(try parts.loop.runOnce().passesClosed == 1)
        #expect(try parts.publishedItems().map(\.value) == ["A"])
    }

    @Test("a late sighting joins the closed pass as a new revision, published again with `late`")
    func lateSighting() throws {
        let parts = Parts()
        parts.sight("A", "cam-1", at: 0)
        parts.sight("Z", "cam-1", at: 5_000)
        try parts.loop.runOnce()
        #expect(parts.pass("A")?.closed == true)
        parts.sight("A", "cam-2", at: 1_600)  // cam-2's sighting arrives after the close
        let counts = try parts.loop.runOnce()
        #expect(counts.lateSightings == 1)
        #expect(counts.passesOpened == 0, "joined, not a new pass")
        let items = try parts.publishedItems().filter { $0.value == "A" }
        #expect(items.map(\.revision) == [1, 2])
        #expect(items.last?.cameras.map(\.late) == [false, true])
        #expect(items.last?.missing == [])
        #expect(parts.results.published.map(\.id).contains("item-1.r2"))
    }

    @Test("a result JetStream refuses stays unpublished and goes out in the next round, once")
    func publishRetry() throws {
        let parts = Parts()
        parts.sight("A", "cam-1", at: 0)
        parts.sight("A", "cam-2", at: 1_500)
        parts.results.failNext(1)
        let first = try parts.loop.runOnce()
        #expect(first.passesClosed == 1 && first.itemsPublished == 0)
        #expect(parts.results.refused == 1)
        let second = try parts.loop.runOnce()
        #expect(second.itemsPublished == 1)
        #expect(parts.results.published.map(\.id) == ["item-1.r1"])
        #expect(try parts.loop.runOnce().itemsPublished == 0)
    }

    @Test("a round the store fails keeps nothing of it; the next round does the work")
    func storeFailure() throws {
        let parts = Parts()
        parts.sight("A", "cam-1", at: 0)
        parts.sight("A", "cam-2", at: 1_500)
        parts.store.failNext(1)
        #expect(throws: MemoryReconcileStore.Unavailable.self) { try parts.loop.runOnce() }
        #expect(parts.store.unreconciledCount == 2)
        #expect(parts.store.passes.isEmpty)
        let counts = try parts.loop.runOnce()
        #expect(counts.passesOpened == 1 && counts.passesClosed == 1 && counts.itemsPublished == 1)
        #expect(parts.loop.totals.passesOpened == 1, "the failed round counted nothing")
    }

    @Test("while another replica holds the lock a round does nothing")
    func lockHeldElsewhere() throws {
        let parts = Parts()
        parts.sight("A", "cam-1", at: 0)
        parts.store.holdLockElsewhere(true)
        let counts = try parts.loop.runOnce()
        #expect(!counts.leader)
        #expect(parts.store.unreconciledCount == 1)
        parts.store.holdLockElsewhere(false)
        #expect(try parts.loop.runOnce().leader)
        #expect(parts.store.unreconciledCount == 0)
    }

    @Test("a no-read is attached to the pass the other camera read once the lane has moved past it")
    func noReadSettled() throws {
        let parts = Parts()
        parts.sight("A", "cam-1", at: 0)
        parts.store.addNoRead(
            eventId: "nr-1", site: "dc1", camera: "cam-2", firstSeen: parts.t0.adding(milliseconds: 1_500))
        try parts.loop.runOnce()
        #expect(parts.store.settledNoReads.isEmpty, "the lane has not moved past it yet")
        parts.sight("Z", "cam-1", at: 6_100)
        let counts = try parts.loop.runOnce()
        #expect(counts.noReadsAttached == 1)
        #expect(parts.store.settledNoReads["nr-1"] == .some("item-1"))
    }
}
