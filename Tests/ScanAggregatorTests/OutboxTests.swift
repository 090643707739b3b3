import Foundation
import Logging
import ScanAggregatorRuntime
import ScanCore
import ScanNATS
import ScanPostgres
import ScanReconciliation
import ScanServices
import ScanTestSupport
import ScanTestTiming
import Testing

@testable import ScanAggregator

/// Results go out through the outbox: a round commits what it made, and the publisher sends it
/// afterwards, outside the round's transaction and lock. Against a nats-server of the test's own
/// (stopped and started again on its port, its JetStream store kept) and the real PostgreSQL.
@Suite(
    "aggregator results outbox", .timed,
    .enabled(if: TestEnvironment.natsEnabled && TestEnvironment.postgresEnabled))
struct OutboxTests {
    /// The real publisher, first asking PostgreSQL (on a connection of its own) whether anyone
    /// holds the test database's reconciliation lock while a result is being published (advisory
    /// locks are a database's own: other tests' rounds hold theirs).
    final class LockWatchingPublisher: ResultPublisher {
        let inner: any ResultPublisher
        let watcher: PGConnection
        private(set) var attempts = 0
        private(set) var lockHeldDuringPublish = 0

        init(_ inner: any ResultPublisher, watcher: PGConnection) {
            self.inner = inner
            self.watcher = watcher
        }

        func publish(subject: String, bytes: [UInt8], messageID: String, trace: TraceContext?) throws {
            attempts += 1
            let held = try watcher.query(
                """
                SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database
                WHERE d.datname = current_database() AND l.locktype = 'advisory' AND l.granted
                  AND l.classid = 0 AND l.objid = $1
                """,
                [.int(PassStore.lockKey)]
            ).rows.first?.first??.description
            if held != "0" { lockHeldDuringPublish += 1 }
            try inner.publish(subject: subject, bytes: bytes, messageID: messageID, trace: trace)
        }
    }

    @Test(
        "NATS stopped for 30 s: rounds keep committing and no result is published while the lock is held; back: every result out in order, none twice"
    )
    func natsAway() throws {
        let store = NSTemporaryDirectory() + TestEnvironment.uniqueName("outbox-js")
        defer { try? FileManager.default.removeItem(atPath: store) }
        var server = try NATSServerProcess(["-js", "-sd", store])
        defer { server.stop() }
        let migrated = try MigratedDatabase(prefix: "st_outbox")
        defer { migrated.drop() }
        var settings = IngestSettings(natsURL: "nats://127.0.0.1:\(server.port)", postgresDSN: migrated.dsn)
        settings.prefix = TestEnvironment.uniqueName("st")
        settings.fetchWaitMilliseconds = 200
        try SiteStore(connection: migrated.connection).load(
            try Topology.parse(Array(ReconcileTests.topology.utf8), file: "t.json"))

        // Twelve items on one lane, each seen by cam-01, stored by ingest while NATS is up.
        let jetStream = try NATSConnection(url: settings.natsURL).jetStream()
        try Ingestor.ensureStreams(jetStream, settings)
        try jetStream.ensureStream(settings.subjects.resultsStreamSpec(replicas: 1))
        let items = 12
        for item in 0..<items {
            _ = try jetStream.publish(
                subject: "\(settings.prefix).v1.sighting.dc1.cam-01",
                bytes: IngestTests.sighting(
                    item, value: "40063813339\(String(format: "%02d", item))", camera: "cam-01",
                    firstSeen: ReconcileTests.base.adding(milliseconds: Int64(item) * 700)),
                messageID: "s\(item)")
        }
        let ingestor = try Ingestor(settings: settings, logger: Logger(label: "test"))
        let stored = try Polling.until(seconds: 60) {
            try ingestor.runOnce()
            return try IngestTests.count(migrated.connection, "SELECT count(*) FROM sightings") == items
        }
        #expect(stored)

        var options = NATSConnection.Options()
        options.name = "outbox test publisher"
        let publisher = LockWatchingPublisher(
            JetStreamResultPublisher(
                jetStream: try NATSConnection(url: settings.natsURL, options: options).jetStream()),
            watcher: try PGConnection(dsn: migrated.dsn))
        let loop = ReconcileLoop(
            store: PostgresReconcileStore(dsn: migrated.dsn), publisher: publisher, subjects: settings.subjects,
            clock: SystemClock(), logger: Logger(label: "test"))

        // NATS away for 30 s: the rounds go on and close every pass; nothing is published.
        server.stop()
        let stopped = ContinuousClock.now
        var roundsWhileAway = 0
        while ContinuousClock.now - stopped < .seconds(30) {
            try loop.runOnce()
            roundsWhileAway += 1
            Thread.sleep(forTimeInterval: 0.2)
        }
        #expect(
            try IngestTests.count(migrated.connection, "SELECT count(*) FROM item_passes WHERE closed_at IS NOT NULL")
                == items)
        #expect(
            try IngestTests.count(migrated.connection, "SELECT count(*) FROM item_passes WHERE published_revision > 0")
                == 0)
        #expect(roundsWhileAway > 10)
        #expect(publisher.attempts > 0)

        // Back on its port with its store: everything goes out.
        server = try NATSServerProcess(["-js", "-sd", store], port: server.port)
        let published = try Polling.until(seconds: 60) {
            try loop.runOnce()
            return try IngestTests.count(
                migrated.connection, "SELECT count(*) FROM item_passes WHERE published_revision = revision") == items
        }
        #expect(published)
        #expect(publisher.lockHeldDuringPublish == 0, "a result was published while the reconciliation lock was held")

        let reader = try NATSConnection(url: settings.natsURL).jetStream()
        let events = try StreamReader.events(
            reader, stream: settings.subjects.resultsStream, subject: "\(settings.prefix).v1.item.>")
        #expect(events.count == items)
        #expect(Set(events.compactMap(\.msgId)).count == items)
        // In the outbox's order: by closing, as the store lists what waits.
        let order = try migrated.connection.query("SELECT item_id FROM item_passes ORDER BY closed_at, item_id")
            .rows.map { $0[0] ?? "" }
        #expect(events.compactMap { $0.event["itemId"]?.stringValue } == order)
    }
}
