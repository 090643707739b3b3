import Foundation
import ScanCore
import ScanTestSupport
import ScanTestTiming
import ScanNATS
import ScanEvents
import Testing

private typealias H = AgentRunHarness

/// The release programs under a `Type=notify` unit's protocol: the test plays systemd's part (a
/// datagram socket named by NOTIFY_SOCKET, a watchdog by WATCHDOG_USEC).
@Suite("systemd notifications from the programs", .timed, .enabled(if: TestEnvironment.natsEnabled))
struct SystemdNotifyTests {
    static func release(_ program: String) -> String { TestEnvironment.repoRoot + "/.build/release/" + program }

    /// Waits for READY=1, then for `fed` watchdog notifications; returns READY's message.
    static func readyAndFed(_ socket: NotifySocket, fed wanted: Int, _ name: String) -> String? {
        let ready = socket.messages(until: "READY=1", seconds: 120).last { $0.hasPrefix("READY=1") }
        #expect(ready != nil, "\(name): no READY=1")
        var fed = 0
        while fed < wanted, let message = socket.next(seconds: 120) {
            if message.hasPrefix("WATCHDOG=1") { fed += 1 }
        }
        #expect(fed == wanted, "\(name): \(fed) watchdog notifications")
        return ready
    }

    /// SIGHUP: the program says it has nothing to reload and runs on (SIGHUP's default would end it).
    static func takesHangup(_ process: Process, _ name: String, log: String) {
        kill(process.processIdentifier, SIGHUP)
        #expect(
            Polling.until(seconds: 120) {
                ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("SIGHUP: nothing to reload")
            }, "\(name): \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        #expect(process.isRunning, "\(name) ended at SIGHUP")
    }

    /// SIGTERM: STOPPING=1 comes, and the program exits 0.
    static func stops(_ process: Process, _ socket: NotifySocket, _ name: String, log: String) {
        kill(process.processIdentifier, SIGTERM)
        let stopping = socket.messages(until: "STOPPING=1", seconds: 120)
        #expect(stopping.last == "STOPPING=1", "\(name): \(stopping)")
        #expect(H.waitForExit(process, seconds: 120), "\(name) did not stop")
        #expect(
            process.terminationStatus == 0,
            "\(name): \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
    }

    @Test("scan-agent: READY=1 once decoding runs, WATCHDOG=1 while the frames flow, STOPPING=1 at SIGTERM")
    func agent() throws {
        let natsURL = try TestEnvironment.requireNATS()
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let socket = try NotifySocket()
        let prefix = TestEnvironment.uniqueName("st")
        let clip = try H.flowClip(frames: 600)  // 20 s in real time: still reading at the signal
        let config = try H.config(
            in: dir, source: H.clipSource(clip, realtime: true), natsURL: natsURL, prefix: prefix)
        let agent = try H.start(
            config: config, log: dir + "/agent.log", binary: Self.release("scan-agent"),
            extraEnvironment: ["NOTIFY_SOCKET": socket.path, "WATCHDOG_USEC": "1000000"])
        defer { if agent.isRunning { kill(agent.processIdentifier, SIGKILL) } }
        let ready = Self.readyAndFed(socket, fed: 3, "scan-agent")
        #expect(ready?.contains("STATUS=streaming") == true, "\(ready ?? "")")
        Self.stops(agent, socket, "scan-agent", log: dir + "/agent.log")
    }

    @Test(
        "scan-aggregator: READY=1 once NATS, its consumer and PostgreSQL answer, WATCHDOG=1 while ingest runs, SIGHUP taken (nothing to reload), STOPPING=1 at SIGTERM"
    )
    func aggregator() throws {
        let natsURL = try TestEnvironment.requireNATS()
        let migrated = try MigratedDatabase(prefix: "st_notify")
        defer { migrated.drop() }
        let socket = try NotifySocket()
        let log = NSTemporaryDirectory() + TestEnvironment.uniqueName("notify-aggregator") + ".log"
        defer { try? FileManager.default.removeItem(atPath: log) }
        let prefix = TestEnvironment.uniqueName("st")
        let aggregator = try ProcessRunner.start(
            Self.release("scan-aggregator"), ["run", "--prefix", prefix],
            environment: ProcessInfo.processInfo.environment.merging([
                "SCANTRACK_NATS": natsURL, "SCANTRACK_PG": migrated.dsn,
                "SCANTRACK_MIGRATIONS": TestEnvironment.repoRoot + "/migrations", "NOTIFY_SOCKET": socket.path,
                "WATCHDOG_USEC": "1000000",
            ]) { $1 }, log: log)
        defer { if aggregator.isRunning { kill(aggregator.processIdentifier, SIGKILL) } }
        let ready = Self.readyAndFed(socket, fed: 3, "scan-aggregator")
        #expect(ready?.contains("STATUS=nats ok, consumer ok, postgres ok") == true, "\(ready ?? "")")
        Self.takesHangup(aggregator, "scan-aggregator", log: log)
        Self.stops(aggregator, socket, "scan-aggregator", log: log)
    }

    @Test("scanadmin serve: READY=1 once it listens, SIGHUP taken (nothing to reload), STOPPING=1 at SIGTERM")
    func dashboard() throws {
        let migrated = try MigratedDatabase(prefix: "st_notify_serve")
        defer { migrated.drop() }
        let socket = try NotifySocket()
        let log = NSTemporaryDirectory() + TestEnvironment.uniqueName("notify-serve") + ".log"
        defer { try? FileManager.default.removeItem(atPath: log) }
        let serve = try ProcessRunner.start(
            Self.release("scanadmin"), ["serve", "--listen", "127.0.0.1:0"],
            environment: ProcessInfo.processInfo.environment.merging([
                "SCANTRACK_PG": migrated.dsn, "SCANTRACK_CONFIG": "", "NOTIFY_SOCKET": socket.path,
                "WATCHDOG_USEC": "1000000",
            ]) { $1 }, log: log)
        defer { if serve.isRunning { kill(serve.processIdentifier, SIGKILL) } }
        let ready = Self.readyAndFed(socket, fed: 2, "scanadmin serve")
        #expect(ready?.contains("STATUS=serving on 127.0.0.1:0") == true, "\(ready ?? "")")
        Self.takesHangup(serve, "scanadmin serve", log: log)
        Self.stops(serve, socket, "scanadmin serve", log: log)
    }
}

@Suite("log lines under the journal", .timed)
struct JournalPriorityTests {
    @Test(
        "with stderr on the journal's stream (JOURNAL_STREAM names it) each line begins with its syslog priority; elsewhere none does"
    )
    func priorities() throws {
        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        /// Runs scan-aggregator against a PostgreSQL that is not there, its stderr a file; with
        /// `journal`, JOURNAL_STREAM names that file (or, `mismatch`, another).
        func run(journal: Bool, mismatch: Bool = false) throws -> [Substring] {
            let path = dir + "/\(journal)-\(mismatch).log"
            #expect(FileManager.default.createFile(atPath: path, contents: nil))
            var status = stat()
            try #require(stat(path, &status) == 0)
            let stream = "\(status.st_dev):\(status.st_ino + (mismatch ? 1 : 0))"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: TestEnvironment.productsDirectory + "/scan-aggregator")
            process.arguments = ["run", "--log-level", "debug"]
            var environment = ProcessInfo.processInfo.environment
            environment["SCANTRACK_PG"] = "host=127.0.0.1 port=1 dbname=x connect_timeout=2"
            environment["SCANTRACK_NATS"] = "nats://127.0.0.1:1"
            environment["JOURNAL_STREAM"] = journal ? stream : nil
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle(forWritingAtPath: path)
            try ProcessRunner.withSignalsUnblocked { try process.run() }
            process.waitUntilExit()
            #expect(process.terminationStatus != 0, "PostgreSQL is not there")
            return try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        }
        let journaled = try run(journal: true)
        #expect(!journaled.isEmpty)
        #expect(journaled.allSatisfy { $0.wholeMatch(of: /<[2-7]>.*/) != nil }, "\(journaled)")
        #expect(journaled.contains { $0.hasPrefix("<3>") }, "the failure at the error priority: \(journaled)")
        for plain in [try run(journal: false), try run(journal: true, mismatch: true)] {
            #expect(!plain.isEmpty && !plain.contains { $0.hasPrefix("<") }, "\(plain)")
        }
    }
}

/// `systemctl reload scan-agent@…` (SIGHUP) on the release agent while it reads a clip in real time.
@Suite("scan-agent reload on SIGHUP", .timed, .enabled(if: TestEnvironment.natsEnabled))
struct AgentReloadTests {
    @Test(
        "SIGHUP reads the config again: a broken one changes nothing; then its logLevel and ruleset file apply at once (sightings rejected from then on) and other changed keys wait for the next start"
    )
    func reload() throws {
        let natsURL = try TestEnvironment.requireNATS()
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let prefix = TestEnvironment.uniqueName("st")
        let jetStream = try NATSConnection(url: natsURL).jetStream()
        defer { try? jetStream.deleteStream(ContractSubjects(prefix: prefix).agentStream) }
        let rules = dir + "/rules.json"
        try #"{"version": 1, "rules": []}"#.write(toFile: rules, atomically: true, encoding: .utf8)
        let clip = try H.flowClip(frames: 900)  // 30 s in real time: still reading at the end
        let source = H.clipSource(clip, realtime: true)
        let config = try H.config(
            in: dir, source: source, natsURL: natsURL, prefix: prefix,
            extra: #", "rules": "\#(rules)", "logLevel": "info""#)
        let startedText = try String(contentsOfFile: config, encoding: .utf8)
        let log = dir + "/agent.log"
        let agent = try H.start(config: config, log: log)
        defer { if agent.isRunning { kill(agent.processIdentifier, SIGKILL) } }
        func logText() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        func events() -> [JSONValue] {
            ((try? H.streamEvents(jetStream, prefix: prefix)) ?? []).map(\.event).filter {
                $0["type"] == .string("sighting")
            }
        }
        // Accepted sightings under the first ruleset.
        #expect(
            Polling.until(seconds: 120) { events().contains { $0["status"] == .string("accepted") } }, "\(logText())")
        #expect(!logText().contains(" debug scan-agent:"), "info level: no debug line yet")

        // A broken file: refused, nothing changed, the agent runs on.
        try "{\"camera\": ".write(toFile: config, atomically: true, encoding: .utf8)
        kill(agent.processIdentifier, SIGHUP)
        #expect(Polling.until(seconds: 120) { logText().contains("reload refused") }, "\(logText())")
        #expect(agent.isRunning)

        // Debug, a ruleset that rejects every code, and a changed heartbeat (only at the next start).
        try #"{"version": 1, "defaultAction": "reject", "rules": []}"#.write(
            toFile: rules, atomically: true, encoding: .utf8)
        let changed =
            startedText.replacingOccurrences(of: #""logLevel": "info""#, with: #""logLevel": "debug""#)
            .replacingOccurrences(of: #""heartbeatSeconds": 0.5"#, with: #""heartbeatSeconds": 2"#)
        #expect(changed != startedText && changed.contains("\"heartbeatSeconds\": 2"))
        try changed.write(toFile: config, atomically: true, encoding: .utf8)
        let acceptedBefore = events().filter { $0["status"] == .string("accepted") }.count
        kill(agent.processIdentifier, SIGHUP)
        #expect(Polling.until(seconds: 120) { logText().contains("configuration reloaded") }, "\(logText())")
        let reloaded = logText().split(separator: "\n").first { $0.contains("configuration reloaded") } ?? ""
        #expect(reloaded.contains("logLevel=debug") && reloaded.contains("rules=\(rules) (0 rules)"), "\(reloaded)")
        #expect(reloaded.contains("nextStart=heartbeatSeconds"), "\(reloaded)")
        #expect(logText().contains("debug lines are on"), "the new level applies at once")
        #expect(
            Polling.until(seconds: 120) { events().contains { $0["status"] == .string("rejected") } },
            "no sighting rejected after the reload: \(events().count) sightings")
        #expect(acceptedBefore > 0)

        kill(agent.processIdentifier, SIGTERM)
        #expect(H.waitForExit(agent, seconds: 120))
        #expect(agent.terminationStatus == 0, "\(logText())")
    }
}
