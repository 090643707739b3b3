import Logging
import ScanAggregatorRuntime
import ScanCore
import ScanMetrics
import ScanReconciliation
import ScanServices
import ScanTestTiming
import ScanTesting
import Testing
import ScanEvents

/// Reconciliation in-process over its ports: the store in memory (one transaction a round, rows
/// stamped by the clock), a recording results stream, on a manual clock.
@Suite("aggregator reconciliation on the manual clock", .timed)
struct ReconcileLoopTests {
    /// `SampleTopology.laneL1`: a pass is due when both cameras saw it, or when the lane's
    /// watermark is 4.5 s past its time at cam-1.
    static let topology = SampleTopology.laneL1()

    struct Parts {
        let clock = ManualClock()
        let store: MemoryReconcileStore
        let results = RecordingPublisher()
        let loop: ReconcileLoop
        let t0: Timestamp
        private let ids = Counter()

        init(topology: Topology = ReconcileLoopTests.topology) {
            store = MemoryReconcileStore(clock: clock)
            store.setTopology(topology)
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

        /// A sighting of `value` by `camera` with its own track id, first seen `at` ms after t0.
        func sight(_ value: String, _ camera: String, at offset: Int64, track: String) {
            let first = t0.adding(milliseconds: offset)
            store.addSighting(
                UnreconciledSighting(
                    eventId: track + ".sighting", site: "dc1", camera: camera, trackId: track, symbology: "EAN-13",
                    value: value, valueEncoding: "text", accepted: true, firstSeen: first,
                    lastSeen: first.adding(milliseconds: 200)))
        }

        /// `camera`'s parcel `id` first seen `at` ms after t0, with codes (track id, value).
        func parcel(_ id: String, _ camera: String, at offset: Int64, codes: [(String, String)]) throws {
            let body = SampleEvents.parcel(
                id, camera: camera, firstSeen: t0.adding(milliseconds: offset),
                codes: codes.map { (track: $0.0, value: $0.1, status: "accepted") },
                missing: codes.isEmpty ? ["GS1-128"] : [])
            store.addParcel(try ParcelEvent.parse(try JSONValue.parse(body)))
        }

        func publishedParcelPasses() throws -> [ParcelPassEvent] {
            try results.published.filter { $0.subject.hasPrefix("scantrack.v1.parcelpass.") }.map {
                try ParcelPassEvent.parse(try JSONValue.parse($0.bytes))
            }
        }

        func publishedDecisions() throws -> [DecisionEvent] {
            try results.published.filter { $0.subject.hasPrefix("scantrack.v1.decision.dc1.L1") }.map {
                try DecisionEvent.parse(try JSONValue.parse($0.bytes))
            }
        }

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

    @Test(
        "parcel passes: a code both cameras read joins their parcels once; a camera that read nothing joins by time; a parcel arriving after its pass closed is revision 2"
    )
    func parcelPasses() throws {
        let parts = Parts()
        // Parcel 1: cam-1 reads A; cam-2 (1.5 s later) reads A and B.
        parts.sight("A", "cam-1", at: 0, track: "c1-a")
        parts.sight("A", "cam-2", at: 1_510, track: "c2-a")
        parts.sight("B", "cam-2", at: 1_520, track: "c2-b")
        try parts.parcel("c1-p1", "cam-1", at: 0, codes: [("c1-a", "A")])
        try parts.parcel("c2-p1", "cam-2", at: 1_510, codes: [("c2-a", "A"), ("c2-b", "B")])
        // Parcel 2: cam-1 reads nothing on it; cam-2 reads C.
        parts.sight("C", "cam-2", at: 4_500, track: "c2-c")
        try parts.parcel("c1-p2", "cam-1", at: 3_000, codes: [])
        try parts.parcel("c2-p2", "cam-2", at: 4_520, codes: [("c2-c", "C")])
        let round = try parts.loop.runOnce()
        #expect(round.parcelsMerged == 4 && round.parcelPassesClosed == 2 && round.parcelPassesPublished == 2)
        let passes = try parts.publishedParcelPasses()
        try #require(passes.count == 2)
        #expect(passes[0].codes.map(\.value) == ["A", "B"] && passes[0].cameras == ["cam-1", "cam-2"])
        #expect(passes[0].codes[0].itemId != nil && passes[0].complete && passes[0].revision == 1)
        #expect(passes[1].codes.map(\.value) == ["C"] && passes[1].cameras == ["cam-1", "cam-2"])
        #expect(passes[1].complete, "cam-2 read what cam-1 missed")
        #expect(passes.allSatisfy { $0.camerasExpected == 2 && $0.lane == "L1" })

        // Parcel 3: cam-1 reads D; the lane moves on (E, 20 s later) before cam-2's parcel comes.
        parts.sight("D", "cam-1", at: 10_000, track: "c1-d")
        try parts.parcel("c1-p3", "cam-1", at: 10_000, codes: [("c1-d", "D")])
        parts.sight("E", "cam-1", at: 30_000, track: "c1-e")
        try parts.loop.runOnce()
        let closedAlone = try #require(try parts.publishedParcelPasses().last)
        #expect(
            closedAlone.codes.map(\.value) == ["D"] && closedAlone.cameras == ["cam-1"] && closedAlone.revision == 1)
        parts.sight("D", "cam-2", at: 11_500, track: "c2-d")
        try parts.parcel("c2-p3", "cam-2", at: 11_500, codes: [("c2-d", "D")])
        try parts.loop.runOnce()
        let late = try #require(try parts.publishedParcelPasses().last)
        #expect(late.passId == closedAlone.passId && late.revision == 2 && late.cameras == ["cam-1", "cam-2"])
        #expect(late.codes.map(\.value) == ["D"], "D counted once")
        // Nothing is published twice.
        let ids = try parts.publishedParcelPasses().map(\.eventId)
        #expect(Set(ids).count == ids.count)
    }

    @Test(
        "decisions for a lane the topology has decide: one per parcel pass as it closes, against the orders; one made or sent after its deadline says late"
    )
    func decisions() throws {
        var topology = Self.topology
        topology.sites[0].lanes[0].decision = Topology.LaneDecision(deadlineMilliseconds: 1_000, checkOrders: true)
        let parts = Parts(topology: topology)
        ScanMetrics.bootstrap()
        /// `scantrack_aggregator_decisions_total` for L1 now (other tests of this process may add to it too).
        func counted(_ action: String, late: Bool) -> Double {
            let series =
                #"scantrack_aggregator_decisions_total{site="dc1",lane="L1",action="\#(action)",late="\#(late)"} "#
            return ScanMetrics.text().split(separator: "\n").first { $0.hasPrefix(series) }.flatMap {
                Double($0.dropFirst(series.count))
            } ?? 0
        }
        let before = (pass: counted("pass", late: false), divert: counted("divert", late: false))
        let beforeLate = counted("divert", late: true)
        parts.store.addOrder("ORD-1", lines: [OrderLine(line: 1, code: "A", expected: 1)])
        // Parcel 1: cam-1 reads the order's label, cam-2 its one item. Parcel 2: only an item no order holds.
        parts.sight("ORD-1", "cam-1", at: 0, track: "c1-o")
        parts.sight("A", "cam-2", at: 1_510, track: "c2-a")
        try parts.parcel("c1-p1", "cam-1", at: 0, codes: [("c1-o", "ORD-1")])
        try parts.parcel("c2-p1", "cam-2", at: 1_510, codes: [("c2-a", "A")])
        parts.sight("C", "cam-2", at: 4_500, track: "c2-c")
        try parts.parcel("c1-p2", "cam-1", at: 3_000, codes: [])
        try parts.parcel("c2-p2", "cam-2", at: 4_520, codes: [("c2-c", "C")])
        let round = try parts.loop.runOnce()
        #expect(round.decisions == 2 && round.decisionsPublished == 2)
        let decided = try parts.publishedDecisions()
        try #require(decided.count == 2)
        let passes = try parts.publishedParcelPasses()
        #expect(decided.map(\.parcelId) == passes.map(\.passId), "one decision a pass, named by the pass")
        #expect(decided[0].action == .pass && decided[0].reasons.isEmpty && decided[0].camera == "cam-2")
        #expect(decided[1].action == .divert && decided[1].reasons == [.unknownOrder])
        #expect(decided.allSatisfy { $0.decidedBy == "aggregator" && !$0.late && $0.lane == "L1" })
        #expect(decided[0].closedAt == parts.t0.adding(milliseconds: 1_510 + 300), "cam-2's parcel closed it")
        // Decided before the subject's messages: a diverter is waiting.
        #expect(parts.results.published.first?.subject == "scantrack.v1.decision.dc1.L1")

        // Parcel 3: cam-2 never sends its parcel; the pass closes on the watermark, 30 s later on
        // the wall clock too: decided late, and still sent.
        parts.sight("D", "cam-1", at: 10_000, track: "c1-d")
        try parts.parcel("c1-p3", "cam-1", at: 10_000, codes: [("c1-d", "D")])
        parts.sight("E", "cam-1", at: 30_000, track: "c1-e")
        parts.clock.advance(by: .seconds(30))
        try parts.loop.runOnce()
        let late = try #require(try parts.publishedDecisions().last)
        #expect(late.late && late.reasons == [.unknownOrder] && late.codes.map(\.value) == ["D"])
        // A parcel joining after the pass closed changes the pass (revision 2), not the decision.
        parts.sight("D", "cam-2", at: 11_500, track: "c2-d")
        try parts.parcel("c2-p3", "cam-2", at: 11_500, codes: [("c2-d", "D")])
        #expect(try parts.loop.runOnce().decisions == 0)
        #expect(try parts.publishedDecisions().count == 3)

        // JetStream away when a decision is made: it is kept and sent in a later round, marked late
        // once its deadline has passed, and stored as sent.
        parts.sight("F", "cam-1", at: 40_000, track: "c1-f")
        parts.sight("F", "cam-2", at: 41_500, track: "c2-f")
        try parts.parcel("c1-p4", "cam-1", at: 40_000, codes: [("c1-f", "F")])
        try parts.parcel("c2-p4", "cam-2", at: 41_500, codes: [("c2-f", "F")])
        parts.results.failNext(1)
        #expect(try parts.loop.runOnce().decisions == 1)
        #expect(try parts.publishedDecisions().count == 3)
        parts.clock.advance(by: .seconds(60))
        #expect(try parts.loop.runOnce().decisionsPublished == 1)
        let retried = try #require(try parts.publishedDecisions().last)
        #expect(retried.codes.map(\.value) == ["F"] && retried.late)
        #expect(parts.store.decisions.allSatisfy(\.published) && parts.store.decisions.last?.decision.late == true)
        // Counted as published, by action and lateness: one pass and one divert in time, two late diverts.
        #expect(counted("pass", late: false) >= before.pass + 1)
        #expect(counted("divert", late: false) >= before.divert + 1)
        #expect(counted("divert", late: true) >= beforeLate + 2)
    }

    @Test(
        "a measurement joins its parcel pass: before it closes, or after as a new revision; one no pass was near is given up once the lane moved on"
    )
    func measurements() throws {
        var topology = Self.topology
        topology.sites[0].lanes[0].measureOffsetMilliseconds = 2_500  // the scale, 1 s past cam-2
        let parts = Parts(topology: topology)
        func measure(_ id: String, at offset: Int64, lane: String = "L1", weight: Double) -> MeasureEvent {
            MeasureEvent(
                eventId: id, site: "dc1", lane: lane, device: "scale-1", time: parts.t0.adding(milliseconds: offset),
                weight: weight)
        }
        // Parcel 1 is weighed before cam-2 sends its parcel: the open pass takes it.
        parts.sight("A", "cam-1", at: 0, track: "c1-a")
        try parts.parcel("c1-p1", "cam-1", at: 0, codes: [("c1-a", "A")])
        parts.store.addMeasurement(measure("w1", at: 2_540, weight: 1.25))
        parts.store.addMeasurement(measure("w-elsewhere", at: 2_540, lane: "L9", weight: 9))
        let first = try parts.loop.runOnce()
        #expect(first.measurementsAttached == 1 && first.measurementsUnmatched == 1 && first.parcelPassesClosed == 0)
        parts.sight("A", "cam-2", at: 1_510, track: "c2-a")
        try parts.parcel("c2-p1", "cam-2", at: 1_510, codes: [("c2-a", "A")])
        try parts.loop.runOnce()
        let weighed = try #require(try parts.publishedParcelPasses().last)
        #expect(
            weighed.revision == 1 && weighed.measurement?.weight == 1.25 && weighed.measurement?.device == "scale-1")
        // Parcel 2 closes before its weight comes: published again as revision 2, with it.
        parts.sight("B", "cam-1", at: 5_000, track: "c1-b")
        parts.sight("B", "cam-2", at: 6_500, track: "c2-b")
        try parts.parcel("c1-p2", "cam-1", at: 5_000, codes: [("c1-b", "B")])
        try parts.parcel("c2-p2", "cam-2", at: 6_500, codes: [("c2-b", "B")])
        try parts.loop.runOnce()
        #expect(try parts.publishedParcelPasses().last?.measurement == nil)
        parts.store.addMeasurement(measure("w2", at: 7_480, weight: 7.5))
        #expect(try parts.loop.runOnce().measurementsAttached == 1)
        let late = try #require(try parts.publishedParcelPasses().last)
        #expect(late.revision == 2 && late.measurement?.weight == 7.5 && late.codes.map(\.value) == ["B"])
        // A weight with no parcel near it waits, then is given up once the lane has moved past it.
        parts.store.addMeasurement(measure("w3", at: 20_000, weight: 2))
        #expect(try parts.loop.runOnce().measurementsUnmatched == 0)
        parts.sight("Z", "cam-1", at: 40_000, track: "c1-z")
        #expect(try parts.loop.runOnce().measurementsUnmatched == 1)
        #expect(parts.store.measurementPasses["w3"] == .some(nil))
        #expect(parts.store.measurementPasses["w1"] == .some(weighed.passId))
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
