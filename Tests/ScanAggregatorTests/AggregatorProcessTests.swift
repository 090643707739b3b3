import Foundation
import Logging
import ScanCore
import ScanNATS
import ScanPostgres
import ScanTestSupport
import ScanTestTiming
import Testing

@testable import ScanAggregator

/// The `scan-aggregator` binary as operators run it: killed, restarted, and run twice at once.
@Suite("scan-aggregator process", .timed, .enabled(if: TestEnvironment.natsEnabled && TestEnvironment.postgresEnabled))
struct AggregatorProcessTests {
    static var binary: String { TestEnvironment.productsDirectory + "/scan-aggregator" }

    /// The release build, which `make test` builds: the optimiser ends lifetimes early, and a debug
    /// build once hid an aggregator that ignored SIGTERM.
    static var releaseBinary: String { TestEnvironment.repoRoot + "/.build/release/scan-aggregator" }

    static func start(
        _ world: IngestTests.World, batch: Int = 50, binary: String = binary, extra: [String] = [],
        stderr: FileHandle = FileHandle.nullDevice
    ) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["run", "--prefix", world.settings.prefix, "--batch", String(batch)] + extra
        process.environment = ProcessInfo.processInfo.environment.merging([
            "SCANTRACK_NATS": world.settings.natsURL, "SCANTRACK_PG": world.settings.postgresDSN,
            "SCANTRACK_MIGRATIONS": TestEnvironment.repoRoot + "/migrations",
        ]) { _, new in new }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = stderr
        try ProcessRunner.withSignalsUnblocked { try process.run() }
        return process
    }

    /// Sends `signal` and waits for the process to end, killing it (false) if it has not after
    /// 120 s: so long that only a stop that hangs misses it (how fast it stops is `make bench`'s).
    static func stop(_ process: Process, with signal: Int32) -> Bool {
        kill(process.processIdentifier, signal)
        let deadline = Date().addingTimeInterval(120)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        let stopped = !process.isRunning
        if !stopped { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return stopped
    }

    /// Waits (bounded) until the table holds `expected` rows; returns what it holds.
    static func waitForRows(_ database: PGConnection, _ expected: Int, seconds: Int = 60) throws -> Int {
        var rows = 0
        for _ in 0..<(seconds * 10) {
            rows = try IngestTests.count(database, "SELECT count(*) FROM sightings")
            if rows >= expected { break }
            usleep(100_000)
        }
        return rows
    }

    @Test("--log-format json: every line on stderr is one JSON object with a millisecond time, a level and a message")
    func jsonLogs() throws {
        let world = try IngestTests.world()
        defer { world.drop() }
        let log = try TestEnvironment.temporaryDirectory() + "/aggregator.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        let aggregator = try Self.start(world, extra: ["--log-format", "json"], stderr: handle)
        var lines: [Substring] = []
        _ = Polling.until(seconds: 120) {
            lines = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n")
            return !lines.isEmpty
        }
        #expect(Self.stop(aggregator, with: SIGTERM))
        let all = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n")
        #expect(!all.isEmpty)
        for line in all {
            let object = try JSONValue.parse(Array(line.utf8))
            #expect(object["time"]?.stringValue.flatMap(Timestamp.init(rfc3339:)) != nil, "\(line)")
            #expect(object["level"]?.stringValue != nil && object["message"]?.stringValue != nil, "\(line)")
            #expect(object["logger"] == .string("scan-aggregator"), "\(line)")
        }
    }

    @Test("refuses to start on a schema that is behind, and says how to migrate")
    func schemaBehind() throws {
        let database = try ScratchDatabase(prefix: "st_behind")
        defer { database.drop() }
        let result = try ProcessRunner.run(
            Self.binary, ["run"],
            environment: [
                "SCANTRACK_PG": database.dsn,
                "SCANTRACK_NATS": try TestEnvironment.requireNATS(),
                "SCANTRACK_MIGRATIONS": TestEnvironment.repoRoot + "/migrations",
            ])
        #expect(result.status == 1)
        #expect(result.stderr.contains("schema is behind"))
        #expect(result.stderr.contains("scanadmin migrate"))
        // With JSON logs (here from the environment) the failure is a JSON line like every other.
        let json = try ProcessRunner.run(
            Self.binary, ["run"],
            environment: [
                "SCANTRACK_PG": database.dsn,
                "SCANTRACK_NATS": try TestEnvironment.requireNATS(),
                "SCANTRACK_MIGRATIONS": TestEnvironment.repoRoot + "/migrations", "SCANTRACK_LOG_FORMAT": "json",
            ])
        #expect(json.status == 1)
        let lines = json.stderr.split(separator: "\n")
        #expect(!lines.isEmpty)
        for line in lines {
            let object = try JSONValue.parse(Array(line.utf8))
            #expect(object["level"]?.stringValue != nil && object["logger"] == .string("scan-aggregator"), "\(line)")
        }
        #expect(
            lines.contains { $0.contains("schema is behind") && $0.contains("\"level\":\"critical\"") },
            "\(json.stderr)")
    }

    @Test("a refused NATS login ends the aggregator at once with exit 1 and the server's reason, not a retry loop")
    func refusedLogin() throws {
        let database = try MigratedDatabase(prefix: "st_refused")
        defer { database.drop() }
        let server = try NATSServerProcess(["-js", "--user", "aggregator", "--pass", "right-pass"])
        defer { server.stop() }
        let result = try ProcessRunner.run(
            Self.binary, ["run"],
            environment: [
                "SCANTRACK_PG": database.dsn, "SCANTRACK_MIGRATIONS": TestEnvironment.repoRoot + "/migrations",
                "SCANTRACK_NATS": "nats://aggregator:wrong-pass@127.0.0.1:\(server.port)",
            ])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("Authorization Violation"), "\(result.stderr)")
        #expect(!result.stderr.contains("wrong-pass"))
        // That it ended at all with exit 1 is the check: a retry loop would never exit.
    }

    @Test("killed with SIGKILL mid-stream and restarted: every event stored exactly once")
    func killAndRestart() throws {
        let world = try IngestTests.world()
        defer { world.drop() }
        let subject = "\(world.settings.prefix).v1.sighting.dc1.cam-1"
        let total = 3_000
        var aggregator = try Self.start(world, batch: 50)
        for n in 0..<total {
            _ = try world.jetStream.publish(subject: subject, bytes: IngestTests.sighting(n), messageID: "k\(n)")
            if n == total / 3 {
                // Let it be busy, then kill it without warning.
                _ = try Self.waitForRows(world.database, 200)
                kill(aggregator.processIdentifier, SIGKILL)
                aggregator.waitUntilExit()
                aggregator = try Self.start(world, batch: 50)
            }
        }
        let rows = try Self.waitForRows(world.database, total)
        aggregator.terminate()
        aggregator.waitUntilExit()
        #expect(aggregator.terminationStatus == 0, "SIGTERM is a clean stop")
        #expect(rows == total)
        #expect(try IngestTests.count(world.database, "SELECT count(DISTINCT event_id) FROM sightings") == total)
    }

    @Test(
        "release build: SIGTERM or SIGINT while a batch is in flight stops it with exit 0; nothing lost or stored twice"
    )
    func releaseStopsOnSIGTERM() throws {
        #expect(
            FileManager.default.isExecutableFile(atPath: Self.releaseBinary),
            "\(Self.releaseBinary): run `make test`, which builds it")
        let world = try IngestTests.world()
        defer { world.drop() }
        let subject = "\(world.settings.prefix).v1.sighting.dc1.cam-1"
        let total = 20_000
        for n in 0..<total {
            _ = try world.jetStream.publish(subject: subject, bytes: IngestTests.sighting(n), messageID: "r\(n)")
        }
        for signal in [SIGTERM, SIGINT] {
            let stored = try IngestTests.count(world.database, "SELECT count(*) FROM sightings")
            guard stored < total else { break }
            let aggregator = try Self.start(world, batch: 20, binary: Self.releaseBinary)
            // Busy: storing, with more waiting in the stream.
            _ = try Self.waitForRows(world.database, stored + 500)
            let stopped = Self.stop(aggregator, with: signal)
            #expect(stopped, "still running 120 s after signal \(signal)")
            if stopped { #expect(aggregator.terminationStatus == 0, "signal \(signal) is a clean stop") }
        }
        // What the stopped runs left is stored by the next one, once.
        let last = try Self.start(world, batch: 500, binary: Self.releaseBinary)
        // A bound, not a timing: under the full suite's load 20,000 rows can take minutes.
        let rows = try Self.waitForRows(world.database, total, seconds: 300)
        #expect(Self.stop(last, with: SIGTERM))
        #expect(rows == total)
        #expect(try IngestTests.count(world.database, "SELECT count(*) FROM sightings") == total)
        #expect(try IngestTests.count(world.database, "SELECT count(DISTINCT event_id) FROM sightings") == total)
    }

    @Test("two replicas on one durable consumer: every event stored exactly once")
    func twoReplicas() throws {
        let world = try IngestTests.world()
        defer { world.drop() }
        let subject = "\(world.settings.prefix).v1.sighting.dc1.cam-2"
        let one = try Self.start(world, batch: 20)
        let two = try Self.start(world, batch: 20)
        let total = 2_000
        for n in 0..<total {
            _ = try world.jetStream.publish(
                subject: subject, bytes: IngestTests.sighting(n, camera: "cam-2"), messageID: "r\(n)")
        }
        let rows = try Self.waitForRows(world.database, total)
        for replica in [one, two] {
            replica.terminate()
            replica.waitUntilExit()
        }
        #expect(rows == total)
        #expect(try IngestTests.count(world.database, "SELECT count(DISTINCT event_id) FROM sightings") == total)
    }
}

/// PostgreSQL stopped and started again under a running aggregator. Uses a PostgreSQL of its own
/// (scripts/servers.sh start-pg) so that the other tests keep theirs.
@Suite(
    "scan-aggregator and a PostgreSQL restart", .timed,
    .enabled(if: TestEnvironment.natsEnabled && TestEnvironment.postgresEnabled))
struct PostgresRestartTests {
    static let script = TestEnvironment.repoRoot + "/scripts/servers.sh"

    @Test("ingest pauses while PostgreSQL is down and resumes: nothing lost, nothing doubled")
    func restart() throws {
        let name = TestEnvironment.uniqueName("pgrestart")
        let log = NSTemporaryDirectory() + name + ".log"
        #expect(try ProcessRunner.runDetached(["/bin/bash", Self.script, "start-pg", name], log: log) == 0)
        defer {
            // Its data lives outside the clone: remove-pg removes both.
            _ = try? ProcessRunner.runDetached(["/bin/bash", Self.script, "remove-pg", name], log: log)
        }
        let dsn = try String(contentsOfFile: TestEnvironment.repoRoot + "/run/\(name)/pg.dsn", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        try Migrator(directory: TestEnvironment.repoRoot + "/migrations").migrate(try PGConnection(dsn: dsn))
        var settings = IngestSettings(natsURL: try TestEnvironment.requireNATS(), postgresDSN: dsn)
        settings.prefix = TestEnvironment.uniqueName("st")
        let jetStream = try NATSConnection(url: settings.natsURL).jetStream()
        try Ingestor.ensureStreams(jetStream, settings)
        defer {
            try? jetStream.deleteStream(settings.agentStream)
            try? jetStream.deleteStream(settings.deadLetterStream)
        }
        let world = IngestTests.World(
            settings: settings, database: try PGConnection(dsn: dsn), jetStream: jetStream, drop: {})
        let aggregatorLog = NSTemporaryDirectory() + name + "-aggregator.log"
        _ = FileManager.default.createFile(atPath: aggregatorLog, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: aggregatorLog) }
        let aggregator = try AggregatorProcessTests.start(
            world, batch: 50, stderr: try #require(FileHandle(forWritingAtPath: aggregatorLog)))
        let subject = "\(settings.prefix).v1.sighting.dc1.cam-3"
        let total = 1_500
        for n in 0..<500 {
            _ = try jetStream.publish(
                subject: subject, bytes: IngestTests.sighting(n, camera: "cam-3"), messageID: "p\(n)")
        }
        _ = try AggregatorProcessTests.waitForRows(world.database, 100)
        #expect(try ProcessRunner.runDetached(["/bin/bash", Self.script, "stop-pg", name], log: log) == 0)
        // Published while the database is down: JetStream holds them.
        for n in 500..<total {
            _ = try jetStream.publish(
                subject: subject, bytes: IngestTests.sighting(n, camera: "cam-3"), messageID: "p\(n)")
        }
        // It noticed (its ingest paused, said in its log) and waits for PostgreSQL instead of dying.
        #expect(
            Polling.until(seconds: 60) {
                ((try? String(contentsOfFile: aggregatorLog, encoding: .utf8)) ?? "").contains("PostgreSQL unavailable")
            }, "the aggregator noticed the database was gone")
        #expect(aggregator.isRunning, "the aggregator waits for PostgreSQL instead of dying")
        #expect(try ProcessRunner.runDetached(["/bin/bash", Self.script, "start-pg", name], log: log) == 0)
        let database = try PGConnection(dsn: dsn)
        let rows = try AggregatorProcessTests.waitForRows(database, total)
        aggregator.terminate()
        aggregator.waitUntilExit()
        #expect(rows == total)
        #expect(try IngestTests.count(database, "SELECT count(DISTINCT event_id) FROM sightings") == total)
    }
}
