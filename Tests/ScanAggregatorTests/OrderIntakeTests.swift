import Foundation
import Logging
import ScanCore
import ScanEvents
import ScanNATS
import ScanAggregatorRuntime
import ScanPostgres
import ScanReconciliation
import ScanTestSupport
import ScanTestTiming
import Testing

@testable import ScanAggregator

/// Orders from the WMS against the real nats-server and PostgreSQL: the WMS's side played by
/// scripts/wms_consumer.py (nats-py), the aggregator's by OrderIntake, Ingestor and Reconciler.
@Suite(
    "orders from the WMS over NATS", .timed,
    .enabled(if: TestEnvironment.natsEnabled && TestEnvironment.postgresEnabled))
struct OrderIntakeTests {
    typealias W = IngestTests

    static func order(_ json: String) -> [UInt8] { Array(json.utf8) }

    @Test(
        "orders are stored by revision and answered on orderack; a bad one is rejected naming its field and is a dead letter"
    )
    func storedAndAnswered() throws {
        let world = try W.world()
        defer { world.drop() }
        let prefix = world.settings.prefix
        let subject = "\(prefix).v1.order.dc1"
        let time = #""time": "2026-11-26T06:00:00Z""#
        let messages = [
            #"{"type": "order", "action": "create", "orderId": "ORD-7", "revision": 2, "site": "dc1", \#(time), "lines": [{"line": 1, "code": "4006381333931", "quantity": 2}]}"#,
            #"{"type": "order", "action": "replace", "orderId": "ORD-7", "revision": 1, "site": "dc1", \#(time), "lines": [{"line": 1, "code": "4006381333931", "quantity": 5}]}"#,
            #"{"type": "order", "action": "create", "orderId": "ORD-8", "revision": 1, "site": "dc1", \#(time), "lines": [{"line": 1, "code": "A", "quantity": 0}]}"#,
            #"{"type": "order", "action": "cancel", "orderId": "ORD-9", "revision": 1, "site": "dc1", \#(time)}"#,
        ]
        var sequences: [UInt64] = []
        for (index, body) in messages.enumerated() {
            sequences.append(
                try world.jetStream.publish(subject: subject, bytes: Self.order(body), messageID: "m\(index)").sequence)
        }
        let intake = try OrderIntake(settings: world.settings, logger: Logger(label: "test"))
        for _ in 0..<50 where intake.loop.totals.messages < messages.count { intake.loop.runOnce() }
        #expect(
            intake.loop.totals
                == {
                    var counts = OrderCounts()
                    (counts.messages, counts.applied, counts.unchanged, counts.rejected) = (4, 2, 1, 1)
                    return counts
                }())
        let store = SiteStore(connection: world.database)
        #expect(
            try store.orderLines(site: "dc1", "ORD-7")?.map(\.expected) == [2], "the older revision changed nothing")
        #expect(try store.orderState(site: "dc1", "ORD-9")?.cancelled == true)
        #expect(try store.orderState(site: "dc1", "ORD-8") == nil)
        let answers = try StreamReader.events(
            world.jetStream, stream: world.settings.subjects.resultsStream, subject: "\(prefix).v1.orderack.>")
        #expect(answers.map(\.subject) == Array(repeating: "\(prefix).v1.orderack.dc1", count: 4))
        let parsed = try answers.map { try OrderAckEvent.parse($0.event) }
        #expect(parsed.map(\.sequence) == sequences)
        #expect(parsed.map(\.status) == [.accepted, .unchanged, .rejected, .accepted])
        #expect(parsed[2].path == "lines[0].quantity" && parsed[2].reason == "bad-value")
        #expect(answers.map(\.msgId) == parsed.map(\.eventId))
        #expect(try W.count(world.database, "SELECT count(*) FROM dead_letters WHERE reason = 'bad-value'") == 1)
    }

    @Test(
        "another site's WMS cannot replace or freeze a site's order: the same id on order.dc2 is dc2's own, and a revision jump to 2147483647 is refused on revision"
    )
    func siteIsolationAndJumps() throws {
        let world = try W.world()
        defer { world.drop() }
        let prefix = world.settings.prefix
        let time = #""time": "2026-11-26T06:00:00Z""#
        let messages = [
            (
                "dc1",
                #"{"type": "order", "action": "create", "orderId": "ORD-1", "revision": 1, "site": "dc1", \#(time), "lines": [{"line": 1, "code": "A", "quantity": 1}]}"#
            ),
            (
                "dc2",
                #"{"type": "order", "action": "cancel", "orderId": "ORD-1", "revision": 2147483647, "site": "dc2", \#(time)}"#
            ),
            (
                "dc1",
                #"{"type": "order", "action": "replace", "orderId": "ORD-1", "revision": 2147483647, "site": "dc1", \#(time), "lines": [{"line": 1, "code": "Z", "quantity": 9}]}"#
            ),
        ]
        for (index, (site, body)) in messages.enumerated() {
            _ = try world.jetStream.publish(
                subject: "\(prefix).v1.order.\(site)", bytes: Self.order(body), messageID: "j\(index)")
        }
        let intake = try OrderIntake(settings: world.settings, logger: Logger(label: "test"))
        for _ in 0..<50 where intake.loop.totals.messages < messages.count { intake.loop.runOnce() }
        let store = SiteStore(connection: world.database)
        #expect(try store.orderLines(site: "dc1", "ORD-1")?.map(\.code) == ["A"], "dc1's order stands")
        #expect(try store.orderState(site: "dc1", "ORD-1")?.revision == 1)
        #expect(try store.orderState(site: "dc2", "ORD-1")?.cancelled == true, "dc2's cancel is dc2's own order")
        let answers = try StreamReader.events(
            world.jetStream, stream: world.settings.subjects.resultsStream, subject: "\(prefix).v1.orderack.>")
        let parsed = try answers.map { try OrderAckEvent.parse($0.event) }
        #expect(parsed.map(\.status) == [.accepted, .accepted, .rejected], "\(parsed)")
        #expect(parsed.last?.path == "revision" && parsed.last?.reason == "bad-value", "\(parsed)")
    }

    @Test("the WMS example publishes an order, reads its answer and the verdict of the pack made for it")
    func wmsExample() throws {
        let world = try W.world()
        defer { world.drop() }
        try SiteStore(connection: world.database).load(
            try Topology.parse(Array(ReconcileTests.topology.utf8), file: "t.json"))
        let python = TestEnvironment.repoRoot + "/.cache/venv/bin/python"
        try #require(
            FileManager.default.isExecutableFile(atPath: python), "run scripts/install-deps.sh (make test does)")
        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/order.json"
        try #"""
        {"type": "order", "action": "create", "orderId": "ORD-42", "revision": 1, "site": "dc1",
         "time": "2026-11-26T06:00:00Z",
         "lines": [{"line": 1, "code": "4006381333931", "quantity": 2}, {"line": 2, "code": "5012345678900", "quantity": 1}]}
        """#.write(toFile: file, atomically: true, encoding: .utf8)
        let wms = try ProcessRunner.start(
            python,
            [
                TestEnvironment.repoRoot + "/scripts/wms_consumer.py", "--nats", world.settings.natsURL, "--prefix",
                world.settings.prefix, "--order", file, "--await-pack", "60",
            ],
            environment: ProcessInfo.processInfo.environment, log: dir + "/wms.log", stdoutFile: dir + "/wms.json")
        let intake = try OrderIntake(settings: world.settings, logger: Logger(label: "test"))
        let store = SiteStore(connection: world.database)
        for _ in 0..<100 where try store.orderState(site: "dc1", "ORD-42") == nil { intake.loop.runOnce() }
        #expect(try store.orderLines(site: "dc1", "ORD-42")?.count == 2)
        // The pack station's session for the order (what scan-agent sends at its end).
        _ = try world.jetStream.publish(
            subject: "\(world.settings.prefix).v1.session.dc1.cam-10",
            bytes: ReconcileTests.sessionCompleted(
                "s-42", orderId: "ORD-42", codes: [("4006381333931", 2, nil), ("5012345678900", 1, nil)]),
            messageID: "s-42")
        let reconciler = try Reconciler(settings: world.settings, logger: Logger(label: "test"))
        try ReconcileTests.settle(world, [reconciler]) {
            try W.count(world.database, "SELECT count(*) FROM pack_records WHERE published") == 1
        }
        wms.waitUntilExit()
        let output = (try? String(contentsOfFile: dir + "/wms.json", encoding: .utf8)) ?? ""
        let log = (try? String(contentsOfFile: dir + "/wms.log", encoding: .utf8)) ?? ""
        #expect(wms.terminationStatus == 0, "\(output) \(log)")
        let summary = try JSONValue.parse(output.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(summary["answer"]?["status"] == .string("accepted"), "\(output)")
        #expect(summary["answer"]?["storedRevision"]?.intValue == 1)
        #expect(summary["packVerdict"] == .string("complete"), "\(output)")
        #expect(summary["problems"] == .array([]))
    }
}
