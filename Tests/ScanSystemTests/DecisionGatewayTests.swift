import Foundation
import ScanCore
import ScanEvents
import ScanServices
import ScanNATS
import ScanSynth
import ScanTestSupport
import ScanTestTiming
import Testing

/// A flag two threads share.
final class Running: @unchecked Sendable {
    // @unchecked: guarded by the lock.
    private let lock = NSLock()
    private var flag = true
    var value: Bool {
        get { lock.withLock { flag } }
        set { lock.withLock { flag = newValue } }
    }
}

/// Divert decisions end to end: `scan-agent run` on a rendered parcel clip paced like a camera,
/// a real nats-server, and scripts/io_gateway.py playing the I/O gateway (nats-py).
@Suite("divert decisions through NATS to a gateway", .timed, .enabled(if: TestEnvironment.natsEnabled))
struct DecisionGatewayTests {
    typealias H = AgentRunHarness

    /// The config of an agent deciding for lane L1 on `clip`.
    static func config(dir: String, clip: String, url: String, prefix: String) throws -> String {
        try H.config(
            in: dir, source: H.clipSource(clip), natsURL: url, prefix: prefix,
            extra: #"""
                , "grouping": {"enabled": true, "require": ["GS1-128"]},
                 "decision": {"enabled": true, "deadlineMs": 150, "beltSpeed": 2, "divertDistance": 3,
                              "beltFromBus": true}
                """#)
    }

    /// scripts/io_gateway.py on lane L1 of dc1, its output in `dir` (gateway.out, gateway.err),
    /// once it has subscribed; it stops `idleSeconds` after the last decision.
    static func startGateway(url: String, prefix: String, dir: String, idleSeconds: Int) throws -> Process {
        let ready = dir + "/gateway.ready"
        let gateway = try ProcessRunner.start(
            TestEnvironment.repoRoot + "/.cache/venv/bin/python",
            [
                TestEnvironment.repoRoot + "/scripts/io_gateway.py", "--prefix", prefix, "--site", "dc1",
                "--lane", "L1", "--ready", ready, "--idle", String(idleSeconds), "--timeout", "180",
            ],
            // The server from SCANTRACK_NATS, as the programs and wms_consumer.py take it (it read
            // only NATS_URL); a NATS_URL pointing elsewhere does not win over it.
            environment: ProcessInfo.processInfo.environment.merging([
                "SCANTRACK_NATS": url, "NATS_URL": "nats://127.0.0.1:1",
            ]) { _, new in new }, log: dir + "/gateway.err",
            stdoutFile: dir + "/gateway.out")
        #expect(H.eventually { FileManager.default.fileExists(atPath: ready) }, "the gateway subscribed")
        return gateway
    }

    /// The gateway's summary line (JSON), and all it printed (for messages).
    static func gatewaySummary(dir: String) throws -> (summary: JSONValue, output: String) {
        let output =
            ((try? String(contentsOfFile: dir + "/gateway.out", encoding: .utf8)) ?? "")
            + ((try? String(contentsOfFile: dir + "/gateway.err", encoding: .utf8)) ?? "")
        let line = output.split(separator: "\n").first { $0.hasPrefix("{") }.map(String.init) ?? ""
        return (try JSONValue.parse(Array(line.utf8)), output)
    }

    /// The parcel and decision events in the prefix's agents' stream.
    static func streamed(_ url: String, prefix: String) throws -> (parcels: [JSONValue], decisions: [JSONValue]) {
        let events = try H.streamEvents(try NATSConnection(url: url).jetStream(), prefix: prefix)
        return (
            events.filter { $0.event["type"] == .string("parcel") }.map(\.event),
            events.filter { $0.event["type"] == .string("decision") }.map(\.event)
        )
    }

    @Test(
        "the gateway takes a paused camera from the subject it came on, not from the body: a camera cannot blind another by naming it"
    )
    func pausedCameraFromSubject() throws {
        let nats = try H.PrivateNATS()
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let prefix = TestEnvironment.uniqueName("st")
        let gateway = try Self.startGateway(url: nats.url, prefix: prefix, dir: dir, idleSeconds: 2)
        let connection = try NATSConnection(url: nats.url)
        // cam-a pauses and says it is cam-b; then one decision, so that the gateway ends.
        try connection.publish(
            subject: "\(prefix).v1.reading.dc1.cam-a",
            bytes: Array(#"{"type": "reading.paused", "site": "dc1", "camera": "cam-b"}"#.utf8))
        try connection.flush()
        try connection.publish(subject: "\(prefix).v1.decision.dc1.L1", bytes: Array(#"{"type": "decision"}"#.utf8))
        try connection.flush()
        #expect(H.waitForExit(gateway, seconds: 120))
        let (summary, output) = try Self.gatewaySummary(dir: dir)
        #expect(summary["blindCameras"] == .array([.string("cam-a")]), "\(output)")
    }

    @Test(
        "a live agent sends one valid decision per parcel on its lane's subject; the gateway gets each once and measures the latency from the frame that closed the parcel",
        arguments: [(UInt64(1), 10.0), (5, 14.0)])
    func gateway(seed: UInt64, speed: Double) throws {
        let nats = try H.PrivateNATS()
        let (clip, _) = try ReplayHarness.clip(of: Scenarios.parcels(seed: seed, speed: speed), name: "decide-\(seed)")
        let dir = URL(fileURLWithPath: clip).deletingLastPathComponent().path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let prefix = TestEnvironment.uniqueName("st")
        let gateway = try Self.startGateway(url: nats.url, prefix: prefix, dir: dir, idleSeconds: 6)
        defer { if gateway.isRunning { gateway.terminate() } }

        // The lane's PLC says 4 m/s, ten times a second, while the agent runs.
        let plc = try NATSConnection(url: nats.url)
        let belt = try ContractSubjects(prefix: prefix).belt(site: "dc1", lane: "L1")
        let running = Running()
        let sender = Thread {
            while running.value {
                let reading = BeltReading(site: "dc1", lane: "L1", time: SystemClock().now, speed: 4)
                try? plc.publish(subject: belt, bytes: reading.json)
                usleep(100_000)
            }
        }
        sender.start()
        defer { running.value = false }
        let agent = try H.start(
            config: try Self.config(dir: dir, clip: clip, url: nats.url, prefix: prefix), log: dir + "/agent.log")
        #expect(H.waitForExit(agent))
        running.value = false
        let log = (try? String(contentsOfFile: dir + "/agent.log", encoding: .utf8)) ?? ""
        #expect(agent.terminationStatus == 0, "\(log)")
        #expect(H.waitForExit(gateway, seconds: 120))
        let (summary, output) = try Self.gatewaySummary(dir: dir)

        let (parcels, decisions) = try Self.streamed(nats.url, prefix: prefix)
        #expect(parcels.count >= 6, "the scene's boxes")
        // One decision per parcel, each naming its parcel, and the gateway got each once.
        #expect(decisions.count == parcels.count)
        #expect(
            Set(decisions.compactMap { $0["parcelId"]?.stringValue })
                == Set(parcels.compactMap { $0["parcelId"]?.stringValue }))
        #expect(summary["ok"] == .bool(true), "\(output)")
        #expect(summary["decisions"]?.intValue == decisions.count, "\(output)")
        #expect(
            (summary["pass"]?.intValue ?? 0) + (summary["divert"]?.intValue ?? 0) == decisions.count, "\(output)")
        // The torn SSCC and the unreadable box are diverted.
        #expect((summary["reasons"]?["missing-required"]?.intValue ?? 0) >= 2, "\(output)")
        #expect((summary["reasons"]?["no-read"]?.intValue ?? 0) >= 1, "\(output)")
        #expect(summary["latencyMs"]?["p99"]?.doubleValue != nil, "\(output)")
        // Each divert point placed by the PLC's 4 m/s, not the config's 2: 3 m in 750 ms.
        for decision in decisions {
            let at = decision["divertAt"]?.stringValue.flatMap(Timestamp.init(rfc3339:))
            let last = decision["lastSeen"]?.stringValue.flatMap(Timestamp.init(rfc3339:))
            #expect(decision["beltSpeed"]?.doubleValue == 4, "\(decision)")
            #expect(at.map { $0.milliseconds - (last?.milliseconds ?? 0) } == 750, "\(decision)")
        }
        let latency = summary["latencyMs"]
        print(
            "decision latency, seed \(seed): p50 \(latency?["p50"]?.doubleValue ?? -1) ms, p99 \(latency?["p99"]?.doubleValue ?? -1) ms (debug build)"
        )
    }

    /// Parcels and decisions as a gateway sees them live (core NATS), for a lane the aggregator
    /// reads from its cameras' and lane's own streams, which it empties as it stores them.
    static func heard(_ subscriptions: [NATSSubscription]) throws -> (parcels: [JSONValue], decisions: [JSONValue]) {
        var events: [JSONValue] = []
        for subscription in subscriptions {
            while let message = try subscription.next(timeoutMilliseconds: 1_000) {
                events.append(try JSONValue.parse(message.bytes))
            }
        }
        return (
            events.filter { $0["type"] == .string("parcel") }, events.filter { $0["type"] == .string("decision") }
        )
    }

    /// The codes of a parcel or decision event, as one sorted text (what identifies it across
    /// cameras and runs).
    static func codes(_ event: JSONValue) -> String {
        guard case .array(let codes)? = event["codes"] else { return "" }
        return codes.compactMap { $0["value"]?.stringValue }.sorted().joined(separator: "+")
    }

    @Test(
        "a lane of two cameras: the aggregator merges their parcels into parcel passes and sends one valid decision for each to the gateway",
        .enabled(if: TestEnvironment.postgresEnabled), arguments: [(UInt64(3), 10.0), (7, 14.0)])
    func aggregatorDecides(seed: UInt64, speed: Double) throws {
        let nats = try H.PrivateNATS()
        let (clip, _) = try ReplayHarness.clip(
            of: Scenarios.parcels(seed: seed, speed: speed), name: "aggdecide-\(seed)")
        let dir = URL(fileURLWithPath: clip).deletingLastPathComponent().path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let prefix = TestEnvironment.uniqueName("st")
        let database = try MigratedDatabase(prefix: "st_aggdecide")
        defer { database.drop() }
        // A top and a side camera at the same place; the lane decided by the aggregator.
        try #"""
        {"version": 1, "sites": [{"id": "dc1", "lanes": [{"id": "L1", "windowSeconds": 0.5, "graceSeconds": 1,
          "cameras": [{"id": "cam-01"}, {"id": "cam-02", "travelSeconds": 0}],
          "decision": {"deadlineSeconds": 5}}]}]}
        """#.write(toFile: dir + "/topology.json", atomically: true, encoding: .utf8)
        let aggregator = try ProcessRunner.start(
            TestEnvironment.productsDirectory + "/scan-aggregator",
            ["run", "--prefix", prefix, "--topology", dir + "/topology.json", "--batch", "50"],
            environment: ProcessInfo.processInfo.environment.merging([
                "SCANTRACK_NATS": nats.url, "SCANTRACK_PG": database.dsn,
                "SCANTRACK_MIGRATIONS": TestEnvironment.repoRoot + "/migrations",
            ]) { _, new in new }, log: dir + "/aggregator.log")
        defer { if aggregator.isRunning { aggregator.terminate() } }
        #expect(
            H.eventually(seconds: 120) {
                ((try? String(contentsOfFile: dir + "/aggregator.log", encoding: .utf8)) ?? "").contains("ingesting")
            }, "the aggregator started")
        // The gateway ends once no decision came for a while: long enough for the aggregator's last
        // one on a machine whose two cores the rest of the suite keeps busy (seconds, not the 0.1
        // to 0.4 s it takes alone).
        let gateway = try Self.startGateway(url: nats.url, prefix: prefix, dir: dir, idleSeconds: 20)
        defer { if gateway.isRunning { gateway.terminate() } }
        let listener = try NATSConnection(url: nats.url)
        let listening = try ["parcel", "decision"].map { try listener.subscribe(subject: "\(prefix).v1.\($0).dc1.>") }
        try listener.flush()
        var agents: [Process] = []
        // Both cameras see each box at the same moment: their clips start together, however long
        // each agent takes to get going on a busy machine.
        let startAt = SystemClock().now.adding(milliseconds: 3_000)
        for camera in ["cam-01", "cam-02"] {
            let config = try H.config(
                in: dir, camera: camera, source: H.clipSource(clip, startAt: startAt), natsURL: nats.url,
                prefix: prefix,
                extra: #", "grouping": {"enabled": true, "require": ["GS1-128"]}"#)
            agents.append(try H.start(config: config, log: dir + "/\(camera).log"))
        }
        for (index, agent) in agents.enumerated() {
            #expect(H.waitForExit(agent))
            let log = (try? String(contentsOfFile: dir + "/cam-0\(index + 1).log", encoding: .utf8)) ?? ""
            #expect(agent.terminationStatus == 0, "\(log)")
        }
        #expect(H.waitForExit(gateway, seconds: 120))
        aggregator.terminate()
        #expect(H.waitForExit(aggregator, seconds: 120) && aggregator.terminationStatus == 0)
        let (summary, output) = try Self.gatewaySummary(dir: dir)

        let (parcels, decisions) = try Self.heard(listening)
        let top = parcels.filter { $0["camera"] == .string("cam-01") }
        let side = parcels.filter { $0["camera"] == .string("cam-02") }
        #expect(
            top.count == 8 && top.count == side.count,
            "the scene's 8 boxes, one parcel each, seen by both cameras: \(top.map(Self.codes))")
        // One decision per parcel pass — a box both cameras saw is one — naming what was read on it.
        #expect(decisions.count == top.count, "\(decisions.count) decisions for \(top.count) boxes")
        #expect(decisions.allSatisfy { $0["decidedBy"] == .string("aggregator") && $0["lane"] == .string("L1") })
        #expect(decisions.map(Self.codes).sorted() == top.map(Self.codes).sorted())
        #expect(
            try Int(database.connection.query("SELECT count(*) FROM parcel_passes").rows.first?[0] ?? "0")
                == top.count)
        #expect(summary["ok"] == .bool(true), "\(output)")
        #expect(summary["decisions"]?.intValue == decisions.count, "\(output)")
        // The torn SSCC and the unreadable box are diverted.
        #expect((summary["reasons"]?["missing-required"]?.intValue ?? 0) >= 2, "\(output)")
        #expect((summary["reasons"]?["no-read"]?.intValue ?? 0) >= 1, "\(output)")
        let latency = summary["latencyMs"]
        print(
            "aggregator decision latency, seed \(seed): p50 \(latency?["p50"]?.doubleValue ?? -1) ms, p99 \(latency?["p99"]?.doubleValue ?? -1) ms (debug build)"
        )
    }

    @Test(
        "JetStream away past the deadline: the decisions wait in the spool and go out marked late, each once",
        arguments: [UInt64(2), 6])
    func lateWhenSpooled(seed: UInt64) throws {
        let nats = try H.PrivateNATS()
        let url = nats.url
        try nats.stop()
        let scene = Scenarios.parcels(seed: seed, speed: 14)
        let (clip, _) = try ReplayHarness.clip(of: scene, name: "late-\(seed)")
        let dir = URL(fileURLWithPath: clip).deletingLastPathComponent().path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let prefix = TestEnvironment.uniqueName("st")
        let port = try TestEnvironment.freePort()
        let config = try Self.config(dir: dir, clip: clip, url: url, prefix: prefix)
        let text = try String(contentsOfFile: config, encoding: .utf8)
        try (text.dropLast() + #", "metrics": {"listen": "127.0.0.1:\#(port)"}}"#).write(
            toFile: config, atomically: true, encoding: .utf8)
        let agent = try H.start(config: config, log: dir + "/agent.log", drainSeconds: 60)
        // Every decision is made while JetStream is away, and its deadline (150 ms) passes before
        // JetStream is back: the agent has decoded the clip's last frame and closed the last
        // parcels (its metrics count every frame once the stream has ended; the clip plays at its
        // frame rate, about 8 s, longer on a busy machine); then a second more. Waited on, not
        // timed: the bound only catches a hang.
        func decoded() -> Int? {
            TestEnvironment.httpGet("http://127.0.0.1:\(port)/metrics").body.split(separator: "\n").first {
                $0.hasPrefix("scantrack_agent_frames_decoded_total")
            }.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }.map { Int($0) }
        }
        #expect(H.eventually(seconds: 600) { decoded() == scene.frameCount }, "decoded: \(decoded() ?? -1)")
        usleep(1_000_000)
        #expect(
            agent.isRunning,
            "the agent waits to send its spool: \((try? String(contentsOfFile: dir + "/agent.log", encoding: .utf8)) ?? "")"
        )
        try nats.start()
        #expect(nats.url == url, "the same port")
        #expect(H.waitForExit(agent, seconds: 120))
        let log = (try? String(contentsOfFile: dir + "/agent.log", encoding: .utf8)) ?? ""
        #expect(agent.terminationStatus == 0, "\(log)")
        let (parcels, decisions) = try Self.streamed(url, prefix: prefix)
        #expect(!decisions.isEmpty && decisions.count == parcels.count)
        #expect(decisions.allSatisfy { $0["late"] == .bool(true) }, "\(decisions.map { $0["late"] ?? .null })")
        #expect(Set(decisions.compactMap { $0["eventId"]?.stringValue }).count == decisions.count)
    }
}
