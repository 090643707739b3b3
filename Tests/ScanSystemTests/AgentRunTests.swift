import Foundation
import Logging
import ScanAgentRuntime
import ScanCore
import ScanNATS
import ScanTestSupport
import ScanTestTiming
import Testing

@testable import ScanAgent

/// `scan-agent run` against a real nats-server with JetStream.
@Suite("scan-agent run with NATS", .timed, .enabled(if: TestEnvironment.natsEnabled))
struct AgentRunTests {
    typealias H = AgentRunHarness

    @Test(
        "a clip run delivers to JetStream exactly what an offline replay prints; track events and heartbeats on core NATS"
    )
    func clipRun() throws {
        let natsURL = try TestEnvironment.requireNATS()
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let prefix = TestEnvironment.uniqueName("st")
        let clip = try H.flowClip(frames: 120)
        let connection = try NATSConnection(url: natsURL)
        let jetStream = try connection.jetStream()
        defer { try? jetStream.deleteStream(ContractSubjects(prefix: prefix).agentStream) }
        let tracks = try connection.subscribe(subject: "\(prefix).v1.track.dc1.cam-01")
        let status = try connection.subscribe(subject: "\(prefix).v1.status.dc1.cam-01")

        let events = try H.runClipExpectingExactlyOnce(
            clip, dir: dir, natsURL: natsURL, prefix: prefix, jetStream: jetStream)
        for entry in events {
            let family = entry.event["type"]?.stringValue == "sighting" ? "sighting" : "session"
            #expect(entry.subject == "\(prefix).v1.\(family).dc1.cam-01")
        }

        var trackKinds: [String: Int] = [:]
        while let message = try tracks.next(timeoutMilliseconds: 200) {
            let event = try JSONValue.parse(message.bytes)
            trackKinds[event["type"]?.stringValue ?? "?", default: 0] += 1
        }
        let sightings = events.filter { $0.event["type"]?.stringValue == "sighting" }.count
        #expect(trackKinds["track.added", default: 0] >= sightings)
        #expect(trackKinds["track.removed", default: 0] >= sightings)
        var heartbeats: [JSONValue] = []
        while let message = try status.next(timeoutMilliseconds: 200) {
            heartbeats.append(try JSONValue.parse(message.bytes))
        }
        #expect(heartbeats.count >= 3, "a heartbeat every 0.5 s over a 4 s clip")
        let last = try #require(heartbeats.last)
        #expect(last["type"] == .string("status"))
        #expect(last["framesProcessed"]?.intValue == 120)
        #expect(last["nats"] == .string("connected"))
        #expect(last["spool"]?["depth"]?.intValue == 0)
        #expect(last["rules"]?["revision"] == .string("none"))
        // The rate itself depends on how busy the machine is (make bench measures it); a heartbeat
        // while frames flow reports one.
        #expect(
            heartbeats.contains { ($0["fpsProcessed"]?.doubleValue ?? 0) > 0 }, "a processing rate while frames flow")
        #expect(heartbeats.contains { $0["source"]?["state"] == .string("streaming") })
    }

    @Test(
        "a WMS-style consumer (Python, nats-py) reads the sightings on the documented subjects and validates the schema; live track events and heartbeats validate too"
    )
    func wmsConsumer() throws {
        let natsURL = try TestEnvironment.requireNATS()
        let python = TestEnvironment.repoRoot + "/.cache/venv/bin/python"
        try #require(
            FileManager.default.isExecutableFile(atPath: python), "run scripts/install-deps.sh (make test does)")
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let prefix = TestEnvironment.uniqueName("st")
        let clip = try H.flowClip(frames: 90, seed: 5)
        let jetStream = try NATSConnection(url: natsURL).jetStream()
        defer { try? jetStream.deleteStream(ContractSubjects(prefix: prefix).agentStream) }
        // Live track events and heartbeats (core NATS) are checked against their schemas while the agent runs.
        let live = Process()
        live.executableURL = URL(fileURLWithPath: python)
        live.arguments = [
            TestEnvironment.repoRoot + "/scripts/wms_consumer.py", "--live", "--nats", natsURL, "--prefix", prefix,
            "--idle", "2",
        ]
        let liveOutput = Pipe()
        live.standardOutput = liveOutput
        try live.run()
        let listening = liveOutput.fileHandleForReading.availableData  // its first line: subscribed
        #expect(String(decoding: listening, as: UTF8.self).contains("listening"))
        let config = try H.config(in: dir, source: H.clipSource(clip, realtime: true), natsURL: natsURL, prefix: prefix)
        let agent = try H.start(config: config, log: dir + "/agent.log")
        #expect(H.waitForExit(agent))
        #expect(agent.terminationStatus == 0)
        #expect(H.waitForExit(live, seconds: 120))
        let liveText = String(decoding: liveOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(live.terminationStatus == 0, "\(liveText)")
        let liveSummary = try JSONValue.parse(liveText.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect((liveSummary["trackEvents"]?.intValue ?? 0) > 0)
        #expect((liveSummary["heartbeats"]?.intValue ?? 0) >= 2, "a heartbeat every 0.5 s over a 3 s clip")
        #expect(liveSummary["problems"] == .array([]))
        let expected = try H.offline(clip).sightings.count
        let result = try ProcessRunner.run(
            python,
            [
                TestEnvironment.repoRoot + "/scripts/wms_consumer.py", "--nats", natsURL, "--prefix", prefix, "--idle",
                "1.5",
                "--expect", String(expected),
            ])
        #expect(result.status == 0, "\(result.stdoutText) \(result.stderr)")
        let summary = try JSONValue.parse(result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(summary["ok"] == .bool(true))
        #expect(summary["sightings"]?.intValue == expected)
        #expect(summary["problems"] == .array([]))
    }

    @Test(
        "--log-format json (or SCANTRACK_LOG_FORMAT=json): every line the agent logs is one JSON object with a millisecond time, a level and a message",
        arguments: [true, false])
    func jsonLogs(flag: Bool) throws {
        let nats = try H.PrivateNATS()
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = try H.config(
            in: dir, source: H.clipSource(try H.flowClip(frames: 30), realtime: false), natsURL: nats.url,
            prefix: TestEnvironment.uniqueName("st"))
        var environment = ProcessInfo.processInfo.environment
        environment["SCANTRACK_NATS"] = nil
        environment["SCANTRACK_LOG_FORMAT"] = flag ? "text" : "json"  // the flag wins over the variable
        let agent = try ProcessRunner.start(
            H.agent, ["run", "--config", config] + (flag ? ["--log-format", "json"] : []), environment: environment,
            log: dir + "/agent.log")
        #expect(H.waitForExit(agent))
        let lines = ((try? String(contentsOfFile: dir + "/agent.log", encoding: .utf8)) ?? "").split(separator: "\n")
        #expect(lines.count >= 2, "running and stopped")
        for line in lines {
            let object = try JSONValue.parse(Array(line.utf8))
            #expect(object["time"]?.stringValue.flatMap(Timestamp.init(rfc3339:)) != nil, "\(line)")
            #expect(object["level"]?.stringValue != nil && object["logger"] == .string("scan-agent"), "\(line)")
        }
        let stopped = try #require(lines.first { $0.contains(#""message":"scan-agent stopped""#) })
        // Counts are JSON numbers, not text (a log pipeline sums and compares them as they come).
        let fields = try JSONValue.parse(Array(stopped.utf8))
        #expect(fields["frames"]?.intValue == 30, "\(stopped)")
        for key in ["sightings", "noReads", "published", "spool", "spoolDropped", "framesDropped"] {
            #expect(fields[key]?.intValue != nil, "\(key) is a number: \(stopped)")
        }
    }

    @Test(
        "the agent honours the nats CLI's NATS_URL, NATS_USER and NATS_PASSWORD: its config's URL names no server, its events arrive"
    )
    func natsCLIEnvironment() throws {
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try NATSServerProcess(["-js", "--user", "cam-01", "--pass", "cli-pass"])
        defer { server.stop() }
        let prefix = TestEnvironment.uniqueName("st")
        let clip = try H.flowClip(frames: 30)
        // Port 1: nothing listens there; only the environment's URL reaches the server.
        let config = try H.config(in: dir, source: H.clipSource(clip), natsURL: "nats://127.0.0.1:1", prefix: prefix)
        var environment = ProcessInfo.processInfo.environment
        environment["SCANTRACK_NATS"] = nil
        environment["NATS_URL"] = "nats://127.0.0.1:\(server.port)"
        environment["NATS_USER"] = "cam-01"
        environment["NATS_PASSWORD"] = "cli-pass"
        let agent = try ProcessRunner.start(
            H.agent, ["run", "--config", config], environment: environment, log: dir + "/agent.log")
        #expect(H.waitForExit(agent, seconds: 120))
        let log = (try? String(contentsOfFile: dir + "/agent.log", encoding: .utf8)) ?? ""
        #expect(agent.terminationStatus == 0, "\(log)")
        #expect(!log.contains("cli-pass"), "the password is never shown")
        let jetStream = try NATSConnection(url: "nats://cam-01:cli-pass@127.0.0.1:\(server.port)").jetStream()
        let events = try #require(
            try? H.streamEvents(jetStream, prefix: prefix),
            "no stream on the environment's server; the agent's log: \(log)")
        #expect(events.contains { $0.event["type"] == .string("sighting") }, "\(events.count) events: \(log)")
    }

    @Test("a refused NATS login ends the agent at once with the server's reason (a missing server is waited for)")
    func refusedLogin() throws {
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let server = try NATSServerProcess(["-js", "--user", "cam-01", "--pass", "right-pass"])
        defer { server.stop() }
        let clip = try H.flowClip(frames: 30)
        let config = try H.config(
            in: dir, source: H.clipSource(clip), natsURL: "nats://cam-01:wrong-pass@127.0.0.1:\(server.port)",
            prefix: TestEnvironment.uniqueName("st"))
        let agent = try H.start(config: config, log: dir + "/agent.log")
        #expect(H.waitForExit(agent, seconds: 120), "still retrying")
        let log = (try? String(contentsOfFile: dir + "/agent.log", encoding: .utf8)) ?? ""
        #expect(agent.terminationStatus != 0)
        #expect(log.contains("Authorization Violation") && !log.contains("wrong-pass"), "\(log)")
    }

    /// The passwords docker/nats/nats-server.conf reads from the environment.
    static let busPasswords = [
        "CAM_01_PASSWORD": "cam-pass", "AGGREGATOR_PASSWORD": "agg-pass", "WMS_PASSWORD": "wms-pass",
        "SCANADMIN_PASSWORD": "admin-pass", "GATEWAY_PASSWORD": "gateway-pass", "DASHBOARD_PASSWORD": "dashboard-pass",
    ]

    /// A nats-server with `config` (docker/nats/nats-server.conf or a variant) and the aggregator's
    /// side: the agents' stream made as scan-aggregator makes it.
    static func leastPrivilegeServer(config: String, dir: String) throws -> (
        server: NATSServerProcess, url: (String, String) -> String, jetStream: JetStream
    ) {
        let server = try NATSServerProcess(
            ["-c", config], environment: busPasswords.merging(["NATS_STORE_DIR": dir + "/js"]) { _, new in new })
        let url = { (user: String, password: String) in "nats://\(user):\(password)@127.0.0.1:\(server.port)" }
        // The test's own view of the streams is an admin's (the aggregator reads only its durable).
        let jetStream = try NATSConnection(url: url("scanadmin", "admin-pass")).jetStream()
        try jetStream.ensureStream(ContractSubjects().agentStreamSpec(replicas: nil))
        return (server, url, jetStream)
    }

    @Test(
        "least privilege on the bus (docker/nats/nats-server.conf): a camera delivers its events once, and is denied another camera's subjects, the results and others' replies, naming the subject"
    )
    func leastPrivilege() throws {
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (server, url, jetStream) = try Self.leastPrivilegeServer(
            config: TestEnvironment.repoRoot + "/docker/nats/nats-server.conf", dir: dir)
        defer { server.stop() }

        _ = try H.runClipExpectingExactlyOnce(
            try H.flowClip(frames: 120), dir: dir, natsURL: url("cam-01", "cam-pass"), prefix: "scantrack",
            jetStream: jetStream)

        func denied(
            _ connection: NATSConnection, _ permission: NATSConnection.Permission, _ subject: String, since mark: Int
        ) -> Bool {
            H.eventually(seconds: 120) {
                try? connection.flush(timeoutMilliseconds: 500)
                return connection.denial(permission, subject: subject, since: mark) != nil
            }
        }
        let camera = try NATSConnection(url: url("cam-01", "cam-pass"))
        try camera.publish(subject: "scantrack.v1.sighting.dc1.cam-02", bytes: Array("{}".utf8))
        #expect(
            denied(camera, .publish, "scantrack.v1.sighting.dc1.cam-02", since: 0), "\(camera.lastError ?? "no error")")
        // Pack records (orders checked) and item passes, live or through the results stream.
        try camera.publish(subject: "$JS.API.CONSUMER.CREATE.SCANTRACK_RESULTS", bytes: Array("{}".utf8))
        #expect(denied(camera, .publish, "$JS.API.CONSUMER.CREATE.SCANTRACK_RESULTS", since: 0))
        for subject in ["scantrack.v1.item.>", "scantrack.v1.pack.>", "scantrack.v1.cmd.dc1.cam-02.>", "_INBOX.>"] {
            let mark = camera.reportedErrors
            _ = try camera.subscribe(subject: subject)
            #expect(
                denied(camera, .subscription, subject, since: mark), "\(subject): \(camera.lastError ?? "no error")")
        }
        let wms = try NATSConnection(url: url("wms", "wms-pass"))
        try wms.publish(subject: "scantrack.v1.sighting.dc1.cam-01", bytes: Array("{}".utf8))
        #expect(denied(wms, .publish, "scantrack.v1.sighting.dc1.cam-01", since: 0))
        let mark = wms.reportedErrors
        _ = try wms.subscribe(subject: "_INBOX.wms.>")
        _ = try wms.subscribe(subject: "_INBOX.>")
        #expect(denied(wms, .subscription, "_INBOX.>", since: mark))
        #expect(wms.denial(.subscription, subject: "_INBOX.wms.>", since: mark) == nil, "its own inbox is allowed")
        // Orders: the one thing the WMS may publish; not on another family, not as the aggregator.
        let before = wms.reportedErrors
        try wms.publish(subject: "scantrack.v1.order.dc1", bytes: Array("{}".utf8))
        try wms.publish(subject: "scantrack.v1.orderack.dc1", bytes: Array("{}".utf8))
        #expect(denied(wms, .publish, "scantrack.v1.orderack.dc1", since: before))
        #expect(wms.denial(.publish, subject: "scantrack.v1.order.dc1", since: before) == nil, "orders are allowed")

        // Decisions: a camera sends its own lane's only; the gateway reads them and sends nothing.
        let lane = camera.reportedErrors
        try camera.publish(subject: "scantrack.v1.decision.dc1.L2", bytes: Array("{}".utf8))
        try camera.publish(subject: "scantrack.v1.decision.dc1.L1", bytes: Array("{}".utf8))
        #expect(denied(camera, .publish, "scantrack.v1.decision.dc1.L2", since: lane))
        #expect(camera.denial(.publish, subject: "scantrack.v1.decision.dc1.L1", since: lane) == nil)
        let gateway = try NATSConnection(url: url("gateway", "gateway-pass"))
        let watching = gateway.reportedErrors
        _ = try gateway.subscribe(subject: "scantrack.v1.decision.dc1.L1")
        _ = try gateway.subscribe(subject: "scantrack.v1.sighting.>")
        try gateway.publish(subject: "scantrack.v1.decision.dc1.L1", bytes: Array("{}".utf8))
        #expect(denied(gateway, .subscription, "scantrack.v1.sighting.>", since: watching))
        #expect(denied(gateway, .publish, "scantrack.v1.decision.dc1.L1", since: watching))
        #expect(gateway.denial(.subscription, subject: "scantrack.v1.decision.dc1.L1", since: watching) == nil)
        // Belt speeds: the gateway sends them, the lane's camera reads its own lane's only.
        try gateway.publish(subject: "scantrack.v1.belt.dc1.L1", bytes: Array("{}".utf8))
        let reading = camera.reportedErrors
        _ = try camera.subscribe(subject: "scantrack.v1.belt.dc1.L1")
        _ = try camera.subscribe(subject: "scantrack.v1.belt.dc1.L2")
        #expect(denied(camera, .subscription, "scantrack.v1.belt.dc1.L2", since: reading))
        #expect(camera.denial(.subscription, subject: "scantrack.v1.belt.dc1.L1", since: reading) == nil)
        #expect(gateway.denial(.publish, subject: "scantrack.v1.belt.dc1.L1", since: watching) == nil)
        // Measurements: the gateway bridges the lanes' dimensioners and scales; a camera may not.
        let measuring = camera.reportedErrors
        try gateway.publish(subject: "scantrack.v1.measure.dc1.L1", bytes: Array("{}".utf8))
        try camera.publish(subject: "scantrack.v1.measure.dc1.L1", bytes: Array("{}".utf8))
        #expect(denied(camera, .publish, "scantrack.v1.measure.dc1.L1", since: measuring))
        #expect(gateway.denial(.publish, subject: "scantrack.v1.measure.dc1.L1", since: watching) == nil)
        // cam-01 decides lane L1 (docker/nats/logins.json): the aggregator may not decide it too.
        let aggregator = try NATSConnection(url: url("aggregator", "agg-pass"))
        let deciding = aggregator.reportedErrors
        try aggregator.publish(subject: "scantrack.v1.decision.dc1.L1", bytes: Array("{}".utf8))
        try aggregator.publish(subject: "scantrack.v1.measure.dc1.L1", bytes: Array("{}".utf8))
        #expect(denied(aggregator, .publish, "scantrack.v1.measure.dc1.L1", since: deciding))
        #expect(denied(aggregator, .publish, "scantrack.v1.decision.dc1.L1", since: deciding))
    }

    @Test(
        "a publish denied, then allowed by a reloaded server config: the agent names the subject, keeps spooling, and delivers each event once"
    )
    func deniedThenAllowed() throws {
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let shipped = try String(
            contentsOfFile: TestEnvironment.repoRoot + "/docker/nats/nats-server.conf", encoding: .utf8)
        let denying = shipped.replacingOccurrences(of: #""scantrack.v1.sighting.dc1.cam-01", "#, with: "")
            .replacingOccurrences(of: #""scantrack.v1.cmd.dc1.cam-01.>", "#, with: "")
        try #require(
            denying.count == shipped.count - 69,
            "the shipped config lets cam-01 publish its sightings and read its commands")
        let config = dir + "/nats-server.conf"
        try denying.write(toFile: config, atomically: true, encoding: .utf8)
        let (server, url, jetStream) = try Self.leastPrivilegeServer(config: config, dir: dir)
        defer { server.stop() }

        let clip = try H.flowClip(frames: 120, seed: 8)
        let agentConfig = try H.config(
            in: dir, source: H.clipSource(clip), natsURL: url("cam-01", "cam-pass"), prefix: "scantrack")
        // The release build (what users run): the server's errors are counted through a C callback.
        let agent = try H.start(
            config: agentConfig, log: dir + "/agent.log", drainSeconds: 60, binary: H.releaseAgent)
        defer { if agent.isRunning { agent.terminate() } }
        func log() -> String { (try? String(contentsOfFile: dir + "/agent.log", encoding: .utf8)) ?? "" }
        #expect(
            H.eventually(seconds: 120) {
                log().contains("Permissions Violation for Publish to")
                    && log().contains("scantrack.v1.sighting.dc1.cam-01")
                    && log().contains("Permissions Violation for Subscription to")
                    && log().contains("scantrack.v1.cmd.dc1.cam-01.>")
                    && log().contains("the rules bucket SCANTRACK_RULES does not exist and this user may not create it")
            }, "the agent names the denied subjects: \(log())")
        #expect(agent.isRunning, "denied is not fatal: the events wait in the spool")
        let before = try jetStream.messageCount(stream: ContractSubjects().agentStream)

        try shipped.write(toFile: config, atomically: true, encoding: .utf8)
        #expect(kill(server.process.processIdentifier, SIGHUP) == 0, "nats-server reloads its config")
        #expect(H.waitForExit(agent))
        #expect(agent.terminationStatus == 0, "\(log())")
        let events = try H.streamEvents(jetStream, prefix: "scantrack")
        #expect(events.count > before, "the spooled events arrived after the reload")
        H.expectExactlyOnce(events, offline: try H.offline(clip))
    }

    @Test("nats-server stopped mid-run and restarted: every sighting delivered exactly once")
    func natsRestart() throws {
        let nats = try H.PrivateNATS()
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let prefix = TestEnvironment.uniqueName("st")
        let clip = try H.flowClip(frames: 150, seed: 3)
        let config = try H.config(in: dir, source: H.clipSource(clip), natsURL: nats.url, prefix: prefix)
        let agent = try H.start(config: config, log: dir + "/agent.log")
        try H.stopNATSAfterFirstEvents(nats, prefix: prefix, log: dir + "/agent.log")
        #expect(agent.isRunning, "decoding goes on without NATS")
        try nats.start()
        #expect(H.waitForExit(agent))
        let log = (try? String(contentsOfFile: dir + "/agent.log", encoding: .utf8)) ?? ""
        #expect(agent.terminationStatus == 0, "\(log)")
        #expect(log.contains("JetStream unavailable"), "the outage was noticed: \(log)")

        let events = try H.streamEvents(try NATSConnection(url: nats.url).jetStream(), prefix: prefix)
        H.expectExactlyOnce(events, offline: try H.offline(clip))
    }

    @Test(
        "release build: SIGTERM while publishing stops with exit 0; every event reached JetStream once, the session ended"
    )
    func releaseStopsOnSIGTERM() throws {
        #expect(
            FileManager.default.isExecutableFile(atPath: H.releaseAgent),
            "\(H.releaseAgent): run `make test`, which builds it")
        let nats = try H.PrivateNATS()
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let prefix = TestEnvironment.uniqueName("st")
        let clip = try H.flowClip(frames: 900, seed: 6)  // 30 s at its frame rate: still busy at the signal
        let config = try H.config(in: dir, source: H.clipSource(clip), natsURL: nats.url, prefix: prefix)
        let agent = try H.start(config: config, log: dir + "/agent.log", binary: H.releaseAgent)
        let jetStream = try NATSConnection(url: nats.url).jetStream()
        #expect(
            H.eventually {
                ((try? H.streamEvents(jetStream, prefix: prefix)) ?? []).contains {
                    $0.event["type"]?.stringValue == "sighting"
                }
            })
        // How long the stop takes is a timing (make bench's shutdown row); here the bound only
        // catches an agent that does not stop: its drain is 30 s, so 120 s is missed by a defect alone.
        kill(agent.processIdentifier, SIGTERM)
        let stopped = H.waitForExit(agent, seconds: 120)
        if !stopped { kill(agent.processIdentifier, SIGKILL) }
        agent.waitUntilExit()
        let log = (try? String(contentsOfFile: dir + "/agent.log", encoding: .utf8)) ?? ""
        #expect(stopped, "still running 120 s after SIGTERM: \(log)")
        #expect(agent.terminationReason == .exit && agent.terminationStatus == 0, "\(log)")

        let events = try H.streamEvents(jetStream, prefix: prefix)
        let ids = events.compactMap(\.msgId)
        #expect(Set(ids).count == ids.count, "nothing published twice")
        #expect(
            events.contains { $0.event["type"]?.stringValue == "session.completed" },
            "the session was ended at shutdown")
        let logged = log.split(separator: " ").first { $0.hasPrefix("sightings=") }.flatMap { Int($0.dropFirst(10)) }
        let published = events.filter { $0.event["type"]?.stringValue == "sighting" }.count
        #expect(logged == published, "every sighting the agent made reached JetStream: \(log)")
        #expect(try Spool(directory: dir + "/spool-cam-01", maxBytes: 1 << 30).depth == 0, "the spool was drained")
    }

    @Test("agent killed (SIGKILL) mid-run while NATS is down, restarted with its spool: every sighting exactly once")
    func killAndRestart() throws {
        let nats = try H.PrivateNATS()
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let prefix = TestEnvironment.uniqueName("st")
        let clip = try H.flowClip(frames: 150, seed: 4)
        let config = try H.config(in: dir, source: H.clipSource(clip), natsURL: nats.url, prefix: prefix)
        let first = try H.start(config: config, log: dir + "/first.log")
        try H.stopNATSAfterFirstEvents(nats, prefix: prefix, log: dir + "/first.log")
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        #expect(first.terminationReason == .uncaughtSignal)
        // What the killed agent produced while NATS was down is on disk, unsent.
        let pending = try Spool(directory: dir + "/spool-cam-01", maxBytes: 1 << 30).depth
        #expect(pending > 0)

        try nats.start()
        let second = try H.start(config: config, log: dir + "/second.log")
        #expect(H.waitForExit(second))
        let log = (try? String(contentsOfFile: dir + "/second.log", encoding: .utf8)) ?? ""
        #expect(second.terminationStatus == 0, "\(log)")
        #expect(log.contains("spool holds events from an earlier run"), "\(log)")
        #expect(log.contains("resuming an unfinished run"), "\(log)")

        let events = try H.streamEvents(try NATSConnection(url: nats.url).jetStream(), prefix: prefix)
        H.expectExactlyOnce(events, offline: try H.offline(clip))
    }

    @Test("SIGTERM with NATS down: exit 0, events kept in the spool and sent first at the next start")
    func shutdownKeepsSpool() throws {
        let nats = try H.PrivateNATS()
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let prefix = TestEnvironment.uniqueName("st")
        let clip = try H.flowClip(frames: 300, seed: 6)
        let config = try H.config(in: dir, source: H.clipSource(clip), natsURL: nats.url, prefix: prefix)
        let first = try H.start(config: config, log: dir + "/first.log", drainSeconds: 1)
        try H.stopNATSAfterFirstEvents(nats, prefix: prefix, log: dir + "/first.log")
        first.terminate()
        #expect(H.waitForExit(first, seconds: 120))
        #expect(first.terminationStatus == 0)
        let kept = try Spool(directory: dir + "/spool-cam-01", maxBytes: 1 << 30)
        let keptIds = kept.next(limit: 10_000).map(\.eventId)
        #expect(!keptIds.isEmpty)
        #expect(keptIds.contains { $0.hasSuffix(".completed") }, "the session was ended at shutdown")

        try nats.start()
        let short = try H.flowClip(frames: 60, seed: 8)
        let second = try H.start(
            config: try H.config(
                in: dir, source: H.clipSource(short, realtime: false), natsURL: nats.url, prefix: prefix),
            log: dir + "/second.log")
        #expect(H.waitForExit(second))
        #expect(second.terminationStatus == 0)
        let events = try H.streamEvents(try NATSConnection(url: nats.url).jetStream(), prefix: prefix)
        let ids = events.compactMap { $0.event["eventId"]?.stringValue }
        // The earlier run's spooled events reached the stream, before anything of the new run.
        let positions = keptIds.compactMap { ids.firstIndex(of: $0) }
        #expect(positions.count == keptIds.count)
        let secondLog = (try? String(contentsOfFile: dir + "/second.log", encoding: .utf8)) ?? ""
        let runId = try #require(secondLog.split(separator: " ").first { $0.hasPrefix("run.id=") }?.dropFirst(7))
        let secondRun = events.enumerated().filter {
            $0.element.event["eventId"]?.stringValue?.contains("-\(runId)-") == true
        }
        #expect(!secondRun.isEmpty)
        #expect((positions.max() ?? 0) < (secondRun.map(\.offset).min() ?? Int.max))
        #expect(Set(ids).count == ids.count)
    }

    @Test("commands: session.start with an order, session.stop, pause, resume, status; bad requests get an error reply")
    func commands() throws {
        let natsURL = try TestEnvironment.requireNATS()
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let prefix = TestEnvironment.uniqueName("st")
        let clip = try H.flowClip(frames: 900, seed: 9)
        let connection = try NATSConnection(url: natsURL)
        let jetStream = try connection.jetStream()
        defer { try? jetStream.deleteStream(ContractSubjects(prefix: prefix).agentStream) }
        let config = try H.config(
            in: dir, source: H.clipSource(clip), natsURL: natsURL, prefix: prefix,
            extra: ", \"session\": {\"start\": \"command\"}")
        let agent = try H.start(config: config, log: dir + "/agent.log")
        defer { if agent.isRunning { agent.terminate() } }
        #expect(H.eventually { (try? H.command(connection, prefix: prefix, "status"))?["ok"] == .bool(true) })

        let started = try H.command(connection, prefix: prefix, "session.start", "{\"orderId\": \"ORD-1\"}")
        #expect(started["ok"] == .bool(true))
        #expect(started["orderId"] == .string("ORD-1"))
        let sessionId = try #require(started["sessionId"]?.stringValue)
        let status = try H.command(connection, prefix: prefix, "status")
        #expect(status["sessionId"] == .string(sessionId))
        #expect(status["camera"] == .string("cam-01"))
        #expect(status["source"]?["type"] == .string("clip"))

        let paused = try H.command(connection, prefix: prefix, "pause")
        #expect(paused["paused"] == .bool(true))
        #expect(try H.command(connection, prefix: prefix, "status")["paused"] == .bool(true))
        #expect(
            try H.command(connection, prefix: prefix, "status")["liveTracks"]?.intValue == 0,
            "pause ends the open tracks")
        #expect(try H.command(connection, prefix: prefix, "resume")["paused"] == .bool(false))

        let stopped = try H.command(connection, prefix: prefix, "session.stop")
        #expect(stopped["ok"] == .bool(true))
        #expect(stopped["sessionId"] == .string(sessionId))
        let again = try H.command(connection, prefix: prefix, "session.stop")
        #expect(again["ok"] == .bool(false))
        #expect(again["error"]?.stringValue?.contains("no session") == true)

        let unknown = try H.command(connection, prefix: prefix, "reboot")
        #expect(unknown["ok"] == .bool(false))
        #expect(unknown["error"]?.stringValue?.contains("unknown verb 'reboot'") == true)
        let malformed = try H.command(connection, prefix: prefix, "session.start", "{\"orderId\": ")
        #expect(malformed["ok"] == .bool(false))
        #expect(malformed["error"]?.stringValue?.contains("not JSON") == true)
        let wrongKey = try H.command(connection, prefix: prefix, "pause", "{\"now\": true}")
        #expect(wrongKey["ok"] == .bool(false))
        #expect(agent.isRunning, "bad requests do not hurt the agent")
        // The operator's way to the same commands.
        let viaAdmin = try ProcessRunner.run(
            TestEnvironment.productsDirectory + "/scanadmin",
            ["agent", "status", "--camera", "cam-01", "--site", "dc1", "--prefix", prefix, "--nats", natsURL])
        #expect(viaAdmin.status == 0, "\(viaAdmin.stderr)")
        #expect((try? JSONValue.parse(viaAdmin.stdoutText))?["verb"] == .string("status"))

        agent.terminate()
        #expect(H.waitForExit(agent, seconds: 120))
        #expect(agent.terminationStatus == 0)
        let events = try H.streamEvents(jetStream, prefix: prefix).map(\.event)
        let start = events.first { $0["type"] == .string("session.started") && $0["sessionId"] == .string(sessionId) }
        #expect(start?["orderId"] == .string("ORD-1"))
        #expect(start?["trigger"] == .string("command"))
        let completed = events.filter {
            $0["type"] == .string("session.completed") && $0["sessionId"] == .string(sessionId)
        }
        #expect(completed.count == 1)
        #expect(completed.first?["reason"] == .string("command"))
    }

    @Test(
        "rules from the bucket: swapped while running, a bad revision refused, the last good one cached for a start without NATS"
    )
    func rulesFromBucket() throws {
        let natsURL = try TestEnvironment.requireNATS()
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let prefix = TestEnvironment.uniqueName("st")
        let subjects = ContractSubjects(prefix: prefix)
        let connection = try NATSConnection(url: natsURL)
        let jetStream = try connection.jetStream()
        defer {
            try? jetStream.deleteStream(subjects.agentStream)
            try? jetStream.deleteStream("KV_" + subjects.rulesBucket)
        }
        let clip = try H.flowClip(frames: 900, seed: 2)
        let config = try H.config(in: dir, source: H.clipSource(clip), natsURL: natsURL, prefix: prefix)
        let agent = try H.start(config: config, log: dir + "/agent.log")
        defer { if agent.isRunning { agent.terminate() } }
        #expect(
            H.eventually {
                (try? H.command(connection, prefix: prefix, "status"))?["rules"]?["source"] == .string("default")
            })

        let bucket = try jetStream.keyValue(bucket: subjects.rulesBucket)
        let rejectAll =
            #"{"version": 1, "rules": [{"id": "reject-all", "action": "reject", "match": {"minLength": 1}}]}"#
        let revision = try bucket.put(ContractSubjects.rulesKey, Array(rejectAll.utf8))
        #expect(
            try H.eventually {
                let rules = try H.command(connection, prefix: prefix, "status")["rules"]
                return rules?["revision"] == .string(String(revision)) && rules?["source"] == .string("bucket")
            })
        let bad = try bucket.put(
            ContractSubjects.rulesKey, Array(#"{"version": 1, "rules": [{"id": "x", "action": "maybe"}]}"#.utf8))
        #expect(
            try H.eventually {
                let rules = try H.command(connection, prefix: prefix, "status")["rules"]
                return rules?["error"]?.stringValue?.contains("revision \(bad)") == true
            })
        #expect(try H.command(connection, prefix: prefix, "status")["rules"]?["revision"] == .string(String(revision)))
        agent.terminate()
        #expect(H.waitForExit(agent, seconds: 120))
        #expect(agent.terminationStatus == 0)

        // NATS unreachable: the agent starts with the cached ruleset and spools what it decides.
        let offlineConfig = try H.config(
            in: dir, source: H.clipSource(try H.flowClip(frames: 60, seed: 12), realtime: false),
            natsURL: "nats://127.0.0.1:1",
            prefix: prefix)
        let offline = try H.start(config: offlineConfig, log: dir + "/offline.log", drainSeconds: 1)
        #expect(H.waitForExit(offline, seconds: 120))
        let log = (try? String(contentsOfFile: dir + "/offline.log", encoding: .utf8)) ?? ""
        #expect(offline.terminationStatus == 0, "\(log)")
        #expect(log.contains("rules=\(revision)"), "\(log)")
        let spooled = try Spool(directory: dir + "/spool-cam-01", maxBytes: 1 << 30).next(limit: 10_000)
        let sightings = try spooled.map { try JSONValue.parse($0.payload) }.filter { $0["type"] == .string("sighting") }
        #expect(!sightings.isEmpty)
        let accepted = sightings.filter { $0["status"] != .string("rejected") || $0["ruleId"] != .string("reject-all") }
        if !accepted.isEmpty {
            let ids = accepted.map { $0["eventId"]?.stringValue ?? "?" }.joined(separator: " ")
            let firstLog = (try? String(contentsOfFile: dir + "/agent.log", encoding: .utf8)) ?? ""
            Issue.record("accepted in the offline spool: \(ids)\nfirst run:\n\(firstLog)\noffline run:\n\(log)")
        }
    }

    @Test("a V4L2 camera that is missing: the agent keeps retrying, says so in its status, and stops cleanly")
    func missingCamera() throws {
        let natsURL = try TestEnvironment.requireNATS()
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let prefix = TestEnvironment.uniqueName("st")
        let config = try H.config(
            in: dir, source: #"{"type": "v4l2", "device": "/dev/video-scantrack-missing"}"#, natsURL: natsURL,
            prefix: prefix)
        let connection = try NATSConnection(url: natsURL)
        let agent = try H.start(config: config, log: dir + "/agent.log")
        defer { if agent.isRunning { agent.terminate() } }
        #expect(
            H.eventually {
                (try? H.command(connection, prefix: prefix, "status"))?["source"]?["state"] == .string("reconnecting")
            })
        agent.terminate()
        #expect(H.waitForExit(agent, seconds: 120))
        #expect(agent.terminationStatus == 0)
        let log = (try? String(contentsOfFile: dir + "/agent.log", encoding: .utf8)) ?? ""
        #expect(log.contains("/dev/video-scantrack-missing"), "\(log)")
        try? connection.jetStream().deleteStream(ContractSubjects(prefix: prefix).agentStream)
    }
}
