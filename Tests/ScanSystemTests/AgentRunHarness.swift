import Foundation
import ScanCore
import ScanNATS
import ScanSynth
import ScanTestSupport
import Testing

/// Starts `scan-agent run` as operators do, and reads back what reached JetStream.
enum AgentRunHarness {
    static var agent: String { ReplayHarness.agent }
    /// The release build, which `make test` builds: signals and lifetimes are checked on what
    /// users run (the optimiser ends lifetimes early).
    static var releaseAgent: String { TestEnvironment.repoRoot + "/.build/release/scan-agent" }
    static let script = TestEnvironment.repoRoot + "/scripts/servers.sh"

    /// A clip of the synthetic conveyor: `frames` at 30 fps, a few codes in view.
    static func flowClip(frames: Int, seed: UInt64 = 11) throws -> String {
        let scene = Scenarios.flow(width: 640, height: 360, frames: frames, codesInView: 4, seed: seed)
        return try ReplayHarness.clip(of: scene, name: "flow").path
    }

    /// Writes a config for a clip (or another source) and returns its path; `natsExtra` adds
    /// keys to the `nats` object (`, "credsFile": "…"`), `extra` to the top.
    static func config(
        in dir: String, camera: String = "cam-01", source: String, natsURL: String, prefix: String,
        natsExtra: String = "", extra: String = ""
    ) throws -> String {
        let text = """
            {"camera": {"id": "\(camera)", "site": "dc1", "lane": "L1"},
             "source": \(source),
             "nats": {"url": "\(natsURL)", "prefix": "\(prefix)"\(natsExtra)},
             "spool": {"dir": "\(dir)/spool-\(camera)"}, "heartbeatSeconds": 0.5\(extra)}
            """
        let path = dir + "/\(camera).json"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// What a run on the shared servers leaves behind, removed: its processes stopped, the
    /// prefix's three streams, its database and its folder.
    static func cleanUp(
        _ running: [Process], jetStream: JetStream, subjects: ContractSubjects, database: MigratedDatabase? = nil,
        dir: String
    ) {
        for process in running where process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? jetStream.deleteStream(subjects.agentStream)
        try? jetStream.deleteStream(subjects.deadLetterStream)
        try? jetStream.deleteStream(subjects.resultsStream)
        database?.drop()
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// A system test's own subject prefix (its streams), database and folder, and the processes it
    /// starts; `cleanUp` ends and removes them all.
    final class Rig {
        let prefix: String
        let subjects: ContractSubjects
        let jetStream: JetStream
        let migrated: MigratedDatabase
        let dir: String
        var running: [Process] = []

        init(natsURL: String, database: String) throws {
            migrated = try MigratedDatabase(prefix: database)
            prefix = TestEnvironment.uniqueName("st")
            subjects = ContractSubjects(prefix: prefix)
            jetStream = try NATSConnection(url: natsURL).jetStream()
            dir = try ReplayHarness.temporaryDirectory()
        }

        func cleanUp() {
            AgentRunHarness.cleanUp(running, jetStream: jetStream, subjects: subjects, database: migrated, dir: dir)
        }
    }

    /// One lane of one camera (dc1/L1/cam-01) in `rig`'s database, an aggregator, and an agent
    /// grouping parcels (with `extra` config) run to its end over a rendered clip of torn labels
    /// turned at random over 0–360° (`seed`); the agent is expected to exit 0.
    /// `lane`: more members of lane L1's topology object (`, "decision": {}`); `environment`: more
    /// variables for the agent and the aggregator (`SCANTRACK_LOG_LEVEL`).
    static func tornLabelsRun(
        _ rig: Rig, seed: UInt64, natsURL: String, extra: String = "", lane: String = "",
        environment: [String: String] = [:]
    ) throws {
        let dir = rig.dir
        try
            (#"{"version": 1, "sites": [{"id": "dc1", "lanes": [{"id": "L1", "cameras": [{"id": "cam-01"}]"# + lane
            + "}]}]}").write(toFile: dir + "/topology.json", atomically: true, encoding: .utf8)
        let loaded = try ProcessRunner.run(
            TestEnvironment.productsDirectory + "/scanadmin", ["topology", "load", dir + "/topology.json"],
            environment: DashboardSecurityTests.environment(dsn: rig.migrated.dsn))
        try #require(loaded.status == 0, "\(loaded.stderr)")
        // Torn labels at any angle: what the camera cannot read, a person reads from the picture.
        var scene = Scenarios.torn()
        scene.seed = seed
        scene.turnLabels(within: 0...360, seed: seed)
        let clip = dir + "/torn.y4m"
        try SceneRenderer(scene: scene).writeClip(to: clip)
        rig.running.append(
            try NoReadEndToEndTests.aggregator(
                prefix: rig.prefix, natsURL: natsURL, dsn: rig.migrated.dsn, log: dir + "/agg.log",
                environment: environment))
        let agent = try start(
            config: try config(
                in: dir, source: clipSource(clip, realtime: false), natsURL: natsURL, prefix: rig.prefix,
                extra: #", "grouping": {"enabled": true}"# + extra), log: dir + "/agent.log",
            extraEnvironment: environment)
        #expect(waitForExit(agent) && agent.terminationStatus == 0)
    }

    /// An agent reading, in real time, a rendered 1280×720 clip of `frames` frames with three
    /// labels in view turned at random over 0–360°; the renderer says where each label lies.
    static func anyAngleAgent(
        in dir: String, frames: Int, seed: UInt64, natsURL: String, prefix: String, extra: String = ""
    ) throws -> (SceneRenderer, Process) {
        var scene = Scenarios.flow(width: 1280, height: 720, frames: frames, codesInView: 3, seed: seed)
        scene.turnLabels(within: 0...360, seed: seed)
        let renderer = try SceneRenderer(scene: scene)
        let clip = dir + "/flow.y4m"
        try renderer.writeClip(to: clip)
        let agent = try start(
            config: try config(
                in: dir, source: clipSource(clip, realtime: true), natsURL: natsURL, prefix: prefix, extra: extra),
            log: dir + "/agent.log")
        return (renderer, agent)
    }

    /// A clip source; `startAt`: the time of its first frame (several agents' clips in step).
    static func clipSource(_ clip: String, realtime: Bool = true, startAt: Timestamp? = nil) -> String {
        "{\"type\": \"clip\", \"path\": \"\(clip)\", \"realtime\": \(realtime)"
            + (startAt.map { ", \"startAt\": \"\($0)\"" } ?? "") + "}"
    }

    /// Starts the agent with its log in `log` (read it after the exit). The environment's
    /// SCANTRACK_NATS is removed so that the config file decides.
    static func start(
        config: String, log: String, drainSeconds: Int = 30, binary: String = agent,
        extraEnvironment: [String: String] = [:]
    ) throws -> Process {
        var environment = ProcessInfo.processInfo.environment.merging(extraEnvironment) { $1 }
        environment["SCANTRACK_NATS"] = nil
        return try ProcessRunner.start(
            binary, ["run", "--config", config, "--drain-seconds", String(drainSeconds)], environment: environment,
            log: log)
    }

    /// Runs an agent on `clip` to its end (exit 0) and checks that the stream holds each of the
    /// offline replay's events once; returns the stream's events.
    static func runClipExpectingExactlyOnce(
        _ clip: String, dir: String, natsURL: String, prefix: String, jetStream: JetStream,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [StreamReader.Event] {
        let config = try config(in: dir, source: clipSource(clip), natsURL: natsURL, prefix: prefix)
        let agent = try start(config: config, log: dir + "/agent.log")
        #expect(waitForExit(agent), sourceLocation: sourceLocation)
        let log = (try? String(contentsOfFile: dir + "/agent.log", encoding: .utf8)) ?? ""
        #expect(agent.terminationStatus == 0, "\(log)", sourceLocation: sourceLocation)
        let offline = try offline(clip)
        #expect(!offline.sightings.isEmpty, sourceLocation: sourceLocation)
        let events = try streamEvents(jetStream, prefix: prefix)
        expectExactlyOnce(events, offline: offline, sourceLocation: sourceLocation)
        return events
    }

    /// Waits (bounded) for the process to end; false when it is still running.
    static func waitForExit(_ process: Process, seconds: Double = 120) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        return !process.isRunning
    }

    /// Every durable event in the prefix's agent stream, in stream order, read by a new consumer.
    static func streamEvents(_ jetStream: JetStream, prefix: String) throws -> [StreamReader.Event] {
        try StreamReader.events(
            jetStream, stream: ContractSubjects(prefix: prefix).agentStream, subject: "\(prefix).v1.>")
    }

    /// What identifies a sighting independently of run ids and wall-clock times.
    static func signature(_ sighting: JSONValue) -> String {
        let value = sighting["value"]?.stringValue ?? "?"
        let first = sighting["firstFrame"]?.intValue ?? -1
        let last = sighting["lastFrame"]?.intValue ?? -1
        return "\(value)@\(first)-\(last)"
    }

    /// The offline replay's durable events of the same clip (what the agent must deliver).
    static func offline(_ clip: String) throws -> (sightings: [String], sessionEvents: Int) {
        let replay = try ReplayHarness.replay(clip, arguments: ["--sightings-only"])
        #expect(replay.result.status == 0)
        return (
            replay.sightings.map(signature).sorted(),
            replay.events.filter { $0["type"]?.stringValue?.hasPrefix("session.") == true }.count
        )
    }

    /// Checks that the stream holds exactly the offline replay's events, each once.
    static func expectExactlyOnce(
        _ events: [StreamReader.Event],
        offline: (sightings: [String], sessionEvents: Int),
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let ids = events.compactMap { $0.event["eventId"]?.stringValue }
        #expect(Set(ids).count == events.count, "an event id reached the stream twice", sourceLocation: sourceLocation)
        let sightings = events.filter { $0.event["type"]?.stringValue == "sighting" }
        #expect(sightings.map { signature($0.event) }.sorted() == offline.sightings, sourceLocation: sourceLocation)
        let sessions = events.filter { $0.event["type"]?.stringValue?.hasPrefix("session.") == true }
        #expect(sessions.count == offline.sessionEvents, sourceLocation: sourceLocation)
        for entry in events {
            #expect(
                entry.msgId == entry.subject + "/" + (entry.event["eventId"]?.stringValue ?? "-"),
                "Nats-Msg-Id is the subject and the event id",
                sourceLocation: sourceLocation)
        }
    }

    /// A nats-server of the test's own (scripts/servers.sh start-nats), stoppable mid-run.
    final class PrivateNATS {
        let name = TestEnvironment.uniqueName("natsrestart")
        var log: String { NSTemporaryDirectory() + name + ".log" }
        var url: String {
            let port =
                (try? String(contentsOfFile: TestEnvironment.repoRoot + "/run/\(name)/nats/port", encoding: .utf8))
                ?? "0"
            return "nats://127.0.0.1:" + port.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        init() throws { try start() }

        func start() throws {
            #expect(
                try ProcessRunner.runDetached(["/bin/bash", AgentRunHarness.script, "start-nats", name], log: log) == 0)
        }

        func stop() throws {
            #expect(
                try ProcessRunner.runDetached(["/bin/bash", AgentRunHarness.script, "stop-nats", name], log: log) == 0)
        }

        deinit {
            _ = try? ProcessRunner.runDetached(["/bin/bash", AgentRunHarness.script, "stop-nats", name], log: log)
            try? FileManager.default.removeItem(atPath: TestEnvironment.repoRoot + "/run/" + name)
        }
    }

    /// Sends a command and parses the reply.
    static func command(
        _ connection: NATSConnection, prefix: String, camera: String = "cam-01", _ verb: String, _ body: String = ""
    )
        throws -> JSONValue
    {
        let subject = try ContractSubjects(prefix: prefix).command(site: "dc1", camera: camera, verb: verb)
        let reply = try connection.request(subject: subject, bytes: Array(body.utf8), timeoutMilliseconds: 5_000)
        return try JSONValue.parse(reply.bytes)
    }

    /// Stops `nats` once the agent has published into the prefix's stream, and waits until the
    /// agent's log says it noticed (its publisher failed and keeps the events in the spool): the
    /// outage a test needs, placed by what the agent did rather than by a guess of how long it takes.
    static func stopNATSAfterFirstEvents(
        _ nats: PrivateNATS, prefix: String, log: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let jetStream = try NATSConnection(url: nats.url).jetStream()
        #expect(
            eventually { !((try? streamEvents(jetStream, prefix: prefix)) ?? []).isEmpty },
            "the agent published before the outage", sourceLocation: sourceLocation)
        try nats.stop()
        #expect(
            eventually(seconds: 60) {
                ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("JetStream unavailable")
            }, "the agent noticed the outage", sourceLocation: sourceLocation)
    }

    /// Polls `body` every 100 ms until it returns true or `seconds` pass.
    static func eventually(seconds: Double = 20, _ body: () throws -> Bool) rethrows -> Bool {
        try Polling.until(seconds: seconds, body)
    }
}
