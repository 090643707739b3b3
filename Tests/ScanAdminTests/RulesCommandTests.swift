import Foundation
import ScanCore
import ScanNATS
import ScanPostgres
import ScanTestSupport
import ScanTestTiming
import Testing
import ScanReconciliation
import ScanRules

/// `scanadmin rules` and `scanadmin cameras` against real PostgreSQL and nats-server.
@Suite(
    "scanadmin rules and cameras", .timed, .enabled(if: TestEnvironment.postgresEnabled && TestEnvironment.natsEnabled))
struct RulesCommandTests {
    typealias R = ReportCommandTests

    static func write(_ text: String, _ path: String) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    @Test("add, list, show, test, remove and history; every change reaches the rules bucket as the agents read it")
    func lifecycle() throws {
        let seeded = try R.database()
        defer { seeded.drop() }
        let prefix = TestEnvironment.uniqueName("st")
        let jetStream = try NATSConnection(url: try TestEnvironment.requireNATS()).jetStream()
        defer { try? jetStream.deleteStream("KV_" + ContractSubjects(prefix: prefix).rulesBucket) }
        var environment = seeded.environment
        environment["SCANTRACK_NATS"] = try TestEnvironment.requireNATS()
        func run(_ arguments: [String]) throws -> ProcessResult {
            try ProcessRunner.run(R.scanadmin, arguments, environment: environment)
        }
        let dir = try ReplayHarnessDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: dir) }

        let added = try run([
            "rules", "add", TestEnvironment.repoRoot + "/docs/examples/weekday-weekend.json", "--prefix", prefix,
            "--author", "alice",
        ])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdoutText.contains("revision 1: added weekdays-only-40, weekends-only-41"))
        let bucket = try jetStream.keyValue(bucket: ContractSubjects(prefix: prefix).rulesBucket)
        let first = try #require(try bucket.get(ContractSubjects.rulesKey))
        let published = try Ruleset.parse(first.value, file: "bucket")  // what an agent parses
        #expect(published.rules.map(\.id).contains("weekends-only-41"))

        // Saturday: 40… is rejected by the weekend rule, and the explanation says why.
        let saturday = try run([
            "rules", "test", "--code", "4006381333931", "--symbology", "EAN-13", "--at", "2026-11-21T10:00:00Z",
        ])
        #expect(saturday.status == 1)
        #expect(saturday.stdoutText.contains("weekends-only-41 (priority 20): matches → reject"))
        #expect(saturday.stdoutText.contains("decision: rejected by rule weekends-only-41"))
        let monday = try run([
            "rules", "test", "--code", "4006381333931", "--symbology", "EAN-13", "--at", "2026-11-23T10:00:00Z",
        ])
        #expect(monday.status == 0)
        #expect(monday.stdoutText.contains("decision: accepted by the default action"))

        // A replacement (same id) and a removal: new revisions, new bucket revisions.
        try Self.write(
            #"{"version": 1, "rules": [{"id": "lane-labels", "priority": 5, "action": "reject", "match": {"prefix": "LANE'; --"}}]}"#,
            dir + "/r.json")
        let replaced = try run(["rules", "add", dir + "/r.json", "--prefix", prefix])
        #expect(
            replaced.stdoutText.contains("revision 2: replaced lane-labels"),
            "\(replaced.stdoutText) \(replaced.stderr)")
        let shown = try run(["rules", "show", "lane-labels"])
        #expect(try JSONValue.parse(shown.stdoutText)["match"]?["prefix"] == .string("LANE'; --"))
        let removed = try run(["rules", "remove", "weekends-only-41", "--prefix", prefix, "--author", "bob"])
        #expect(removed.status == 0)
        let latest = try #require(try bucket.get(ContractSubjects.rulesKey))
        #expect(latest.revision > first.revision)
        #expect(try !Ruleset.parse(latest.value, file: "bucket").rules.map(\.id).contains("weekends-only-41"))

        let list = try run(["rules", "list", "--format", "json"])
        guard case .array(let rules) = try JSONValue.parse(list.stdoutText) else {
            Issue.record("not a list: \(list.stdoutText)")
            return
        }
        #expect(rules.map { $0["id"]?.stringValue ?? "" } == ["order-codes", "lane-labels", "weekdays-only-40"])
        let history = try run(["rules", "history", "--format", "csv"])
        let lines = history.stdoutText.split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines[1].contains(",alice,4,bucket "))
        #expect(lines[3].contains(",bob,3,bucket ") && lines[3].contains("removed weekends-only-41"))
    }

    @Test(
        "bad input: a bad ruleset is refused by path and stores nothing; unknown rule; NATS down keeps the revision and exits 3"
    )
    func badInput() throws {
        let seeded = try R.database()
        defer { seeded.drop() }
        let dir = try ReplayHarnessDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var environment = seeded.environment
        environment["SCANTRACK_NATS"] = "nats://127.0.0.1:1"
        func run(_ arguments: [String]) throws -> ProcessResult {
            try ProcessRunner.run(R.scanadmin, arguments, environment: environment)
        }
        try Self.write(#"{"version": 1, "rules": [{"id": "x", "action": "maybe"}]}"#, dir + "/bad.json")
        for command in ["check", "add"] {
            let bad = try run(["rules", command, dir + "/bad.json"])
            #expect(bad.status == 2, "\(command)")
            #expect(bad.stderr.contains("bad.json") && bad.stderr.contains("rules[0].action"), "\(bad.stderr)")
        }
        #expect(try run(["rules", "history", "--format", "csv"]).stdoutText.split(separator: "\n").count == 1)
        #expect(try run(["rules", "remove", "nope"]).status == 1)
        #expect(try run(["rules", "show", "nope"]).status == 1)
        #expect(try run(["rules", "test", "--code", "1", "--symbology", "EAN-99"]).status == 64)

        try Self.write(
            #"{"version": 1, "rules": [{"id": "only-40", "action": "reject", "match": {"notPrefix": "40"}}]}"#,
            dir + "/good.json")
        let offline = try run(["rules", "add", dir + "/good.json"])
        #expect(offline.status == 3)
        #expect(offline.stderr.contains("stored but not published"))
        let history = try run(["rules", "history", "--format", "csv"]).stdoutText
        #expect(history.contains(",no,added only-40"))
    }

    @Test("cameras: last heartbeat per camera, cameras of the topology never heard, and who is silent")
    func cameras() throws {
        let seeded = try R.database()
        defer { seeded.drop() }
        try SiteStore(connection: seeded.database).load(try Topology.parse(Array(R.topology.utf8), file: "t.json"))
        try seeded.database.query(
            """
            INSERT INTO cameras (camera, site, lane, last_status, last_seen) VALUES
              ('cam-01', 'dc1', 'L1', '{"fpsProcessed": 29.5, "framesDropped": 3, "liveTracks": 2, "spool": {"depth": 0}, "nats": "connected", "rules": {"revision": "7"}, "source": {"state": "streaming", "type": "genicam", "incompleteFrames": 4, "reconnects": 1, "controls": {"Gain": "6", "ExposureTime": "80"}}}', now()),
              ('cam-02', 'dc1', 'L1', '{"fpsProcessed": 30.0, "framesDropped": 0, "liveTracks": 0, "spool": {"depth": 120}, "nats": "disconnected", "rules": {"revision": "6"}}', now() - interval '5 minutes'),
              ('cam-05', 'dc1', 'L1', '{"fpsProcessed": 30.0, "framesDropped": 0, "liveTracks": 0, "spool": {"depth": 0}, "nats": "connected", "rules": {"revision": "6"}, "source": {"state": "ended", "type": "clip"}}', now() - interval '5 minutes')
            """)
        let result = try ProcessRunner.run(
            R.scanadmin, ["cameras", "--format", "json"], environment: seeded.environment)
        #expect(result.status == 0, "\(result.stderr)")
        guard case .array(let cameras) = try JSONValue.parse(result.stdoutText) else {
            Issue.record("not a list")
            return
        }
        #expect(cameras.map { $0["camera"]?.stringValue ?? "" } == ["cam-01", "cam-02", "cam-05", "cam-10"])
        #expect(
            cameras[0]["state"] == .string("streaming") && cameras[0]["rules"] == .string("7")
                && cameras[0]["dropped"] == .number(3))
        #expect(
            cameras[0]["incomplete"] == .number(4) && cameras[0]["reconnects"] == .number(1)
                && cameras[0]["controls"] == .string("ExposureTime=80 Gain=6"), "the values the camera took")
        #expect(cameras[1]["state"] == .string("SILENT") && cameras[1]["spool"] == .number(120))
        // An agent that finished its clip, or was stopped, said so in its last heartbeat: it ended,
        // it is not silent (that is for an agent that went quiet without a word).
        #expect(cameras[2]["state"] == .string("ended"), "\(cameras[2])")
        #expect(cameras[3]["state"] == .string("never heard") && cameras[3]["place"] == .string("station pack-01"))
        let check = try ProcessRunner.run(R.scanadmin, ["cameras", "--check"], environment: seeded.environment)
        #expect(check.status == 1)
        #expect(
            check.stdoutText.contains("4 camera(s), 2 silent (no heartbeat for 15 s), 1 ended"), "\(check.stdoutText)")
    }
}
