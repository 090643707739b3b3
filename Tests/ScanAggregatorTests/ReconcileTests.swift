import Foundation
import Logging
import ScanCore
import ScanEvents
import ScanReconciliation
import ScanNATS
import ScanPostgres
import ScanServices
import ScanTestSupport
import ScanTestTiming
import ScanTesting
import Testing

@testable import ScanAggregator

/// Reconciliation and pack records against the real nats-server and PostgreSQL.
@Suite(
    "aggregator reconciliation and pack records", .timed,
    .enabled(if: TestEnvironment.natsEnabled && TestEnvironment.postgresEnabled))
struct ReconcileTests {
    typealias W = IngestTests

    static let topology = #"""
        {"version": 1, "sites": [{"id": "dc1", "timeZone": "Europe/Zurich",
          "lanes": [{"id": "L1", "windowSeconds": 0.4, "graceSeconds": 1,
                     "cameras": [{"id": "cam-01"}, {"id": "cam-02", "travelSeconds": 1.5}, {"id": "cam-03", "travelSeconds": 1.5}]}],
          "stations": [{"id": "pack-01", "cameras": ["cam-10"]}]}]}
        """#

    static let base = Timestamp(milliseconds: 1_795_800_000_000)

    /// Ingests and reconciles until `done`, like the aggregator's two loops. Rounds wait on the
    /// lane's quiet time (the aggregator's clock against the rows' times), so this is bounded in
    /// time, not rounds; the bound (120 s, a few seconds alone) only catches a hang, also with both
    /// cores kept busy by the rest of the suite.
    static func settle(_ world: IngestTests.World, _ reconcilers: [Reconciler], until done: () throws -> Bool) throws {
        let ingestor = try Ingestor(settings: world.settings, logger: Logger(label: "test"))
        let settled = try Polling.until(seconds: 120) {
            try ingestor.runOnce()
            for reconciler in reconcilers { try reconciler.runOnce() }
            return try done()
        }
        if !settled { Issue.record("did not settle") }
    }

    @Test(
        "three cameras on one lane, identical items back to back: one pass per item, published once on item.<site>.<lane>"
    )
    func threeCameras() throws {
        let world = try W.world()
        defer { world.drop() }
        try SiteStore(connection: world.database).load(try Topology.parse(Array(Self.topology.utf8), file: "t.json"))
        let value = "4006381333931"
        var published = 0
        // Eight identical items 900 ms apart; the middle camera misses item 5; cam-03 publishes first.
        for camera in ["cam-03", "cam-01", "cam-02"] {
            let offset: Int64 = camera == "cam-01" ? 0 : camera == "cam-02" ? 1_500 : 3_000
            for item in 0..<8 where !(camera == "cam-02" && item == 5) {
                let jitter = Int64((item * 37) % 150) - 75
                let at = Self.base.adding(milliseconds: Int64(item) * 900 + offset + jitter)
                let subject = "\(world.settings.prefix).v1.sighting.dc1.\(camera)"
                _ = try world.jetStream.publish(
                    subject: subject, bytes: W.sighting(item, value: value, camera: camera, firstSeen: at),
                    messageID: "\(camera)-\(item)")
                published += 1
            }
        }
        // Noise: a rejected code, a camera on no lane, another code.
        _ = try world.jetStream.publish(
            subject: "\(world.settings.prefix).v1.sighting.dc1.cam-01",
            bytes: W.sighting(50, value: "9999", camera: "cam-01", firstSeen: Self.base, status: "rejected"),
            messageID: "r")
        _ = try world.jetStream.publish(
            subject: "\(world.settings.prefix).v1.sighting.dc1.cam-10",
            bytes: W.sighting(51, value: value, camera: "cam-10", firstSeen: Self.base), messageID: "s")
        _ = try world.jetStream.publish(
            subject: "\(world.settings.prefix).v1.sighting.dc1.cam-02",
            bytes: W.sighting(
                52, value: "5012345678900", camera: "cam-02", firstSeen: Self.base.adding(milliseconds: 1_950)),
            messageID: "o")

        let reconciler = try Reconciler(settings: world.settings, logger: Logger(label: "test"))
        try Self.settle(world, [reconciler]) {
            try W.count(
                world.database,
                "SELECT count(*) FROM item_passes WHERE published_revision = revision AND closed_at IS NOT NULL") == 9
                && W.count(world.database, "SELECT count(*) FROM sightings WHERE NOT reconciled") == 0
        }
        #expect(try W.count(world.database, "SELECT count(*) FROM item_passes WHERE value = '4006381333931'") == 8)
        #expect(try W.count(world.database, "SELECT count(*) FROM item_passes WHERE cameras_seen = 3") == 7)
        #expect(try W.count(world.database, "SELECT count(*) FROM item_passes WHERE missing = '{cam-02}'") == 1)
        #expect(try W.count(world.database, "SELECT count(*) FROM item_sightings") == published + 1)
        // Every pass holds one sighting per camera, all from the same item number.
        let groups = try world.database.query(
            "SELECT string_agg(s.track_id, ' ' ORDER BY s.camera) FROM item_sightings s JOIN item_passes p USING (item_id) WHERE p.value = $1 GROUP BY p.item_id",
            [.text(value)]
        ).rows.map { $0[0] ?? "" }
        for group in groups {
            let items = Set(group.split(separator: " ").map { $0.split(separator: "-").last.map(String.init) ?? "" })
            #expect(items.count == 1, "\(group)")
        }

        let events = try StreamReader.events(
            world.jetStream, stream: world.settings.subjects.resultsStream,
            subject: "\(world.settings.prefix).v1.item.>")
        #expect(events.count == 9)
        #expect(events.allSatisfy { $0.subject == "\(world.settings.prefix).v1.item.dc1.L1" })
        #expect(Set(events.compactMap(\.msgId)).count == 9)
        let incomplete = events.filter { $0.event["complete"] == .bool(false) }
        #expect(incomplete.count == 2)  // the item cam-02 missed, and the other code seen by cam-02 only
        #expect(events.allSatisfy { $0.event["type"] == .string("item") && $0.event["revision"]?.intValue == 1 })

        // A late sighting for the pass cam-02 missed: joins it, republished as revision 2.
        let late = Self.base.adding(milliseconds: 5 * 900 + 1_500)
        _ = try world.jetStream.publish(
            subject: "\(world.settings.prefix).v1.sighting.dc1.cam-02",
            bytes: W.sighting(5, value: value, camera: "cam-02", firstSeen: late),
            messageID: "late")
        try Self.settle(world, [reconciler]) {
            try W.count(
                world.database, "SELECT count(*) FROM item_passes WHERE revision = 2 AND published_revision = 2") == 1
        }
        #expect(try W.count(world.database, "SELECT count(*) FROM item_passes WHERE value = '4006381333931'") == 8)
        #expect(try W.count(world.database, "SELECT count(*) FROM item_passes WHERE cameras_seen = 3") == 8)
        #expect(try W.count(world.database, "SELECT count(*) FROM item_sightings WHERE late") == 1)
        try Self.wmsCheck(world, expectItems: 10, packs: 0)  // nine passes, one republished as revision 2
    }

    @Test(
        "parcel passes on PostgreSQL: the lane's cameras' parcels merged (a shared code once, a camera's no-read parcel by time), stored and published once each on parcelpass.<site>.<lane>"
    )
    func parcelPasses() throws {
        let world = try W.world()
        defer { world.drop() }
        let topology = #"""
            {"version": 1, "sites": [{"id": "dc1", "lanes": [{"id": "L1", "windowSeconds": 0.4, "graceSeconds": 1,
              "cameras": [{"id": "cam-01"}, {"id": "cam-02", "travelSeconds": 1.5}], "measureOffsetSeconds": 2,
              "decision": {"deadlineSeconds": 600, "checkOrders": true}}]}]}
            """#
        let sites = SiteStore(connection: world.database)
        try sites.load(try Topology.parse(Array(topology.utf8), file: "t.json"))
        #expect(try sites.topology().lane(site: "dc1", id: "L1")?.decision?.checkOrders == true, "stored and read back")
        let prefix = world.settings.prefix
        let decisionWatch = try NATSConnection(url: world.settings.natsURL).subscribe(
            subject: "\(prefix).v1.decision.>")
        // The lane decides on the aggregator's clock, the system's: a decision is late when it is
        // made more than deadlineSeconds after its parcel's time. So the parcels are timed from this
        // test's start (a fixed date in the past made every decision late once the date had
        // passed), and the deadline is 600 s: only a defect, not a busy machine, misses it.
        let base = SystemClock().now
        func publish(_ family: String, _ camera: String, _ bytes: [UInt8], _ id: String) throws {
            _ = try world.jetStream.publish(
                subject: "\(prefix).v1.\(family).dc1.\(camera)", bytes: bytes, messageID: id)
        }
        func parcel(_ id: String, _ camera: String, at time: Timestamp, codes: [(Int, String)]) -> [UInt8] {
            SampleEvents.parcel(
                id, camera: camera, firstSeen: time,
                codes: codes.map { (track: "\(camera)-run-\($0.0)", value: $0.1, status: "accepted") }, timeAfter: 500,
                lastAfter: 300)
        }
        // Parcel 1: both cameras read A (x'; DROP… as a value), cam-02 also B. Parcel 2: cam-01 reads
        // nothing on it, cam-02 reads C.
        let a = "x'; DROP TABLE parcel_passes; --"
        // A is also an order's id (a label naming its order), whose one line is B.
        _ = try sites.applyOrder(id: a, site: "dc1", revision: 1, cancel: false, lines: [(1, "B", 1)], source: "test")
        try publish("sighting", "cam-01", W.sighting(1, value: a, camera: "cam-01", firstSeen: base), "s1")
        let later = base.adding(milliseconds: 1_500)
        try publish("sighting", "cam-02", W.sighting(2, value: a, camera: "cam-02", firstSeen: later), "s2")
        try publish("sighting", "cam-02", W.sighting(3, value: "B", camera: "cam-02", firstSeen: later), "s3")
        try publish("parcel", "cam-01", parcel("p1", "cam-01", at: base, codes: [(1, a)]), "p1")
        try publish("parcel", "cam-02", parcel("q1", "cam-02", at: later, codes: [(2, a), (3, "B")]), "q1")
        let second = base.adding(milliseconds: 3_000)
        let secondLater = second.adding(milliseconds: 1_500)
        try publish("sighting", "cam-02", W.sighting(4, value: "C", camera: "cam-02", firstSeen: secondLater), "s4")
        try publish("parcel", "cam-01", parcel("p2", "cam-01", at: second, codes: []), "p2")
        try publish("parcel", "cam-02", parcel("q2", "cam-02", at: secondLater, codes: [(4, "C")]), "q2")

        // The lane's scale weighs parcel 1 (2 s past cam-01); a reading on another lane's subject, one
        // for a lane the site does not have, and one for a site not in the topology are dead letters.
        func measure(_ id: String, lane: String, at time: Timestamp, weight: Double) -> [UInt8] {
            MeasureEvent(eventId: id, site: "dc1", lane: lane, device: "scale-1", time: time, weight: weight).json
        }
        _ = try world.jetStream.publish(
            subject: "\(prefix).v1.measure.dc1.L1",
            bytes: measure("w1", lane: "L1", at: base.adding(milliseconds: 2_050), weight: 1.25),
            messageID: "w1")
        _ = try world.jetStream.publish(
            subject: "\(prefix).v1.measure.dc1.L2", bytes: measure("w2", lane: "L1", at: second, weight: 2),
            messageID: "w2")
        _ = try world.jetStream.publish(
            subject: "\(prefix).v1.measure.dc1.L7", bytes: measure("w3", lane: "L7", at: second, weight: 3),
            messageID: "w3")
        // A site the topology does not have: no lanes, no readings (a gateway writing for any site).
        let elsewhere = MeasureEvent(eventId: "w4", site: "dc9", lane: "L1", device: "scale-1", time: second, weight: 4)
        _ = try world.jetStream.publish(subject: "\(prefix).v1.measure.dc9.L1", bytes: elsewhere.json, messageID: "w4")

        let reconciler = try Reconciler(settings: world.settings, logger: Logger(label: "test"))
        try Self.settle(world, [reconciler]) {
            try W.count(
                world.database,
                "SELECT count(*) FROM parcel_passes WHERE published_revision = revision AND closed_at IS NOT NULL") == 2
                && W.count(world.database, "SELECT count(*) FROM measurements WHERE settled") == 1
        }
        #expect(
            try W.count(
                world.database,
                "SELECT count(*) FROM dead_letters WHERE reason IN ('subject-mismatch', 'lane-mismatch') AND subject LIKE '%.measure.%'"
            ) == 3)
        #expect(try W.count(world.database, "SELECT count(*) FROM measurements WHERE site = 'dc9'") == 0)
        #expect(try W.count(world.database, "SELECT count(*) FROM parcels WHERE NOT merged") == 0)
        let events = try StreamReader.events(
            world.jetStream, stream: world.settings.subjects.resultsStream, subject: "\(prefix).v1.parcelpass.>")
        #expect((2...3).contains(events.count) && events.allSatisfy { $0.subject == "\(prefix).v1.parcelpass.dc1.L1" })
        let passes = try events.map { try ParcelPassEvent.parse($0.event) }.filter { $0.revision == 1 }.sorted {
            $0.firstSeen < $1.firstSeen
        }
        try #require(passes.count == 2)
        #expect(passes[0].codes.map(\.value) == [a, "B"] && passes[0].cameras == ["cam-01", "cam-02"])
        #expect(passes[1].codes.map(\.value) == ["C"] && passes[1].cameras == ["cam-01", "cam-02"])
        #expect(passes.allSatisfy { $0.complete && $0.camerasExpected == 2 })
        // Parcel 1 carries its weight (published with it, or again as revision 2 when weighed after closing).
        let weighed = try #require(
            events.map { try ParcelPassEvent.parse($0.event) }.last { $0.passId == passes[0].passId })
        #expect(weighed.measurement?.weight == 1.25 && weighed.measurement?.device == "scale-1")
        #expect(passes[1].measurement == nil)
        let attached = try world.database.query("SELECT pass_id FROM measurements WHERE settled").rows.map { $0[0] }
        #expect(attached == [passes[0].passId])
        #expect(Set(events.compactMap(\.msgId)).count == events.count, "each revision once")

        // The lane decides: parcel 1 carries its order and the order's line, parcel 2 no known order.
        // (a gateway's view: the lane's stream is the aggregator's work queue)
        var sent: [NATSMessage] = []
        while sent.count < 2, let message = try decisionWatch.next(timeoutMilliseconds: 30_000) { sent.append(message) }
        let decisions = try sent.map { try DecisionEvent.parse(try JSONValue.parse($0.bytes)) }
        #expect(sent.allSatisfy { $0.subject == "\(prefix).v1.decision.dc1.L1" })
        #expect(decisions.map(\.parcelId) == passes.map(\.passId), "one a pass, as they closed")
        #expect(decisions.map(\.action) == [.pass, .divert] && decisions.last?.reasons == [.unknownOrder])
        #expect(decisions.allSatisfy { $0.decidedBy == "aggregator" && !$0.late })
        // Stored once, published, though ingest reads them back from the agents' stream.
        try Self.settle(world, [reconciler]) {
            try W.count(world.database, "SELECT count(*) FROM decisions WHERE published AND decided_by = 'aggregator'")
                == 2
        }
        #expect(try W.count(world.database, "SELECT count(*) FROM decisions") == 2)
        #expect(try W.count(world.database, "SELECT count(*) FROM dead_letters WHERE subject LIKE '%.decision.%'") == 0)
    }

    /// A no-read event as an agent writes it.
    static func noRead(_ id: String, camera: String, at time: Timestamp) -> [UInt8] {
        Array(
            """
            {"type": "noread", "eventId": "\(id)", "site": "dc1", "camera": "\(camera)", "time": "\(time)",
             "trackId": "\(id)", "firstSeen": "\(time)", "lastSeen": "\(time.adding(milliseconds: 300))",
             "firstFrame": 1, "lastFrame": 10, "frames": 10, "box": {"first": [[0, 0]], "last": [[9, 9]]},
             "family": "linear"}
            """.utf8)
    }

    @Test(
        "a lane camera's no-read is attached to the item pass another camera read; one nobody read, or off any lane, to none"
    )
    func noReadsOnPasses() throws {
        let world = try W.world()
        defer { world.drop() }
        try SiteStore(connection: world.database).load(try Topology.parse(Array(Self.topology.utf8), file: "t.json"))
        let prefix = world.settings.prefix
        // Three items read by cam-01 (and cam-03); cam-02 could not read item 1: its no-read comes
        // 1.5 s after cam-01's sighting, as the lane's travel time says.
        for item in 0..<3 {
            for (camera, offset) in [("cam-01", Int64(0)), ("cam-03", Int64(1_500))] {
                _ = try world.jetStream.publish(
                    subject: "\(prefix).v1.sighting.dc1.\(camera)",
                    bytes: W.sighting(
                        item, value: "400638133393\(item)", camera: camera,
                        firstSeen: Self.base.adding(milliseconds: Int64(item) * 2_000 + offset)),
                    messageID: "\(camera)-\(item)")
            }
        }
        let events: [(String, String, Timestamp)] = [
            ("nr-item1", "cam-02", Self.base.adding(milliseconds: 2_000 + 1_500 + 120)),
            // Between items, nothing read there: an item no camera read.
            ("nr-unread", "cam-02", Self.base.adding(milliseconds: 30_000)),
            // A pack-station camera: on no lane.
            ("nr-station", "cam-10", Self.base.adding(milliseconds: 2_000)),
        ]
        for (id, camera, time) in events {
            _ = try world.jetStream.publish(
                subject: "\(prefix).v1.noread.dc1.\(camera)", bytes: Self.noRead(id, camera: camera, at: time),
                messageID: id)
        }
        // Items further on move the lane's watermark past the no-reads.
        _ = try world.jetStream.publish(
            subject: "\(prefix).v1.sighting.dc1.cam-01",
            bytes: W.sighting(
                9, value: "5012345678900", camera: "cam-01", firstSeen: Self.base.adding(milliseconds: 60_000)),
            messageID: "later")
        let reconciler = try Reconciler(settings: world.settings, logger: Logger(label: "test"))
        try Self.settle(world, [reconciler]) {
            try W.count(world.database, "SELECT count(*) FROM noreads WHERE settled") == 3
                && W.count(world.database, "SELECT count(*) FROM noreads") == 3
        }
        let item1 = try world.database.query(
            "SELECT p.value FROM noreads n JOIN item_passes p USING (item_id) WHERE n.event_id = 'nr-item1'"
        ).rows.first?[0]
        #expect(item1 == "4006381333931", "attached to item 1's pass")
        #expect(try W.count(world.database, "SELECT count(*) FROM noreads WHERE item_id IS NULL") == 2)
        #expect(reconciler.totals.noReadsAttached == 1)
    }

    @Test("two reconcilers (replicas) on one database: the same passes, each published once")
    func replicas() throws {
        let world = try W.world()
        defer { world.drop() }
        try SiteStore(connection: world.database).load(try Topology.parse(Array(Self.topology.utf8), file: "t.json"))
        for camera in ["cam-01", "cam-02", "cam-03"] {
            let offset: Int64 = camera == "cam-01" ? 0 : camera == "cam-02" ? 1_500 : 3_000
            for item in 0..<40 {
                let at = Self.base.adding(milliseconds: Int64(item) * 1_000 + offset)
                _ = try world.jetStream.publish(
                    subject: "\(world.settings.prefix).v1.sighting.dc1.\(camera)",
                    bytes: W.sighting(
                        item, value: "40063813\(String(33931 + item % 3))", camera: camera, firstSeen: at),
                    messageID: "\(camera)-\(item)")
            }
        }
        let ingestor = try Ingestor(settings: world.settings, logger: Logger(label: "test"))
        try W.drain(ingestor) { ingestor.totals.messages >= 120 }
        let first = try Reconciler(settings: world.settings, logger: Logger(label: "a"))
        let second = try Reconciler(settings: world.settings, logger: Logger(label: "b"))
        first.batchSize = 25
        second.batchSize = 25
        let runs = [first, second].map { reconciler in
            BackgroundWorker.running("reconciler") {
                for _ in 0..<200 {
                    _ = try? reconciler.runOnce()
                    usleep(20_000)
                }
            }
        }
        for run in runs { run.wait() }
        #expect(try W.count(world.database, "SELECT count(*) FROM item_passes") == 40)
        #expect(
            try W.count(
                world.database, "SELECT count(*) FROM item_passes WHERE cameras_seen = 3 AND published_revision = 1")
                == 40)
        #expect(first.totals.passesOpened + second.totals.passesOpened == 40)
        let events = try StreamReader.events(
            world.jetStream, stream: world.settings.subjects.resultsStream,
            subject: "\(world.settings.prefix).v1.item.>")
        #expect(events.count == 40)
    }

    /// A pack-station session as an agent completes it.
    static func sessionCompleted(
        _ id: String, orderId: String?, codes: [(String, Int, String?)], station: String? = "pack-01"
    ) -> [UInt8] {
        var writer = JSONWriter()
        writer.field("type", "session.completed")
        writer.field("eventId", id + ".completed")
        writer.field("site", "dc1")
        writer.field("camera", "cam-10")
        writer.field("time", Self.base.adding(milliseconds: 9_000).description)
        writer.field("sessionId", id)
        writer.field("reason", "command")
        writer.field("startedAt", Self.base.description)
        writer.field("trigger", "command")
        writer.field("orderId", orderId)
        writer.field("station", station)
        let entries = codes.enumerated().map { index, code -> String in
            var entry = JSONWriter()
            entry.field("value", code.0)
            entry.field("symbology", code.2 == "order" ? "CODE-128" : "EAN-13")
            entry.strings("trackIds", (0..<code.1).map { "\(id)-\(index)-\($0)" })
            entry.field("count", code.1)
            entry.field("role", code.2)
            return entry.text
        }
        writer.raw("codes", Array(("[" + entries.joined(separator: ",") + "]").utf8))
        return writer.finished()
    }

    @Test(
        "pack records: complete, short, over, unexpected and unknown order, stored and published on pack.<site>.<station>"
    )
    func packVerdicts() throws {
        let world = try W.world()
        defer { world.drop() }
        let orders = try OrderCSV.parse(
            "order_id,line,code,quantity\nORD-1,1,4006381333931,2\nORD-1,2,5012345678900,1\n", file: "o.csv")
        try SiteStore(connection: world.database).importOrders(orders, source: "o.csv")
        let a = "4006381333931"
        let b = "5012345678900"
        let cases: [(String, String?, [(String, Int, String?)], String)] = [
            ("s-complete", "ORD-1", [(a, 2, nil), (b, 1, nil)], "complete"),
            ("s-short", "ORD-1", [(a, 1, nil), (b, 1, nil)], "short"),
            ("s-over", "ORD-1", [(a, 2, nil), (b, 2, nil)], "over"),
            ("s-unexpected", "ORD-1", [(a, 2, nil), (b, 1, nil), ("9780201379624", 1, nil)], "unexpected"),
            ("s-unknown", "ORD-404", [(a, 1, nil)], "unknown-order"),
            ("s-label", nil, [("ORD-1", 1, "order"), (a, 2, nil), (b, 1, nil)], "complete"),
            ("s-empty", "ORD-1", [], "short"),
        ]
        let subject = "\(world.settings.prefix).v1.session.dc1.cam-10"
        for (id, order, codes, _) in cases {
            _ = try world.jetStream.publish(
                subject: subject, bytes: Self.sessionCompleted(id, orderId: order, codes: codes), messageID: id)
        }
        // A conveyor session (no station) makes no pack record.
        _ = try world.jetStream.publish(
            subject: subject,
            bytes: Self.sessionCompleted("s-conveyor", orderId: nil, codes: [(a, 1, nil)], station: nil),
            messageID: "conv")
        let reconciler = try Reconciler(settings: world.settings, logger: Logger(label: "test"))
        try Self.settle(world, [reconciler]) {
            try W.count(world.database, "SELECT count(*) FROM pack_records WHERE published") == cases.count
                && W.count(world.database, "SELECT count(*) FROM session_events WHERE NOT packed") == 0
        }
        for (id, _, _, verdict) in cases {
            let stored = try world.database.query(
                "SELECT verdict, order_id FROM pack_records WHERE session_id = $1", [.text(id)]
            ).rows.first
            #expect(stored?[0] == verdict, "\(id)")
        }
        #expect(try W.count(world.database, "SELECT count(*) FROM pack_records") == cases.count)
        let label = try world.database.query("SELECT order_id, items FROM pack_records WHERE session_id = 's-label'")
            .rows.first
        #expect(label?[0] == "ORD-1" && label?[1] == "3")
        let short = try world.database.query(
            "SELECT line, expected, counted, verdict FROM pack_lines WHERE session_id = 's-short' ORDER BY position"
        ).rows
        #expect(short == [["1", "2", "1", "short"], ["2", "1", "1", "complete"]])

        let events = try StreamReader.events(
            world.jetStream, stream: world.settings.subjects.resultsStream,
            subject: "\(world.settings.prefix).v1.pack.>")
        #expect(events.count == cases.count)
        #expect(events.allSatisfy { $0.subject == "\(world.settings.prefix).v1.pack.dc1.pack-01" })
        let byId = Dictionary(uniqueKeysWithValues: events.map { ($0.event["sessionId"]?.stringValue ?? "", $0.event) })
        for (id, _, _, verdict) in cases { #expect(byId[id]?["verdict"] == .string(verdict), "\(id)") }
        let unexpectedLines = byId["s-unexpected"]?["lines"]
        guard case .array(let lines)? = unexpectedLines else {
            Issue.record("no lines in \(String(describing: byId["s-unexpected"]))")
            return
        }
        #expect(lines.count == 3)
        #expect(lines.last?["verdict"] == .string("unexpected"))
        #expect(lines.last?["line"] == nil)
        try Self.wmsCheck(world, expectItems: 0, packs: cases.count)
    }

    @Test(
        "a station or lane holding CR LF, a space or protocol is a bad-token dead letter, one other than the topology's a mismatch; the good pack after them is published and the agents' stream is untouched"
    )
    func hostilePlaces() throws {
        let world = try W.world()
        defer { world.drop() }
        try SiteStore(connection: world.database).load(try Topology.parse(Array(Self.topology.utf8), file: "t.json"))
        let prefix = world.settings.prefix
        let subject = "\(prefix).v1.session.dc1.cam-10"
        let injected = "pack-01\r\nPUB $JS.API.STREAM.DELETE.\(world.settings.agentStream) 0\r\n\r\nPUB x 0\r\n"
        for (id, station) in [("s-inject", injected), ("s-space", "pack 01"), ("s-other", "pack-02")] {
            _ = try world.jetStream.publish(
                subject: subject,
                bytes: Self.sessionCompleted(id, orderId: nil, codes: [("4006381333931", 1, nil)], station: station),
                messageID: id)
        }
        // cam-01 is on lane L1: a sighting that claims L9 would move its reads into another lane's figures.
        let moved = String(decoding: W.sighting(1, camera: "cam-01"), as: UTF8.self)
            .replacingOccurrences(of: #""status":"#, with: #""lane":"L9","status":"#)
        _ = try world.jetStream.publish(
            subject: "\(prefix).v1.sighting.dc1.cam-01", bytes: Array(moved.utf8), messageID: "moved")
        _ = try world.jetStream.publish(
            subject: subject,
            bytes: Self.sessionCompleted("s-good", orderId: nil, codes: [("4006381333931", 1, nil)]),
            messageID: "good")
        let reconciler = try Reconciler(settings: world.settings, logger: Logger(label: "test"))
        try Self.settle(world, [reconciler]) {
            try W.count(world.database, "SELECT count(*) FROM pack_records WHERE published") == 1
                && W.count(world.database, "SELECT count(*) FROM dead_letters") == 4
        }
        let reasons = try world.database.query("SELECT reason, detail FROM dead_letters ORDER BY reason").rows
        #expect(reasons.map { $0[0] ?? "" } == ["bad-token", "bad-token", "lane-mismatch", "station-mismatch"])
        #expect(reasons.allSatisfy { !($0[1] ?? "").contains("\r\n") }, "details show the value escaped")
        #expect(try W.count(world.database, "SELECT count(*) FROM sightings") == 0)
        let packs = try StreamReader.events(
            world.jetStream, stream: world.settings.subjects.resultsStream, subject: "\(prefix).v1.pack.>")
        #expect(packs.map(\.subject) == ["\(prefix).v1.pack.dc1.pack-01"])
        #expect(packs.first?.event["sessionId"] == .string("s-good"))
        #expect(try world.jetStream.replicas(ofStream: world.settings.agentStream) == 1, "the agents' stream is there")
    }

    @Test(
        "a GS1 item's pass says gs1 and carries its application identifiers, as its sightings did; a plain EAN-13's does not; nats-py's consumer checks both against item.schema.json"
    )
    func gs1Items() throws {
        let world = try W.world()
        defer { world.drop() }
        try SiteStore(connection: world.database).load(try Topology.parse(Array(Self.topology.utf8), file: "t.json"))
        let prefix = world.settings.prefix
        // An SSCC, a batch and a best-before date (GS after the variable-length batch).
        let sscc = "00340123450000000017" + "10LOT-7\u{1D}" + "15270131"
        for (camera, offset) in [("cam-01", Int64(0)), ("cam-02", Int64(1_500))] {
            _ = try world.jetStream.publish(
                subject: "\(prefix).v1.sighting.dc1.\(camera)",
                bytes: W.sighting(
                    1, value: sscc, camera: camera, firstSeen: Self.base.adding(milliseconds: offset),
                    symbology: "CODE-128", gs1: true),
                messageID: "gs1-\(camera)")
            _ = try world.jetStream.publish(
                subject: "\(prefix).v1.sighting.dc1.\(camera)",
                bytes: W.sighting(
                    2, value: "4006381333931", camera: camera, firstSeen: Self.base.adding(milliseconds: 5_000 + offset)
                ),
                messageID: "ean-\(camera)")
        }
        let reconciler = try Reconciler(settings: world.settings, logger: Logger(label: "test"))
        try Self.settle(world, [reconciler]) {
            try W.count(
                world.database,
                "SELECT count(*) FROM item_passes WHERE published_revision = revision AND closed_at IS NOT NULL") == 2
        }
        let items = try StreamReader.events(
            world.jetStream, stream: world.settings.subjects.resultsStream, subject: "\(prefix).v1.item.>")
        #expect(items.count == 2)
        let gs1 = try #require(items.first { $0.event["symbology"] == .string("CODE-128") })
        #expect(gs1.event["value"] == .string(sscc))
        #expect(gs1.event["gs1"] == .bool(true))
        #expect(
            gs1.event["gs1Elements"]
                == .object([
                    ("00", .string("340123450000000017")), ("10", .string("LOT-7")), ("15", .string("2027-01-31")),
                ]))
        let plain = try #require(items.first { $0.event["symbology"] == .string("EAN-13") })
        #expect(plain.event["gs1"] == nil && plain.event["gs1Elements"] == nil)
        // As a consumer in Swift reads it back: the elements are the value's own.
        let parsed = try ItemPassEvent.parse(gs1.event)
        #expect(parsed.gs1 && parsed.gs1Elements?.map(\.ai) == ["00", "10", "15"])
        // Elements that are not the value's: refused.
        var fields: [(String, JSONValue)] = []
        if case .object(let sent) = gs1.event {
            fields = sent.map { $0.0 == "gs1Elements" ? ($0.0, .object([("00", .string("340123450000000024"))])) : $0 }
        }
        #expect(fields.contains { $0.0 == "gs1Elements" })
        #expect(throws: DeadLetter.self) { try ItemPassEvent.parse(.object(fields)) }
        try Self.wmsCheck(world, expectItems: 2, packs: 0)
    }

    @Test(
        "each result continues the trace of the event it began with: an item pass its first-seen camera's sighting's (not the first to arrive), a pack record its session's; results of untraced events carry no traceparent"
    )
    func resultsContinueTraces() throws {
        let world = try W.world()
        defer { world.drop() }
        try SiteStore(connection: world.database).load(try Topology.parse(Array(Self.topology.utf8), file: "t.json"))
        let prefix = world.settings.prefix
        let first = TraceContext.forEvent("upstream-cam-01")
        let second = TraceContext.forEvent("upstream-cam-02")
        let session = TraceContext.forEvent("upstream-session")
        // One item seen by cam-01 and, 1.5 s on, by cam-02, whose sighting arrives first; another
        // item (another value) sent without a header; a pack station's session with one.
        let value = "4006381333931"
        let sent: [(subject: String, bytes: [UInt8], id: String, trace: TraceContext?)] = [
            (
                "\(prefix).v1.sighting.dc1.cam-02",
                W.sighting(1, value: value, camera: "cam-02", firstSeen: Self.base.adding(milliseconds: 1_600)),
                "a", second
            ),
            ("\(prefix).v1.sighting.dc1.cam-01", W.sighting(1, value: value, camera: "cam-01"), "b", first),
            ("\(prefix).v1.sighting.dc1.cam-01", W.sighting(2, value: "5012345678900", camera: "cam-01"), "c", nil),
            (
                "\(prefix).v1.session.dc1.cam-10",
                Self.sessionCompleted("s-traced", orderId: nil, codes: [(value, 1, nil)]), "d", session
            ),
        ]
        for message in sent {
            _ = try world.jetStream.publish(
                subject: message.subject, bytes: message.bytes, messageID: message.id,
                headers: message.trace.map { [(TraceContext.header, $0.traceparent)] } ?? [])
        }
        let reconciler = try Reconciler(settings: world.settings, logger: Logger(label: "test"))
        try Self.settle(world, [reconciler]) {
            try W.count(world.database, "SELECT count(*) FROM item_passes WHERE published_revision >= 1") == 2
                && W.count(world.database, "SELECT count(*) FROM pack_records WHERE published") == 1
        }
        let results = try StreamReader.events(
            world.jetStream, stream: world.settings.subjects.resultsStream, subject: "\(prefix).v1.>")
        let items = results.filter { $0.subject.hasPrefix("\(prefix).v1.item.") }
        #expect(items.count == 2)
        for item in items {
            let eventId = try #require(item.event["eventId"]?.stringValue)
            let expected =
                item.event["value"] == .string(value)
                ? TraceContext.continuing(first.traceId, as: eventId)?.traceparent : nil
            #expect(item.traceparent == expected, "\(item.event)")
        }
        let pack = try #require(results.first { $0.subject.hasPrefix("\(prefix).v1.pack.") })
        #expect(pack.traceparent == TraceContext.continuing(session.traceId, as: "s-traced.pack")?.traceparent)
        // A new span of the trace, not the agent's span sent on again.
        #expect(pack.traceparent?.hasPrefix("00-\(session.traceId)-") == true)
        #expect(pack.traceparent?.contains(session.spanId) == false)
        try Self.wmsCheck(world, expectItems: 2, packs: 1)
    }

    /// The WMS-style consumer (Python, nats-py) reads the results and validates them against
    /// docs/schema/item.schema.json and pack.schema.json.
    static func wmsCheck(_ world: IngestTests.World, expectItems: Int, packs: Int) throws {
        let python = TestEnvironment.repoRoot + "/.cache/venv/bin/python"
        try #require(
            FileManager.default.isExecutableFile(atPath: python), "run scripts/install-deps.sh (make test does)")
        let result = try ProcessRunner.run(
            python,
            [
                TestEnvironment.repoRoot + "/scripts/wms_consumer.py", "--results", "--nats", world.settings.natsURL,
                "--prefix",
                world.settings.prefix, "--idle", "1", "--expect", String(expectItems),
            ])
        #expect(result.status == 0, "\(result.stdoutText) \(result.stderr)")
        let summary = try JSONValue.parse(result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(summary["packs"]?.intValue == packs)
        #expect(summary["problems"] == .array([]))
    }
}
