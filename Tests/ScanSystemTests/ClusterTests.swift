import Foundation
import ScanCore
import ScanNATS
import ScanPostgres
import ScanTestSupport
import ScanTestTiming
import Testing

/// The scaling page's set-up, run for real: a three-node JetStream cluster on loopback, streams
/// kept on all three, two aggregators on one durable consumer and a live agent; the node that
/// leads the agents' stream is stopped mid-run.
@Suite("JetStream cluster", .timed, .enabled(if: TestEnvironment.natsEnabled && TestEnvironment.postgresEnabled))
struct ClusterTests {
    static var aggregator: String { TestEnvironment.productsDirectory + "/scan-aggregator" }

    /// Three nats-server nodes of the test's own (scripts/servers.sh start-cluster).
    final class Cluster {
        let name = TestEnvironment.uniqueName("cluster")
        var log: String { NSTemporaryDirectory() + name + ".log" }
        var run: String { TestEnvironment.repoRoot + "/run/" + name }

        init() throws {
            #expect(try script("start-cluster") == 0, "the cluster starts; see \(log)")
        }

        var urls: String {
            ((try? String(contentsOfFile: run + "/cluster.urls", encoding: .utf8)) ?? "")
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }

        func stop(node: String) throws {
            #expect(try script("stop-node", node.replacingOccurrences(of: "n", with: "")) == 0)
        }

        func script(_ arguments: String...) throws -> Int32 {
            try ProcessRunner.runDetached(
                ["/bin/bash", AgentRunHarness.script] + arguments.prefix(1) + [name] + arguments.dropFirst(), log: log)
        }

        deinit {
            _ = try? script("stop-cluster")
            try? FileManager.default.removeItem(atPath: run)
        }
    }

    static func startAggregator(urls: String, dsn: String, prefix: String, log: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: aggregator)
        process.arguments = [
            "run", "--nats", urls, "--pg", dsn, "--prefix", prefix, "--stream-replicas", "3", "--batch", "100",
        ]
        process.environment = ProcessInfo.processInfo.environment.merging([
            "SCANTRACK_MIGRATIONS": TestEnvironment.repoRoot + "/migrations"
        ]) { _, new in new }
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = FileHandle.nullDevice
        try ProcessRunner.withSignalsUnblocked { try process.run() }
        return process
    }

    @Test("a node stopped mid-run: two aggregators and an agent store every sighting exactly once")
    func nodeStoppedMidRun() throws {
        let scratch = try ScratchDatabase(prefix: "st_cluster")
        defer { scratch.drop() }
        let dsn = scratch.dsn
        let database = try PGConnection(dsn: dsn)
        try Migrator(directory: TestEnvironment.repoRoot + "/migrations").migrate(database)

        let cluster = try Cluster()
        let urls = cluster.urls
        #expect(NATSConnection.serverList(urls).count == 3)
        let prefix = TestEnvironment.uniqueName("st")
        let subjects = ContractSubjects(prefix: prefix)
        let jetStream = try NATSConnection(url: urls).jetStream()
        // A new cluster elects its leaders within seconds; until then stream creation fails.
        let ready = AgentRunHarness.eventually(seconds: 120) {
            (try? jetStream.ensureStream(subjects.agentStreamSpec(replicas: 3))) != nil
        }
        #expect(ready, "the cluster accepts a stream with three replicas")
        #expect(try jetStream.replicas(ofStream: subjects.agentStream) == 3)

        let clip = try AgentRunHarness.flowClip(frames: 700, seed: 23)  // 22 codes wholly in view
        let offline = try AgentRunHarness.offline(clip)
        #expect(offline.sightings.count >= 20, "the clip has enough codes to be a test")

        let dir = try ReplayHarness.temporaryDirectory()
        let aggregators = try (1...2).map { n in
            try Self.startAggregator(urls: urls, dsn: dsn, prefix: prefix, log: "\(dir)/aggregator-\(n).log")
        }
        defer { aggregators.filter(\.isRunning).forEach { kill($0.processIdentifier, SIGKILL) } }
        let config = dir + "/cam-01.json"
        try """
        {"camera": {"id": "cam-01", "site": "dc1", "lane": "L1"},
         "source": \(AgentRunHarness.clipSource(clip)),
         "nats": {"url": "\(urls)", "prefix": "\(prefix)", "replicas": 3},
         "spool": {"dir": "\(dir)/spool"}, "heartbeatSeconds": 0.5}
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let agent = try AgentRunHarness.start(config: config, log: dir + "/agent.log", drainSeconds: 60)
        defer { if agent.isRunning { kill(agent.processIdentifier, SIGKILL) } }

        // Mid-run: some sightings are stored, more are to come. Stop the node that leads the stream.
        let midway = AgentRunHarness.eventually(seconds: 120) {
            (try? IngestCount.rows(database, "SELECT count(*) FROM sightings")) ?? 0 >= offline.sightings.count / 4
        }
        #expect(midway, "sightings were stored before the node was stopped")
        let leader = try #require(try jetStream.leader(ofStream: subjects.agentStream))
        #expect(["n1", "n2", "n3"].contains(leader))
        try cluster.stop(node: leader)
        let storedAtStop = try IngestCount.rows(database, "SELECT count(*) FROM sightings")
        #expect(storedAtStop < offline.sightings.count, "the node stopped before the clip ended")

        #expect(AgentRunHarness.waitForExit(agent, seconds: 120), "the agent finishes the clip and drains its spool")
        #expect(agent.terminationStatus == 0)
        let complete = AgentRunHarness.eventually(seconds: 120) {
            (try? IngestCount.rows(database, "SELECT count(*) FROM sightings")) ?? 0 >= offline.sightings.count
                && (try? IngestCount.rows(database, "SELECT count(*) FROM session_events")) ?? 0
                    >= offline.sessionEvents
        }
        #expect(complete, "every sighting reached PostgreSQL through the two remaining nodes")
        let newLeader = try jetStream.leader(ofStream: subjects.agentStream)
        #expect(newLeader != nil && newLeader != leader, "another node took over the stream")
        #expect(
            try jetStream.replicas(ofStream: subjects.resultsStream) == 3, "the aggregators made the results stream R3")
        // Every event the aggregators were delivered is acknowledged and none waits: nothing can
        // come again (a duplicate would be a redelivery of one not acknowledged), so the rows
        // below are final.
        let settled = AgentRunHarness.eventually(seconds: 120) {
            (try? jetStream.consumerBacklog(stream: subjects.agentStream, consumer: "aggregator")).map {
                $0.pending == 0 && $0.ackPending == 0
            } ?? false
        }
        #expect(settled, "the aggregators' consumer has nothing pending or unacknowledged")

        let stored = try database.query("SELECT value, first_frame, last_frame FROM sightings").rows.map { row in
            "\(row[0] ?? "?")@\(row[1] ?? "-1")-\(row[2] ?? "-1")"
        }
        #expect(stored.sorted() == offline.sightings, "exactly the offline replay's sightings, each once")
        #expect(try IngestCount.rows(database, "SELECT count(*) FROM session_events") == offline.sessionEvents)
        #expect(try IngestCount.rows(database, "SELECT count(*) FROM dead_letters") == 0)

        for process in aggregators {
            #expect(process.isRunning, "both aggregators outlived the node")
            process.terminate()
            #expect(AgentRunHarness.waitForExit(process, seconds: 120))
            #expect(process.terminationStatus == 0, "an aggregator stops cleanly on SIGTERM with a node gone")
        }
    }
}

enum IngestCount {
    static func rows(_ database: PGConnection, _ sql: String) throws -> Int {
        Int(try database.query(sql).rows.first?.first??.description ?? "0") ?? -1
    }
}
