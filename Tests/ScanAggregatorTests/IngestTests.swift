import Foundation
import Logging
import ScanAgentRuntime
import ScanCore
import ScanNATS
import ScanPostgres
import ScanTestSupport
import ScanTestTiming
import ScanTesting
import Testing

@testable import ScanAggregator
import ScanAgentConfig
import ScanEvents
import ScanPipeline

/// Ingest against the real nats-server and PostgreSQL that `make test` starts. Each test has a
/// database and a subject prefix of its own.
@Suite("aggregator ingest", .timed, .enabled(if: TestEnvironment.natsEnabled && TestEnvironment.postgresEnabled))
struct IngestTests {
    struct World {
        var settings: IngestSettings
        var database: PGConnection
        var jetStream: JetStream
        var drop: () -> Void
    }

    static func world() throws -> World {
        let migrated = try MigratedDatabase(prefix: "st_ingest")
        let database = migrated.connection
        var settings = IngestSettings(natsURL: try TestEnvironment.requireNATS(), postgresDSN: migrated.dsn)
        settings.prefix = TestEnvironment.uniqueName("st")
        settings.fetchWaitMilliseconds = 200
        let jetStream = try NATSConnection(url: settings.natsURL).jetStream()
        try Ingestor.ensureStreams(jetStream, settings)
        let drop = {
            // The contract's streams and the senders' the aggregator made from a test's topology.
            let stem = settings.agentStream.dropLast("AGENT".count)
            for name in (try? jetStream.streamNames()) ?? [] where name.hasPrefix(stem) {
                try? jetStream.deleteStream(name)
            }
            migrated.drop()
        }
        return World(settings: settings, database: database, jetStream: jetStream, drop: drop)
    }

    /// A sighting event as an agent writes it.
    static func sighting(
        _ n: Int, value: String? = nil, camera: String = "cam-1", firstSeen: Timestamp? = nil,
        status: String = "accepted", symbology: String = "EAN-13", gs1: Bool = false
    ) -> [UInt8] {
        SampleEvents.sighting(
            n, value: value, camera: camera, firstSeen: firstSeen, status: status, symbology: symbology, gs1: gs1)
    }

    @Test("reading events are stored in reading_events, once each")
    func readingEventsStored() throws {
        let world = try Self.world()
        defer { world.drop() }
        let camera = CameraIdentity(id: "cam-1", site: "dc1", lane: "L1")
        let time = Timestamp(milliseconds: 1_795_800_000_000)
        let events = [
            ReadingEvent(
                kind: .paused, eventId: "cam-1-r.reading.1", camera: camera, time: time, reason: .camera,
                detail: "x'; DROP TABLE reading_events; --"),
            ReadingEvent(
                kind: .resumed, eventId: "cam-1-r.reading.2", camera: camera, time: time.adding(milliseconds: 5_000),
                reason: .camera),
        ]
        for (index, event) in (events + events).enumerated() {
            _ = try world.jetStream.publish(
                subject: "\(world.settings.prefix).v1.reading.dc1.cam-1", bytes: event.json, messageID: "m\(index)")
        }
        let ingestor = try Ingestor(settings: world.settings, logger: Logger(label: "test"))
        defer { ingestor.close() }
        try Self.drain(ingestor) { ingestor.totals.messages >= 4 }
        let rows = try world.database.query(
            "SELECT type, reason, detail, lane FROM reading_events ORDER BY event_time"
        ).rows
        #expect(rows.map { $0[0] } == ["reading.paused", "reading.resumed"])
        #expect(rows.first?[2] == "x'; DROP TABLE reading_events; --")
        #expect(rows.first?[3] == "L1")
        #expect(ingestor.totals.stored[.reading] == 2 && ingestor.totals.duplicates == 2)
    }

    @Test(
        "a camera sending reading events and parcels with the ids another camera's will carry does not make that camera's dropped as repeats"
    )
    func anotherCamerasReadingAndParcelIds() throws {
        let world = try Self.world()
        defer { world.drop() }
        let prefix = world.settings.prefix
        let time = Timestamp(milliseconds: 1_795_800_000_000)
        func parcel(_ camera: String) -> [UInt8] {
            Array(
                #"""
                {"type": "parcel", "eventId": "cam-2-r-p1.parcel", "site": "dc1", "camera": "\#(camera)",
                 "time": "\#(time.adding(milliseconds: 500))", "parcelId": "cam-2-r-p1",
                 "firstSeen": "\#(time)", "lastSeen": "\#(time.adding(milliseconds: 300))",
                 "outline": [[0, 0], [9, 0], [9, 9], [0, 9]], "codes": [], "missing": [], "noReads": []}
                """#.utf8)
        }
        // cam-1 first, with cam-2's ids on its own subjects; then cam-2's own.
        for camera in ["cam-1", "cam-2"] {
            let reading = ReadingEvent(
                kind: .paused, eventId: "cam-2-r.reading.1", camera: CameraIdentity(id: camera, site: "dc1"),
                time: time, reason: .camera)
            _ = try world.jetStream.publish(
                subject: "\(prefix).v1.reading.dc1.\(camera)", bytes: reading.json, messageID: camera + "-reading")
            _ = try world.jetStream.publish(
                subject: "\(prefix).v1.parcel.dc1.\(camera)", bytes: parcel(camera), messageID: camera + "-parcel")
        }
        let ingestor = try Ingestor(settings: world.settings, logger: Logger(label: "test"))
        defer { ingestor.close() }
        try Self.drain(ingestor) { ingestor.totals.messages >= 4 }
        for table in ["reading_events", "parcels"] {
            #expect(
                try Self.count(world.database, "SELECT count(*) FROM \(table) WHERE camera = 'cam-2'") == 1, "\(table)")
            #expect(try Self.count(world.database, "SELECT count(*) FROM \(table)") == 2, "\(table)")
        }
        #expect(ingestor.totals.duplicates == 0)
    }

    @Test("decisions are stored in decisions, once each, with their reasons; a value with SQL in it stays a value")
    func decisionsStored() throws {
        let world = try Self.world()
        defer { world.drop() }
        let body = #"""
            {"type": "decision", "eventId": "cam-1-r-p1.decision", "site": "dc1", "camera": "cam-1",
             "time": "2026-11-26T06:00:01.000Z", "lane": "L1", "parcelId": "cam-1-r-p1", "action": "divert",
             "reasons": ["missing-required", "rejected-code"],
             "codes": [{"symbology": "CODE-128", "value": "x'; DROP TABLE decisions; --"}],
             "lastSeen": "2026-11-26T06:00:00.800Z", "closedAt": "2026-11-26T06:00:01.000Z",
             "deadline": "2026-11-26T06:00:01.200Z", "late": true, "decidedBy": "agent"}
            """#
        for index in 0..<2 {
            _ = try world.jetStream.publish(
                subject: "\(world.settings.prefix).v1.decision.dc1.L1", bytes: Array(body.utf8), messageID: "d\(index)")
        }
        let ingestor = try Ingestor(settings: world.settings, logger: Logger(label: "test"))
        defer { ingestor.close() }
        try Self.drain(ingestor) { ingestor.totals.messages >= 2 }
        let rows = try world.database.query(
            "SELECT action, array_to_string(reasons, ','), late, body->'codes'->0->>'value' FROM decisions"
        ).rows
        #expect(rows.count == 1)
        #expect(rows.first?[0] == "divert" && rows.first?[1] == "missing-required,rejected-code")
        #expect(rows.first?[2] == "t" && rows.first?[3] == "x'; DROP TABLE decisions; --")
        #expect(ingestor.totals.stored[.decision] == 1 && ingestor.totals.duplicates == 1)
    }

    static func drain(_ ingestor: Ingestor, until done: () throws -> Bool) throws {
        for _ in 0..<200 {
            try ingestor.runOnce()
            if try done() { return }
        }
    }

    static func count(_ database: PGConnection, _ sql: String) throws -> Int {
        Int(try database.query(sql).rows.first?.first??.description ?? "0") ?? -1
    }

    @Test("every event is stored once: redelivered, republished and replayed events are not duplicated")
    func exactlyOnce() throws {
        let world = try Self.world()
        defer { world.drop() }
        let subject = "\(world.settings.prefix).v1.sighting.dc1.cam-1"
        for n in 0..<300 {
            _ = try world.jetStream.publish(subject: subject, bytes: Self.sighting(n), messageID: "m\(n)")
        }
        // A replay republishes with other message ids: JetStream keeps them, the store must not.
        for n in 0..<50 {
            _ = try world.jetStream.publish(subject: subject, bytes: Self.sighting(n), messageID: "replay\(n)")
        }
        let ingestor = try Ingestor(settings: world.settings, logger: Logger(label: "test"))
        try Self.drain(ingestor) { ingestor.totals.messages >= 350 }
        #expect(ingestor.totals.messages == 350)
        #expect(ingestor.totals.stored[.sighting] == 300)
        #expect(ingestor.totals.duplicates == 50)
        #expect(try Self.count(world.database, "SELECT count(*) FROM sightings") == 300)
        #expect(try Self.count(world.database, "SELECT count(DISTINCT event_id) FROM sightings") == 300)
        // Everything was acknowledged: a new ingestor on the same durable finds nothing left.
        let again = try Ingestor(settings: world.settings, logger: Logger(label: "test"))
        #expect(try again.runOnce().messages == 0)
    }

    @Test("hostile values round-trip unchanged")
    func hostileValues() throws {
        let world = try Self.world()
        defer { world.drop() }
        let values = [
            "'; DROP TABLE sightings; --", "quote\"back\\slash", "emoji 📦🚚", "]C1\u{1D}0104012345678901\u{1D}21AB",
            "tab\tnl\n",
        ]
        let subject = "\(world.settings.prefix).v1.sighting.dc1.cam-1"
        for (n, value) in values.enumerated() {
            _ = try world.jetStream.publish(subject: subject, bytes: Self.sighting(n, value: value), messageID: "h\(n)")
        }
        let ingestor = try Ingestor(settings: world.settings, logger: Logger(label: "test"))
        try Self.drain(ingestor) { ingestor.totals.messages >= values.count }
        let stored = try world.database.query("SELECT value FROM sightings ORDER BY first_frame").rows.map {
            $0[0] ?? ""
        }
        #expect(stored == values)
    }

    @Test("bad input goes to dead letters with its reason, is acknowledged, and never blocks good events")
    func deadLetters() throws {
        let world = try Self.world()
        defer { world.drop() }
        let subject = "\(world.settings.prefix).v1.sighting.dc1.cam-1"
        var bad: [(String, [UInt8])] = [
            ("invalid-json", Array("{not json".utf8)),
            ("not-an-object", Array("[1,2,3]".utf8)),
            ("missing-field", Array(#"{"type":"sighting","eventId":"x"}"#.utf8)),
            ("too-large", [UInt8](repeating: 0x20, count: EventValidator.maxBytes + 1)),
            ("invalid-json", [0xFF, 0xFE, 0x00, 0x01]),
        ]
        var wrongType = String(decoding: Self.sighting(900), as: UTF8.self)
        wrongType = wrongType.replacingOccurrences(of: #""frames":10"#, with: #""frames":"ten""#)
        bad.append(("wrong-type", Array(wrongType.utf8)))
        var nul = String(decoding: Self.sighting(901), as: UTF8.self)
        nul = nul.replacingOccurrences(of: #""status":"accepted""#, with: #""status":"accepted","note":"a\u0000b""#)
        bad.append(("bad-value", Array(nul.utf8)))
        for n in 0..<10 {
            _ = try world.jetStream.publish(subject: subject, bytes: Self.sighting(n), messageID: "g\(n)")
        }
        for (index, item) in bad.enumerated() {
            _ = try world.jetStream.publish(subject: subject, bytes: item.1, messageID: "b\(index)")
        }
        let watcher = try world.jetStream.connection.subscribe(subject: "\(world.settings.prefix).v1.deadletter.>")
        let ingestor = try Ingestor(settings: world.settings, logger: Logger(label: "test"))
        try Self.drain(ingestor) { ingestor.totals.messages >= 10 + bad.count }
        #expect(try Self.count(world.database, "SELECT count(*) FROM sightings") == 10)
        let reasons = try world.database.query("SELECT reason FROM dead_letters ORDER BY id").rows.map { $0[0] ?? "" }
        #expect(reasons.sorted() == bad.map(\.0).sorted())
        let detail =
            (try world.database.query("SELECT detail FROM dead_letters WHERE reason = 'wrong-type'").rows.first?[0]
                ?? nil) ?? ""
        #expect(detail.contains("frames"), "the detail names the field")
        // Each dead letter is also published on deadletter.<reason>.
        var published = 0
        while try watcher.next(timeoutMilliseconds: 500) != nil { published += 1 }
        #expect(published == bad.count)
    }

    @Test(
        "cam-01 publishes cam-02's event ids first, on its own subject: every cam-02 event is still stored, under cam-02, and cam-01's under cam-01"
    )
    func anotherCamerasIds() throws {
        let world = try Self.world()
        defer { world.drop() }
        let prefix = world.settings.prefix
        let cam01 = "\(prefix).v1.sighting.dc1.cam-01"
        let cam02 = "\(prefix).v1.sighting.dc1.cam-02"
        // cam-01 sends events carrying the ids cam-02 will use, with those ids as message ids (as
        // agents did) and with its own subject's message ids (as agents do). (Forging cam-02's
        // message id would need cam-02's run id: 128 random bits, shown nowhere.)
        for n in 0..<10 {
            let stolen = String(decoding: Self.sighting(n, camera: "cam-02"), as: UTF8.self)
                .replacingOccurrences(of: #""camera":"cam-02""#, with: #""camera":"cam-01""#)
            _ = try world.jetStream.publish(
                subject: cam01, bytes: Array(stolen.utf8), messageID: "cam-02-run-\(n).sighting")
            _ = try world.jetStream.publish(
                subject: cam01, bytes: Array(stolen.utf8),
                messageID: SpoolPublisher.messageID(subject: cam01, eventId: "cam-02-run-\(n).sighting"))
        }
        // Then cam-02's own events, as its agent publishes them.
        for n in 0..<10 {
            let duplicate = try world.jetStream.publish(
                subject: cam02, bytes: Self.sighting(n, camera: "cam-02"),
                messageID: SpoolPublisher.messageID(subject: cam02, eventId: "cam-02-run-\(n).sighting")
            ).duplicate
            #expect(!duplicate, "JetStream took cam-02's event \(n) for another's")
        }
        let ingestor = try Ingestor(settings: world.settings, logger: Logger(label: "test"))
        try Self.drain(ingestor) { try Self.count(world.database, "SELECT count(*) FROM sightings") >= 20 }
        #expect(try Self.count(world.database, "SELECT count(*) FROM sightings WHERE camera = 'cam-02'") == 10)
        #expect(try Self.count(world.database, "SELECT count(*) FROM sightings WHERE camera = 'cam-01'") == 10)
        #expect(
            try Self.count(
                world.database, "SELECT count(DISTINCT event_id) FROM sightings WHERE event_id LIKE 'cam-02-run-%'")
                == 10)
    }

    @Test(
        "an event naming another site or camera than its subject, an unknown symbology or a malformed box is a dead letter with its reason; valid ones around them are stored once"
    )
    func senderAndShapes() throws {
        let world = try Self.world()
        defer { world.drop() }
        let prefix = world.settings.prefix
        func edited(_ n: Int, _ from: String, _ to: String) -> [UInt8] {
            Array(String(decoding: Self.sighting(n), as: UTF8.self).replacingOccurrences(of: from, with: to).utf8)
        }
        let bad: [(subject: String, bytes: [UInt8], reason: String, detail: String)] = [
            // A camera's credentials publish only its own subject: the payload claims another.
            ("\(prefix).v1.sighting.dc1.cam-1", Self.sighting(100, camera: "cam-2"), "subject-mismatch", "cam-2"),
            ("\(prefix).v1.sighting.bar.cam-1", Self.sighting(101), "subject-mismatch", "bar"),
            (
                "\(prefix).v1.sighting.dc1.cam",
                Self.sighting(102, camera: "2026-13-45T99:99:99Z"), "bad-token", "2026-13-45T99:99:99Z"
            ),
            (
                "\(prefix).v1.sighting.dc1.cam-1", edited(103, #""symbology":"EAN-13""#, #""symbology":"NaN""#),
                "bad-value", "symbology"
            ),
            (
                "\(prefix).v1.sighting.dc1.cam-1", edited(104, #""symbology":"EAN-13""#, #""symbology":"ean13""#),
                "bad-value", "symbology"
            ),
            (
                "\(prefix).v1.sighting.dc1.cam-1",
                edited(105, #""status":"accepted""#, #""status":"accepted","printedSymbology":"QR""#), "bad-value",
                "printedSymbology"
            ),
        ]
        var boxes: [(subject: String, bytes: [UInt8], reason: String, detail: String)] = []
        let box = #""box":{"first":[[0,0],[9,0],[9,9],[0,9]],"last":[[5,0],[14,0],[14,9],[5,9]]}"#
        for (index, (shape, reason)) in [
            (#""box":true"#, "wrong-type"), (#""box":-1"#, "wrong-type"), (#""box":{}"#, "missing-field"),
            (#""box":{"first":[],"last":[[1,1]]}"#, "wrong-type"),
            (#""box":{"first":[[1,"a"]],"last":[[1,1]]}"#, "bad-value"),
        ].enumerated() {
            boxes.append(("\(prefix).v1.sighting.dc1.cam-1", edited(110 + index, box, shape), reason, "box"))
        }
        for n in 0..<5 {
            _ = try world.jetStream.publish(
                subject: "\(prefix).v1.sighting.dc1.cam-1", bytes: Self.sighting(n), messageID: "g\(n)")
        }
        for (index, item) in (bad + boxes).enumerated() {
            _ = try world.jetStream.publish(subject: item.subject, bytes: item.bytes, messageID: "b\(index)")
            _ = try world.jetStream.publish(
                subject: "\(prefix).v1.sighting.dc1.cam-1", bytes: Self.sighting(200 + index), messageID: "v\(index)")
        }
        // Republished: stored once.
        _ = try world.jetStream.publish(
            subject: "\(prefix).v1.sighting.dc1.cam-1", bytes: Self.sighting(200), messageID: "again")
        let ingestor = try Ingestor(settings: world.settings, logger: Logger(label: "test"))
        let total = 5 + 2 * (bad.count + boxes.count) + 1
        try Self.drain(ingestor) { ingestor.totals.messages >= total }
        #expect(try Self.count(world.database, "SELECT count(*) FROM sightings") == 5 + bad.count + boxes.count)
        #expect(try Self.count(world.database, "SELECT count(*) FROM sightings WHERE camera <> 'cam-1'") == 0)
        let letters = try world.database.query("SELECT reason, detail, subject FROM dead_letters ORDER BY id").rows
        #expect(letters.count == bad.count + boxes.count)
        for (index, item) in (bad + boxes).enumerated() where index < letters.count {
            #expect(letters[index][0] == item.reason, "\(item.detail): \(letters[index])")
            #expect((letters[index][1] ?? "").contains(item.detail), "\(letters[index])")
            #expect(letters[index][2] == item.subject)
        }
    }

    @Test("session events are stored once")
    func sessionEvents() throws {
        let world = try Self.world()
        defer { world.drop() }
        let factory = EventFactory(camera: CameraIdentity(id: "pack-1", site: "dc1", station: "P1"))
        let session = Session(
            id: "pack-1-run-s1", startedAt: Timestamp(milliseconds: 1_795_800_000_000), trigger: "command",
            orderId: "ORD-1")
        let subject = "\(world.settings.prefix).v1.session.dc1.pack-1"
        for event in [
            factory.sessionStarted(session),
            factory.sessionCompleted(session, reason: .command, at: session.startedAt.adding(milliseconds: 5000)),
        ] {
            _ = try world.jetStream.publish(subject: subject, bytes: event.json, messageID: event.eventId)
            _ = try world.jetStream.publish(subject: subject, bytes: event.json, messageID: event.eventId + ".again")
        }
        let ingestor = try Ingestor(settings: world.settings, logger: Logger(label: "test"))
        try Self.drain(ingestor) { ingestor.totals.messages >= 4 }
        let rows = try world.database.query(
            "SELECT type, reason, order_id FROM session_events ORDER BY event_time, type DESC"
        ).rows
        #expect(rows.count == 2)
        #expect(rows.last == ["session.completed", "command", "ORD-1"])
    }
}
