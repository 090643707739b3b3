import Foundation
import ScanAdmin
import ScanCore
import ScanEvents
import ScanNATS
import ScanReconciliation
import ScanTestSupport
import ScanTestTiming
import Testing

/// `scanadmin nats config | consumers`: the bus's authorization generated from the topology and
/// a logins file (docs/security.md), and checked against a real nats-server.
@Suite("the NATS authorization, generated", .timed)
struct NATSAuthorizationTests {
    /// Site dc1: lane L1 of two cameras decided by the aggregator, lane L2 of one camera (its
    /// camera decides), a pack station; site dc2: one lane of one camera.
    static let topology = """
        {"version": 1, "sites": [
         {"id": "dc1", "lanes": [
           {"id": "L1", "cameras": [{"id": "cam-01"}, {"id": "cam-02", "travelSeconds": 1}], "decision": {}},
           {"id": "L2", "cameras": [{"id": "cam-03"}]}],
          "stations": [{"id": "pack-01", "cameras": ["cam-10"]}]},
         {"id": "dc2", "lanes": [{"id": "L1", "cameras": [{"id": "cam-21"}]}]}]}
        """

    static let logins = """
        {"version": 1, "logins": [
          {"user": "cam-01", "role": "camera", "site": "dc1", "camera": "cam-01"},
          {"user": "cam-03", "role": "camera", "site": "dc1", "camera": "cam-03"},
          {"user": "cam-21", "role": "camera", "site": "dc2", "camera": "cam-21"},
          {"user": "aggregator", "role": "aggregator"},
          {"user": "wms-dc1", "role": "wms", "site": "dc1"},
          {"user": "wms-dc2", "role": "wms", "site": "dc2"},
          {"user": "gateway-dc1", "role": "gateway", "site": "dc1", "lanes": ["L2"]},
          {"user": "plc-dc1", "role": "trigger", "site": "dc1", "cameras": ["cam-03"]},
          {"user": "live-dc1", "role": "viewer", "site": "dc1"},
          {"user": "scanadmin", "role": "admin"}]}
        """

    static func authorization() throws -> NATSAuthorization {
        let topology = try Topology.parse(Array(Self.topology.utf8), file: "topology.json")
        let logins = try NATSLogins.parse(Array(Self.logins.utf8), file: "logins.json", topology: topology)
        return NATSAuthorization(logins: logins, topology: topology)
    }

    @Test("a logins file is checked against the topology: every problem listed by JSON path, nothing generated")
    func refusals() throws {
        let topology = try Topology.parse(Array(Self.topology.utf8), file: "topology.json")
        let bad = """
            {"version": 1, "logins": [
              {"user": "cam-01", "role": "camera", "site": "dc9", "camera": "cam-01"},
              {"user": "cam-02", "role": "camera", "site": "dc1", "camera": "cam-02", "decides": true},
              {"user": "cam-03", "role": "camera", "site": "dc1", "camera": "cam-03"},
              {"user": "cam-03b", "role": "camera", "site": "dc1", "camera": "cam-03", "decides": true},
              {"user": "cam-10", "role": "camera", "site": "dc1", "camera": "cam-99"},
              {"user": "gw", "role": "gateway", "site": "dc1", "lanes": ["L7"], "camera": "cam-01"},
              {"user": "gw", "role": "trigger", "site": "dc1", "cameras": []},
              {"user": "w.x", "role": "wms", "site": "dc1"},
              {"user": "CAM_01", "role": "admin"},
              {"user": "agg", "role": "boss"}]}
            """
        let error = #expect(throws: ConfigErrors.self) {
            try NATSLogins.parse(Array(bad.utf8), file: "logins.json", topology: topology)
        }
        let text = error.map { "\($0)" } ?? ""
        do {
            let expected = [
                "logins[0].site: site 'dc9' is not in the topology",
                "logins[1].decides: lane 'L1' is decided by the aggregator",
                "camera 'cam-03' has a login already",
                "logins[4].camera: camera 'cam-99' is on no lane or station of site 'dc1'",
                "logins[5].camera: a gateway login takes no 'camera'",
                "logins[5].lanes[0]: lane 'L7' is not a lane of site 'dc1'",
                "logins[6].user: user 'gw' appears twice",
                "logins[6].cameras: required: the cameras it triggers",
                "logins[7].user",
                "logins[8].passwordVariable: CAM_01_PASSWORD is another login's password variable",
                "logins[9].role",
                "lane 'L2' of site 'dc1' has 2 deciders (cam-03, cam-03b)",
            ]
            for line in expected where !text.contains(line) { Issue.record("missing '\(line)' in: \(text)") }
        }
    }

    @Test("one decider a lane: the aggregator for a lane the topology decides, the only camera of a lane otherwise")
    func deciders() throws {
        let authorization = try Self.authorization()
        func publishes(_ user: String) -> [String] {
            authorization.logins.logins.first { $0.user == user }.flatMap { authorization.permissions(of: $0) }?.publish
                ?? []
        }
        #expect(!publishes("cam-01").contains { $0.hasPrefix("scantrack.v1.decision.") })
        #expect(publishes("cam-03").contains("scantrack.v1.decision.dc1.L2"))
        #expect(publishes("cam-21").contains("scantrack.v1.decision.dc2.L1"))
        #expect(
            publishes("aggregator").filter { $0.hasPrefix("scantrack.v1.decision.") } == [
                "scantrack.v1.decision.dc1.L1"
            ])
        #expect(publishes("gateway-dc1").allSatisfy { !$0.hasPrefix("$JS.") }, "the gateway has no JetStream")
        #expect(
            authorization.logins.logins.first { $0.role == .admin }.flatMap { authorization.permissions(of: $0) } == nil
        )
    }

    @Test(
        "the shipped docker/nats/nats-server.conf is what `scanadmin nats config` makes of docker/topology.json and docker/nats/logins.json"
    )
    func shippedConfig() throws {
        let root = TestEnvironment.repoRoot
        // Run from the repository's folder, with the paths the file's header names.
        let run = try ProcessRunner.run(
            "/bin/sh",
            [
                "-c",
                #"cd "$0" && exec "$1" nats config --topology docker/topology.json --logins docker/nats/logins.json"#,
                root, MigrateCommandTests.scanadmin,
            ])
        #expect(run.status == 0, "\(run.stderr)")
        let shipped = try String(contentsOfFile: root + "/docker/nats/nats-server.conf", encoding: .utf8)
        #expect(run.stdoutText == shipped, "regenerate it: scanadmin nats config … --out docker/nats/nats-server.conf")
    }

    /// A nats-server running the generated config, every login's password `<user>-pass`.
    struct Bus {
        let server: NATSServerProcess
        let authorization: NATSAuthorization

        init(dir: String) throws {
            authorization = try NATSAuthorizationTests.authorization()
            let config = dir + "/nats-server.conf"
            try authorization.serverConfig(generatedBy: "NATSAuthorizationTests").write(
                toFile: config, atomically: true, encoding: .utf8)
            var environment = ["NATS_STORE_DIR": dir + "/js"]
            for login in authorization.logins.logins { environment[login.passwordVariable] = "\"\(login.user)-pass\"" }
            server = try NATSServerProcess(["-c", config], environment: environment)
        }

        var adminURL: String { "nats://scanadmin:scanadmin-pass@127.0.0.1:\(server.port)" }

        /// Connected as `user`, with the inbox prefix its program uses.
        func connect(_ user: String) throws -> NATSConnection {
            let login = try #require(authorization.logins.logins.first { $0.user == user })
            var options = NATSConnection.Options()
            options.security = NATSSecurity(inboxPrefix: login.inboxPrefix)
            return try NATSConnection(url: "nats://\(user):\(user)-pass@127.0.0.1:\(server.port)", options: options)
        }
    }

    /// Whether the server refused `subject` to `connection` after `mark` (reported asynchronously;
    /// a minute bounds the wait, so only a permission that lets it through misses it).
    static func refused(
        _ connection: NATSConnection, _ permission: NATSConnection.Permission, _ subject: String, since mark: Int
    ) -> Bool {
        Polling.until(seconds: 120) {
            try? connection.flush(timeoutMilliseconds: 2_000)
            return connection.denial(permission, subject: subject, since: mark) != nil
        }
    }

    /// Publishes (or subscribes to) each subject, then a sentinel every login is refused, and
    /// returns the subjects refused: the server answers in order, so once the sentinel's refusal
    /// is in, every earlier one is too.
    static func refusals(
        _ connection: NATSConnection, _ permission: NATSConnection.Permission, _ subjects: [String]
    ) throws -> [String] {
        let mark = connection.reportedErrors
        let sentinel = "sentinel.\(TestEnvironment.uniqueName("s"))"
        for subject in subjects + [sentinel] {
            if permission == .publish {
                try connection.publish(subject: subject, bytes: Array("{}".utf8))
            } else {
                _ = try connection.subscribe(subject: subject)
            }
        }
        #expect(refused(connection, permission, sentinel, since: mark), "the sentinel \(sentinel) was not refused")
        return subjects.filter { connection.denial(permission, subject: $0, since: mark) != nil }
    }

    /// Every subject of `allowed` goes through and every one of `denied` is refused.
    static func expectMatrix(
        _ connection: NATSConnection, _ user: String, _ permission: NATSConnection.Permission,
        allowed: [String], denied: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let refusedSubjects = try refusals(connection, permission, allowed + denied)
        #expect(
            refusedSubjects.filter(allowed.contains).isEmpty,
            "\(user) \(permission.rawValue) refused: \(refusedSubjects.filter(allowed.contains))",
            sourceLocation: sourceLocation)
        #expect(
            denied.filter { !refusedSubjects.contains($0) }.isEmpty,
            "\(user) \(permission.rawValue) let through: \(denied.filter { !refusedSubjects.contains($0) })",
            sourceLocation: sourceLocation)
    }

    @Test(
        "every login against real nats-server with the generated config: its own subjects, streams, durables and inbox only; no ACK/NXT on another's consumer, no consumer of its own making, no administration, no decision in another's name",
        .enabled(if: TestEnvironment.natsEnabled))
    func matrix() throws {
        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let bus = try Bus(dir: dir)
        defer { bus.server.stop() }
        let subjects = ContractSubjects()
        let agentStream = subjects.agentStream
        let results = subjects.resultsStream

        // The aggregator makes its four streams, a stream each camera and lane of the topology and
        // its durables, as scan-aggregator does.
        let aggregator = try bus.connect("aggregator")
        let aggregatorJS = try aggregator.jetStream()
        let layout = try Topology.parse(Array(Self.topology.utf8), file: "topology.json")
        let senders = try subjects.senderStreamSpecs(cameras: layout.cameraSenders, lanes: layout.laneSenders)
        for spec in [
            subjects.agentStreamSpec(retired: true), subjects.resultsStreamSpec(), subjects.ordersStreamSpec(),
            subjects.deadLetterStreamSpec(),
            ContractSubjects.imagesStreamSpec(maxAgeSeconds: 86_400, maxBytes: ContractSubjects.imagesStreamBytes),
        ] + senders {
            try aggregatorJS.ensureStream(spec)
        }
        let own = try subjects.cameraStream(site: "dc1", camera: "cam-01")
        let other = try subjects.cameraStream(site: "dc1", camera: "cam-02")
        #expect(senders.count == 8 && senders.contains { $0.name == own })
        let durable = try aggregatorJS.pullSubscribe(
            stream: own, subject: "scantrack.v1.>", consumer: ConsumerSpec(durable: "aggregator"))
        _ = try aggregatorJS.pullSubscribe(
            stream: agentStream, subject: "scantrack.v1.>", consumer: ConsumerSpec(durable: "aggregator"))
        // scanadmin makes the WMS's consumers (the WMS may make none).
        try Self.topology.write(toFile: dir + "/topology.json", atomically: true, encoding: .utf8)
        try Self.logins.write(toFile: dir + "/logins.json", atomically: true, encoding: .utf8)
        let made = try ProcessRunner.run(
            MigrateCommandTests.scanadmin,
            ["nats", "consumers", "--topology", dir + "/topology.json", "--logins", dir + "/logins.json"],
            environment: ["SCANTRACK_NATS": bus.adminURL])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdoutText.contains("\(results)/wms-dc1-item on scantrack.v1.item.dc1.>"), "\(made.stdoutText)")
        #expect(made.stdoutText.contains("\(results)/wms-dc1-orderack on scantrack.v1.orderack.dc1"))

        // A camera's sighting reaches the aggregator's durable.
        let camera = try bus.connect("cam-01")
        _ = try camera.jetStream().publish(
            subject: "scantrack.v1.sighting.dc1.cam-01", bytes: Array("{}".utf8), messageID: "m1")
        let fetched = try durable.fetch(batch: 1, timeoutMilliseconds: 30_000)
        #expect(fetched.map(\.subject) == ["scantrack.v1.sighting.dc1.cam-01"])
        try fetched.first?.ackSync()
        // Its picture's chunk is stored in the images bucket; the aggregator describes it.
        let chunk = try camera.jetStream().publish(
            subject: "$O.SCANTRACK_IMAGES.C.dc1.cam-01.p1", bytes: [0xFF, 0xD8, 0xFF], messageID: "c1")
        #expect(chunk.stream == ImageObject.stream)
        let described = try aggregatorJS.publish(
            subject: ImageObject.metaSubject(name: "dc1/cam-01/parcel/p1.jpg"), bytes: Array("{}".utf8))
        #expect(described.stream == ImageObject.stream)

        let ack = { (stream: String, consumer: String) in "$JS.ACK.\(stream).\(consumer).1.1.1.1700000000000000000.0" }
        try Self.expectMatrix(
            camera, "cam-01", .publish,
            allowed: [
                "scantrack.v1.sighting.dc1.cam-01", "scantrack.v1.noread.dc1.cam-01", "scantrack.v1.parcel.dc1.cam-01",
                "scantrack.v1.preview.dc1.cam-01",
            ],
            denied: [
                "scantrack.v1.sighting.dc1.cam-02", "scantrack.v1.sighting.dc2.cam-01",
                "scantrack.v1.preview.dc1.cam-03",
                // L1 is decided by the aggregator: not by its camera, not in the aggregator's name.
                "scantrack.v1.decision.dc1.L1", "scantrack.v1.decision.dc1.L2", "scantrack.v1.measure.dc1.L1",
                "scantrack.v1.item.dc1.L1", "scantrack.v1.cmd.dc1.cam-02.stop",
                "$JS.API.STREAM.CREATE.KV_SCANTRACK_RULES", "$JS.API.STREAM.DELETE.\(agentStream)",
                "$JS.API.CONSUMER.CREATE.\(agentStream)", "$JS.API.CONSUMER.MSG.NEXT.\(agentStream).aggregator",
                ack(agentStream, "aggregator"),
            ])
        // The images bucket: its own pictures' chunks only; the descriptions are the aggregator's,
        // written once it has checked the event naming the picture.
        let description = ImageObject.metaSubject(name: "dc1/cam-01/parcel/p1.jpg")
        try Self.expectMatrix(
            camera, "cam-01", .publish, allowed: ["$O.SCANTRACK_IMAGES.C.dc1.cam-01.p2"],
            denied: [
                "$O.SCANTRACK_IMAGES.C.dc1.cam-02.p2", "$O.SCANTRACK_IMAGES.C.dc2.cam-01.p2", description,
                "$JS.API.STREAM.PURGE.OBJ_SCANTRACK_IMAGES", "$JS.API.STREAM.UPDATE.OBJ_SCANTRACK_IMAGES",
            ])
        try Self.expectMatrix(
            aggregator, "aggregator", .publish,
            allowed: [description, "$JS.API.STREAM.UPDATE.OBJ_SCANTRACK_IMAGES"],
            denied: [
                "$O.SCANTRACK_IMAGES.C.dc1.cam-01.p2", "$JS.API.STREAM.PURGE.OBJ_SCANTRACK_IMAGES",
                "$JS.API.STREAM.DELETE.OBJ_SCANTRACK_IMAGES",
            ])
        // Its own stream: it may look, never grow, empty, delete or read it; nor another's.
        try Self.expectMatrix(
            camera, "cam-01", .publish, allowed: ["$JS.API.STREAM.INFO.\(own)", "$JS.API.STREAM.INFO.\(agentStream)"],
            denied: [
                "$JS.API.STREAM.UPDATE.\(own)", "$JS.API.STREAM.PURGE.\(own)", "$JS.API.STREAM.DELETE.\(own)",
                "$JS.API.CONSUMER.MSG.NEXT.\(own).aggregator", ack(own, "aggregator"),
                "$JS.API.CONSUMER.CREATE.\(own).spy.scantrack.v1.>", "$JS.API.STREAM.INFO.\(other)",
                "$JS.API.STREAM.UPDATE.\(other)",
            ])
        try Self.expectMatrix(
            camera, "cam-01", .subscription,
            allowed: ["scantrack.v1.cmd.dc1.cam-01.>", "_INBOX.dc1.cam-01.>", "scantrack.v1.belt.dc1.L1"],
            denied: [
                "scantrack.v1.cmd.dc1.cam-02.>", "_INBOX.>", "_INBOX.aggregator.>", "scantrack.v1.belt.dc1.L2",
                "scantrack.v1.sighting.>", "scantrack.v1.item.>",
            ])
        try Self.expectMatrix(
            try bus.connect("cam-03"), "cam-03", .publish, allowed: ["scantrack.v1.decision.dc1.L2"],
            denied: ["scantrack.v1.decision.dc1.L1", "scantrack.v1.decision.dc2.L1"])
        try Self.expectMatrix(
            try bus.connect("cam-21"), "cam-21", .publish,
            allowed: ["scantrack.v1.decision.dc2.L1", "scantrack.v1.sighting.dc2.cam-21"],
            denied: ["scantrack.v1.sighting.dc1.cam-01", "scantrack.v1.decision.dc1.L2"])

        // The aggregator: its own streams and durables, the decided lane, its inbox; nothing else.
        try Self.expectMatrix(
            aggregator, "aggregator", .publish,
            allowed: [
                "scantrack.v1.decision.dc1.L1", "scantrack.v1.deadletter.bad-value", "$JS.API.STREAM.UPDATE.\(own)",
                "$JS.API.CONSUMER.MSG.NEXT.\(own).aggregator",
            ],
            denied: [
                "scantrack.v1.decision.dc1.L2", "scantrack.v1.sighting.dc1.cam-01", "scantrack.v1.order.dc1",
                "$JS.API.STREAM.DELETE.\(agentStream)", "$JS.API.STREAM.PURGE.\(agentStream)",
                "$JS.API.STREAM.CREATE.KV_SCANTRACK_RULES", "$JS.API.STREAM.UPDATE.KV_SCANTRACK_RULES",
                "$JS.API.STREAM.MSG.DELETE.\(agentStream)", "$JS.API.CONSUMER.CREATE.\(agentStream).spy.scantrack.v1.>",
                "$JS.API.STREAM.DELETE.\(own)", "$JS.API.STREAM.PURGE.\(own)",
                "$JS.API.CONSUMER.CREATE.\(own).spy.scantrack.v1.>",
                "$JS.API.CONSUMER.DELETE.\(results).wms-dc1-item", "$JS.API.CONSUMER.MSG.NEXT.\(results).wms-dc1-item",
                ack(results, "wms-dc1-item"),
            ])
        try Self.expectMatrix(
            aggregator, "aggregator", .subscription, allowed: ["scantrack.v1.status.>", "_INBOX.aggregator.>"],
            denied: ["_INBOX.>", "_INBOX.wms-dc1.>", "_INBOX.dc1.cam-01.>", "scantrack.v1.cmd.>"])

        // The WMS of dc1: its site's results through its pre-made consumer, its site's orders.
        let item = try aggregatorJS.publish(
            subject: "scantrack.v1.item.dc1.L1", bytes: Array(#"{"type":"item"}"#.utf8), messageID: "i1")
        _ = try aggregatorJS.publish(
            subject: "scantrack.v1.item.dc2.L1", bytes: Array(#"{"type":"item"}"#.utf8), messageID: "i2")
        #expect(item.stream == results)
        let wms = try bus.connect("wms-dc1")
        let wmsResults = try wms.jetStream().pullSubscribe(
            stream: results, subject: "scantrack.v1.item.dc1.>", consumer: ConsumerSpec(durable: "wms-dc1-item"))
        let received = try wmsResults.fetch(batch: 10, timeoutMilliseconds: 10_000)
        #expect(received.map(\.subject) == ["scantrack.v1.item.dc1.L1"], "its own site's results only")
        try received.first?.ackSync()
        try Self.expectMatrix(
            wms, "wms-dc1", .publish, allowed: ["scantrack.v1.order.dc1"],
            denied: [
                "scantrack.v1.order.dc2", "scantrack.v1.orderack.dc1", "scantrack.v1.item.dc1.L1",
                "$JS.API.CONSUMER.CREATE.\(results)", "$JS.API.CONSUMER.CREATE.\(results).mine.scantrack.v1.>",
                "$JS.API.CONSUMER.DURABLE.CREATE.\(results).mine", "$JS.API.CONSUMER.MSG.NEXT.\(results).wms-dc2-item",
                ack(results, "wms-dc2-item"), "$JS.API.CONSUMER.DELETE.\(results).wms-dc1-item",
                "$JS.API.CONSUMER.MSG.NEXT.\(agentStream).aggregator",
                ack(agentStream, "aggregator"), "$JS.API.STREAM.DELETE.\(results)",
            ])
        try Self.expectMatrix(
            wms, "wms-dc1", .subscription,
            allowed: [
                "scantrack.v1.item.dc1.>", "scantrack.v1.pack.dc1.>", "scantrack.v1.orderack.dc1", "_INBOX.wms-dc1.>",
            ],
            denied: ["scantrack.v1.item.dc2.>", "scantrack.v1.orderack.dc2", "scantrack.v1.item.>", "_INBOX.>"])

        // The I/O gateway of dc1's lane L2: core NATS on its lane only, no JetStream at all.
        let gateway = try bus.connect("gateway-dc1")
        try Self.expectMatrix(
            gateway, "gateway-dc1", .publish, allowed: ["scantrack.v1.belt.dc1.L2", "scantrack.v1.measure.dc1.L2"],
            denied: [
                "scantrack.v1.belt.dc1.L1", "scantrack.v1.measure.dc2.L1", "scantrack.v1.decision.dc1.L2",
                "$JS.API.CONSUMER.CREATE.\(agentStream)", "$JS.API.CONSUMER.CREATE.\(agentStream).spy.scantrack.v1.>",
                "$JS.API.CONSUMER.MSG.NEXT.\(agentStream).aggregator", ack(agentStream, "aggregator"),
                "$JS.API.STREAM.INFO.\(agentStream)",
            ])
        try Self.expectMatrix(
            gateway, "gateway-dc1", .subscription,
            allowed: ["scantrack.v1.decision.dc1.L2", "scantrack.v1.reading.dc1.cam-03", "_INBOX.gateway-dc1.>"],
            denied: [
                "scantrack.v1.decision.dc1.L1", "scantrack.v1.decision.>", "scantrack.v1.reading.dc1.cam-01",
                "scantrack.v1.sighting.>", "scantrack.v1.noread.dc1.cam-03",
            ])

        // The PLC that triggers cam-03: that one command.
        let plc = try bus.connect("plc-dc1")
        try Self.expectMatrix(
            plc, "plc-dc1", .publish, allowed: ["scantrack.v1.cmd.dc1.cam-03.trigger"],
            denied: [
                "scantrack.v1.cmd.dc1.cam-03.stop", "scantrack.v1.cmd.dc1.cam-01.trigger",
                "scantrack.v1.sighting.dc1.cam-03", "$JS.API.INFO",
            ])

        // The dashboard's live pages of dc1: leases on its cameras and their pictures, nothing else.
        let viewer = try bus.connect("live-dc1")
        try Self.expectMatrix(
            viewer, "live-dc1", .publish,
            allowed: [
                "scantrack.v1.cmd.dc1.cam-01.preview", "scantrack.v1.cmd.dc1.cam-03.preview",
                "scantrack.v1.cmd.dc1.cam-10.preview",
            ],
            denied: [
                "scantrack.v1.cmd.dc1.cam-01.snapshot", "scantrack.v1.cmd.dc1.cam-01.set-controls",
                "scantrack.v1.cmd.dc2.cam-21.preview", "scantrack.v1.preview.dc1.cam-01", "$JS.API.INFO",
            ])
        try Self.expectMatrix(
            viewer, "live-dc1", .subscription,
            allowed: ["scantrack.v1.preview.dc1.cam-01", "scantrack.v1.preview.dc1.cam-10", "_INBOX.live-dc1.>"],
            denied: ["scantrack.v1.preview.dc2.cam-21", "scantrack.v1.preview.>", "scantrack.v1.sighting.dc1.cam-01"])

        // The aggregator's durable lost nothing to the others' attempts: it is handed every message
        // its camera's stream holds (a work queue: what it acknowledged is gone), the last one sent last.
        _ = try camera.jetStream().publish(
            subject: "scantrack.v1.noread.dc1.cam-01", bytes: Array("{}".utf8), messageID: "m2")
        let stored = try aggregatorJS.messageCount(stream: own)
        #expect(stored >= 4, "the camera's own publishes of the matrix, and m2")
        var next: [JetStreamMessage] = []
        while next.count < Int(stored) {
            let batch = try durable.fetch(batch: Int(stored) - next.count, timeoutMilliseconds: 30_000)
            if batch.isEmpty { break }
            next += batch
        }
        #expect(next.count == Int(stored))
        #expect(next.last?.subject == "scantrack.v1.noread.dc1.cam-01")
    }
}
