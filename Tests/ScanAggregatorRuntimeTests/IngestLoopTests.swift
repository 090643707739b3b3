import Logging
import ScanAggregatorRuntime
import ScanCore
import ScanServices
import ScanTestTiming
import ScanTesting
import Testing
import ScanEvents
import ScanReconciliation

/// Ingest in-process over its ports: a scripted durable consumer, a store in memory that can
/// fail like a restarting database, a recording dead-letter stream, on a manual clock (retries
/// and ack waits cost no wall time).
@Suite("aggregator ingest on the manual clock", .timed)
struct IngestLoopTests {
    static let subject = "scantrack.v1.sighting.dc1.cam-1"

    struct Parts {
        let clock = ManualClock()
        let consumer: ScriptedConsumer
        let store = MemorySightingStore()
        let deadLetters = RecordingPublisher()
        let loop: IngestLoop

        init(batch: Int = 100, storeAttempts: Int = 600, logger: Logger = Logger(label: "test")) {
            consumer = ScriptedConsumer(clock: clock, ackWait: .seconds(10))
            var settings = IngestLoop.Settings(subjects: ContractSubjects(prefix: "scantrack"))
            settings.batchSize = batch
            settings.storeAttempts = storeAttempts
            loop = IngestLoop(
                settings: settings, consumer: consumer, store: store, publisher: deadLetters, clock: clock,
                logger: logger)
        }

        /// Runs the loop until `done` (at most `rounds` times).
        func run(rounds: Int = 50, until done: () -> Bool) throws {
            for _ in 0..<rounds where !done() { try loop.runOnce() }
        }
    }

    @Test("a store that fails for a while is waited out on the poll: every event stored once, all acknowledged")
    func storeRetry() throws {
        let parts = Parts()
        defer { parts.loop.close() }
        for n in 0..<30 { parts.consumer.append(subject: Self.subject, bytes: SampleEvents.sighting(n)) }
        parts.store.failNext(3)
        try parts.run { parts.loop.totals.messages >= 30 }
        #expect(parts.store.sightings.count == 30)
        #expect(parts.store.attempts == 4, "three failures, then the commit")
        #expect(parts.store.resetCount == 3, "each failure dropped the connection")
        #expect(parts.consumer.acknowledged.count == 30)
        // The waits were the poll's 0.25 s with its ±20 % jitter, on the clock.
        let waits = parts.clock.sleeps
        #expect(waits.count == 3)
        #expect(waits.allSatisfy { $0 >= .milliseconds(200) && $0 <= .milliseconds(300) }, "\(waits)")
    }

    @Test("a batch the store cannot take is not acknowledged; redelivered after the ack wait, it is stored once")
    func redeliveryAfterFailure() throws {
        let parts = Parts(storeAttempts: 3)
        defer { parts.loop.close() }
        for n in 0..<10 { parts.consumer.append(subject: Self.subject, bytes: SampleEvents.sighting(n)) }
        parts.store.failNext(3)
        #expect(throws: MemorySightingStore.Unavailable.self) { try parts.loop.runOnce() }
        #expect(parts.store.sightings.isEmpty)
        #expect(parts.consumer.acknowledged.isEmpty, "nothing acknowledged that was not committed")
        // A new loop (the aggregator restarted) gets them once the ack wait has passed.
        let again = IngestLoop(
            settings: parts.loop.settings, consumer: parts.consumer, store: parts.store,
            publisher: parts.deadLetters, clock: parts.clock, logger: Logger(label: "test"))
        defer { again.close() }
        #expect(try again.runOnce().messages == 0, "still within the ack wait")
        parts.clock.advance(by: .seconds(11))
        for _ in 0..<5 where again.totals.messages < 10 { try again.runOnce() }
        #expect(parts.store.sightings.count == 10)
        #expect(parts.consumer.acknowledged.count == 10)
        #expect(parts.consumer.deliveries.values.allSatisfy { $0 == 2 })
    }

    @Test("lost acknowledgements: the messages come again and are counted as duplicates, nothing stored twice")
    func lostAcks() throws {
        let parts = Parts()
        defer { parts.loop.close() }
        for n in 0..<5 { parts.consumer.append(subject: Self.subject, bytes: SampleEvents.sighting(n)) }
        parts.consumer.loseNextAcks(2)
        try parts.run { parts.loop.totals.messages >= 5 }
        #expect(parts.loop.acksLost == 2)
        #expect(parts.consumer.acknowledged.count == 3)
        parts.clock.advance(by: .seconds(11))
        try parts.run { parts.loop.totals.messages >= 7 }
        #expect(parts.loop.totals.duplicates == 2)
        #expect(parts.loop.totals.stored[.sighting] == 5)
        #expect(parts.store.sightings.count == 5)
        #expect(parts.consumer.acknowledged.count == 5)
    }

    @Test("a stream that cannot deliver pauses ingest on the poll and binds the consumer again; nothing is lost")
    func fetchFailures() throws {
        let parts = Parts()
        defer { parts.loop.close() }
        for n in 0..<4 { parts.consumer.append(subject: Self.subject, bytes: SampleEvents.sighting(n)) }
        parts.consumer.failNextFetches(20)
        for _ in 0..<20 { #expect(try parts.loop.runOnce().messages == 0) }
        #expect(parts.consumer.rebinds == 1, "bound again after 20 failures in a row")
        #expect(parts.clock.sleeps.count == 20)
        try parts.run { parts.loop.totals.messages >= 4 }
        #expect(parts.store.sightings.count == 4)
    }

    @Test("reading events are stored once; one naming another camera than its subject is a dead letter")
    func readingEvents() throws {
        let parts = Parts()
        defer { parts.loop.close() }
        let camera = CameraIdentity(id: "cam-1", site: "dc1")
        let paused = ReadingEvent(
            kind: .paused, eventId: "cam-1-r.reading.1", camera: camera,
            time: Timestamp(milliseconds: 1_795_800_000_000),
            reason: .camera, detail: "lost")
        parts.consumer.append(subject: "scantrack.v1.reading.dc1.cam-1", bytes: paused.json)
        parts.consumer.append(subject: "scantrack.v1.reading.dc1.cam-1", bytes: paused.json)  // a replay
        parts.consumer.append(subject: "scantrack.v1.reading.dc1.cam-2", bytes: paused.json)
        try parts.run { parts.loop.totals.messages >= 3 }
        #expect(parts.store.readings == [paused])
        #expect(parts.loop.totals.stored[.reading] == 1 && parts.loop.totals.duplicates == 1)
        #expect(parts.store.deadLetters.map(\.reason) == ["subject-mismatch"])
    }

    @Test("parcel events are stored once; one naming another camera than its subject is a dead letter")
    func parcelEvents() throws {
        let parts = Parts()
        defer { parts.loop.close() }
        let body = #"""
            {"type": "parcel", "eventId": "cam-1-r-p1.parcel", "site": "dc1", "camera": "cam-1", "time": "2026-11-26T06:00:01.000Z",
             "parcelId": "cam-1-r-p1", "firstSeen": "2026-11-26T06:00:00.000Z", "lastSeen": "2026-11-26T06:00:01.000Z",
             "outline": [[0, 0], [9, 0], [9, 9], [0, 9]],
             "codes": [{"trackId": "cam-1-r-1", "symbology": "EAN-13", "value": "4006381333931", "status": "accepted"}],
             "missing": [], "noReads": [], "complete": true, "noRead": false}
            """#
        parts.consumer.append(subject: "scantrack.v1.parcel.dc1.cam-1", bytes: Array(body.utf8))
        parts.consumer.append(subject: "scantrack.v1.parcel.dc1.cam-1", bytes: Array(body.utf8))
        parts.consumer.append(subject: "scantrack.v1.parcel.dc1.cam-9", bytes: Array(body.utf8))
        try parts.run { parts.loop.totals.messages >= 3 }
        #expect(parts.store.parcels.map(\.parcelId) == ["cam-1-r-p1"])
        #expect(parts.store.parcels.first?.codes.map(\.value) == ["4006381333931"])
        #expect(parts.loop.totals.stored[.parcel] == 1 && parts.loop.totals.duplicates == 1)
        #expect(parts.store.deadLetters.map(\.reason) == ["subject-mismatch"])
    }

    @Test(
        "decisions are stored once; one on another lane's subject, naming a camera the topology puts on another lane, or claiming a decider the topology does not give the lane, is a dead letter"
    )
    func decisions() throws {
        let parts = Parts()
        defer { parts.loop.close() }
        parts.store.layout = try Topology.parse(
            Array(
                #"{"version": 1, "sites": [{"id": "dc1", "lanes": [{"id": "L1", "cameras": [{"id": "cam-1"}]}, {"id": "L2", "cameras": [{"id": "cam-2"}]}, {"id": "L3", "cameras": [{"id": "cam-3"}], "decision": {}}]}]}"#
                    .utf8), file: "topology.json")
        func body(camera: String, lane: String, decidedBy: String = "agent") -> [UInt8] {
            Array(
                #"""
                {"type": "decision", "eventId": "\#(camera)-r-p1.decision", "site": "dc1", "camera": "\#(camera)",
                 "time": "2026-11-26T06:00:01.000Z", "lane": "\#(lane)", "parcelId": "\#(camera)-r-p1", "action": "divert",
                 "reasons": ["missing-required"], "codes": [{"symbology": "EAN-13", "value": "4006381333931"}],
                 "lastSeen": "2026-11-26T06:00:00.800Z", "closedAt": "2026-11-26T06:00:01.000Z",
                 "deadline": "2026-11-26T06:00:01.200Z", "late": false, "decidedBy": "\#(decidedBy)"}
                """#.utf8)
        }
        parts.consumer.append(subject: "scantrack.v1.decision.dc1.L1", bytes: body(camera: "cam-1", lane: "L1"))
        parts.consumer.append(subject: "scantrack.v1.decision.dc1.L1", bytes: body(camera: "cam-1", lane: "L1"))
        parts.consumer.append(subject: "scantrack.v1.decision.dc1.L2", bytes: body(camera: "cam-1", lane: "L1"))
        parts.consumer.append(subject: "scantrack.v1.decision.dc1.L1", bytes: body(camera: "cam-2", lane: "L1"))
        // The camera of a lane the agent decides, passing its decision off as the aggregator's;
        // and an agent's decision for the lane the aggregator decides.
        parts.consumer.append(
            subject: "scantrack.v1.decision.dc1.L2", bytes: body(camera: "cam-2", lane: "L2", decidedBy: "aggregator"))
        parts.consumer.append(subject: "scantrack.v1.decision.dc1.L3", bytes: body(camera: "cam-3", lane: "L3"))
        parts.consumer.append(
            subject: "scantrack.v1.decision.dc1.L3", bytes: body(camera: "cam-3", lane: "L3", decidedBy: "aggregator"))
        try parts.run { parts.loop.totals.messages >= 7 }
        #expect(parts.store.decisions.map(\.parcelId).sorted() == ["cam-1-r-p1", "cam-3-r-p1"])
        #expect(parts.store.decisions.first?.reasons == [.missingRequired])
        #expect(parts.loop.totals.stored[.decision] == 2 && parts.loop.totals.duplicates == 1)
        #expect(
            parts.store.deadLetters.map(\.reason) == [
                "subject-mismatch", "lane-mismatch", "subject-mismatch", "subject-mismatch",
            ])
    }

    @Test("a refused message is stored as a dead letter, published once by its stream sequence, and acknowledged")
    func deadLetters() throws {
        let parts = Parts()
        defer { parts.loop.close() }
        parts.consumer.append(subject: Self.subject, bytes: SampleEvents.sighting(1))
        let bad = parts.consumer.append(
            subject: Self.subject, bytes: Array(#"{"type": "sighting", "eventId": 5}"#.utf8))
        // A sighting sent on another camera's subject.
        parts.consumer.append(subject: "scantrack.v1.sighting.dc1.cam-2", bytes: SampleEvents.sighting(2))
        try parts.run { parts.loop.totals.messages >= 3 }
        #expect(parts.store.sightings.map(\.eventId) == ["cam-1-run-1.sighting"])
        #expect(parts.store.deadLetters.map(\.reason) == ["wrong-type", "subject-mismatch"])
        let published = parts.deadLetters.published
        #expect(
            published.map(\.subject) == [
                "scantrack.v1.deadletter.wrong-type", "scantrack.v1.deadletter.subject-mismatch",
            ])
        #expect(published.first?.id == "deadletter-SCANTRACK_AGENT-\(bad)")
        let letter = try DeadLetterEvent.parse(try JSONValue.parse(published[0].bytes))
        #expect(letter.subject == Self.subject)
        #expect(parts.consumer.acknowledged.count == 3)
    }

    @Test(
        "refused messages are logged at most once per 10 s, naming the first one's reason and its sender's trace id; every one is kept as a dead letter"
    )
    func refusalsLogged() throws {
        let recorder = LogRecorder()
        let parts = Parts(batch: 1, logger: recorder.logger())
        defer { parts.loop.close() }
        let garbage = Array(#"{"type": "sighting", "eventId": 5}"#.utf8)
        let trace = TraceContext.forEvent("cam-2-run-2.sighting")
        // On another camera's subject, with a valid traceparent; then, at once, a message that is
        // not an event, with a header that is not a traceparent.
        parts.consumer.append(
            subject: "scantrack.v1.sighting.dc1.cam-2", bytes: SampleEvents.sighting(2), traceparent: trace.traceparent)
        parts.consumer.append(subject: Self.subject, bytes: garbage, traceparent: "00-zz-01")
        try parts.run { parts.loop.totals.messages >= 2 }
        func refusals() -> [String] { recorder.messagesWithMetadata.filter { $0.hasPrefix("messages refused") } }
        #expect(refusals().count == 1, "\(refusals())")
        let first = try #require(refusals().first)
        #expect(first.contains("reason=subject-mismatch") && first.contains("\(LogKey.trace)=\(trace.traceId)"))
        // Ten seconds on, the next refusal is a line again, without a trace id (its header was not one).
        parts.clock.advance(by: .seconds(10))
        parts.consumer.append(subject: Self.subject, bytes: garbage, traceparent: "00-zz-01")
        try parts.run { parts.loop.totals.messages >= 3 }
        #expect(refusals().count == 2, "\(refusals())")
        #expect(refusals().last.map { $0.contains("reason=wrong-type") && !$0.contains(LogKey.trace) } == true)
        #expect(parts.store.deadLetters.map(\.reason) == ["subject-mismatch", "wrong-type", "wrong-type"])
    }
}
