import Foundation
import Logging
import ScanCore
import ScanNATS
import ScanTestSupport
import ScanTestTiming
import ScanTesting
import Testing

@testable import ScanAggregator
import ScanEvents
import ScanPipeline

/// Ingest's logic over its storage port: a real nats-server, an in-memory store that can fail
/// like a restarting database. (PostgreSQL's side of the contract: IngestTests.)
@Suite("ingest over the storage port", .timed, .enabled(if: TestEnvironment.natsEnabled))
struct IngestLogicTests {
    @Test(
        "a store that fails for a while is waited out: every event stored once, bad ones dead-lettered, all acknowledged"
    )
    func transientStoreFailures() throws {
        var settings = IngestSettings(natsURL: try TestEnvironment.requireNATS(), postgresDSN: "unused")
        settings.prefix = TestEnvironment.uniqueName("st")
        settings.fetchWaitMilliseconds = 200
        settings.ackWaitMilliseconds = 500
        let jetStream = try NATSConnection(url: settings.natsURL).jetStream()
        try Ingestor.ensureStreams(jetStream, settings)
        defer {
            try? jetStream.deleteStream(settings.agentStream)
            try? jetStream.deleteStream(settings.deadLetterStream)
            try? jetStream.deleteStream(settings.subjects.resultsStream)
        }
        let subject = "\(settings.prefix).v1.sighting.dc1.cam-1"
        for n in 0..<20 {
            _ = try jetStream.publish(subject: subject, bytes: IngestTests.sighting(n), messageID: "m\(n)")
        }
        // The same event again under another message id (a replay): stored once.
        _ = try jetStream.publish(subject: subject, bytes: IngestTests.sighting(3), messageID: "again-3")
        _ = try jetStream.publish(
            subject: subject, bytes: Array(#"{"type": "sighting", "eventId": 5}"#.utf8), messageID: "bad")

        let store = MemorySightingStore()
        store.failNext(3)
        let ingestor = try Ingestor(settings: settings, logger: Logger(label: "test"), store: store)
        defer { ingestor.close() }
        try IngestTests.drain(ingestor) { ingestor.totals.messages >= 22 }
        #expect(store.sightings.count == 20)
        #expect(Set(store.sightings.map(\.eventId)).count == 20)
        #expect(store.deadLetters.map(\.reason) == ["wrong-type"])
        #expect(store.deadLetters.first?.detail == "eventId is a number, not a string")
        #expect(store.resetCount == 3, "each failure dropped the connection")
        #expect(ingestor.totals.duplicates == 1)
        #expect(ingestor.totals.deadLetters == 1)

        // Everything was acknowledged, as the server counts it (acknowledgements are sent without
        // waiting for a reply): nothing is left to be delivered again once the ack wait passes.
        let settled = Polling.until(seconds: 120) {
            (try? jetStream.consumerBacklog(stream: settings.agentStream, consumer: settings.durable)).map {
                $0.pending == 0 && $0.ackPending == 0
            } ?? false
        }
        #expect(settled, "nothing pending or unacknowledged on the consumer")
        let again = try ingestor.runOnce()
        #expect(again.messages == 0)
        #expect(store.sightings.count == 20)
    }
}

@Suite("heartbeat rows", .timed)
struct HeartbeatRowTests {
    @Test("a heartbeat is stored only from the subject of the site and camera it names")
    func senderChecked() throws {
        var status = AgentStatus()
        (status.runId, status.sourceType, status.sourceState) = ("r1", "clip", "streaming")
        let event = EventFactory(camera: CameraIdentity(id: "cam-1", site: "dc1")).status(
            status, time: Timestamp(milliseconds: 1_795_800_000_000), sequence: 1)
        let subjects = ContractSubjects(prefix: "scantrack")
        let row = HeartbeatRecorder.row(event.json, subject: "scantrack.v1.status.dc1.cam-1", subjects: subjects)
        #expect(row?.prefix(3) == ["cam-1-r1.status.1", "dc1", "cam-1"])
        for subject in [
            "scantrack.v1.status.dc1.cam-2", "scantrack.v1.status.dc2.cam-1", "scantrack.v1.status.dc1.cam-1.x",
            "other.v1.status.dc1.cam-1", "scantrack.v1.sighting.dc1.cam-1",
        ] {
            #expect(HeartbeatRecorder.row(event.json, subject: subject, subjects: subjects) == nil, "\(subject)")
        }
    }
}
