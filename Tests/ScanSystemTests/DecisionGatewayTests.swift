import Foundation
import ScanCore
import ScanEvents
import ScanServices
import ScanNATS
import ScanSynth
import ScanTestSupport
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
@Suite("divert decisions through NATS to a gateway", .enabled(if: TestEnvironment.natsEnabled))
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

    /// The parcel and decision events in the prefix's agents' stream.
    static func streamed(_ url: String, prefix: String) throws -> (parcels: [JSONValue], decisions: [JSONValue]) {
        let events = try H.streamEvents(try NATSConnection(url: url).jetStream(), prefix: prefix)
        return (
            events.filter { $0.event["type"] == .string("parcel") }.map(\.event),
            events.filter { $0.event["type"] == .string("decision") }.map(\.event)
        )
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
        let ready = dir + "/gateway.ready"
        let gateway = try ProcessRunner.start(
            TestEnvironment.repoRoot + "/.cache/venv/bin/python",
            [
                TestEnvironment.repoRoot + "/scripts/io_gateway.py", "--nats", nats.url, "--prefix", prefix, "--site",
                "dc1", "--lane", "L1", "--ready", ready, "--idle", "6", "--timeout", "120",
            ], environment: ProcessInfo.processInfo.environment, log: dir + "/gateway.err",
            stdoutFile: dir + "/gateway.out")
        defer { if gateway.isRunning { gateway.terminate() } }
        #expect(H.eventually { FileManager.default.fileExists(atPath: ready) }, "the gateway subscribed")

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
        #expect(H.waitForExit(gateway, seconds: 30))
        let output =
            ((try? String(contentsOfFile: dir + "/gateway.out", encoding: .utf8)) ?? "")
            + ((try? String(contentsOfFile: dir + "/gateway.err", encoding: .utf8)) ?? "")
        let summary = try JSONValue.parse(
            Array((output.split(separator: "\n").first { $0.hasPrefix("{") }.map(String.init) ?? "").utf8))

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
        let agent = try H.start(
            config: try Self.config(dir: dir, clip: clip, url: url, prefix: prefix), log: dir + "/agent.log",
            drainSeconds: 60)
        // The clip plays at its frame rate (about 8 s); every decision is made while JetStream is
        // away, and its deadline passes before JetStream is back.
        usleep(UInt32((Double(scene.frameCount) / Double(scene.fps) + 1.5) * 1_000_000))
        #expect(agent.isRunning, "the agent waits to send its spool")
        try nats.start()
        #expect(nats.url == url, "the same port")
        #expect(H.waitForExit(agent, seconds: 90))
        let log = (try? String(contentsOfFile: dir + "/agent.log", encoding: .utf8)) ?? ""
        #expect(agent.terminationStatus == 0, "\(log)")
        let (parcels, decisions) = try Self.streamed(url, prefix: prefix)
        #expect(!decisions.isEmpty && decisions.count == parcels.count)
        #expect(decisions.allSatisfy { $0["late"] == .bool(true) }, "\(decisions.map { $0["late"] ?? .null })")
        #expect(Set(decisions.compactMap { $0["eventId"]?.stringValue }).count == decisions.count)
    }
}
