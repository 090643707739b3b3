import Foundation
import ScanCore
import ScanNATS
import ScanPNG
import ScanPostgres
import ScanSynth
import ScanTestSupport
import ScanTestTiming
import Testing

/// No-reads end to end on the real servers: agent → JetStream → aggregator → PostgreSQL →
/// scanadmin, with the WMS-style consumer checking them against the AsyncAPI document.
@Suite("no-reads end to end", .timed, .enabled(if: TestEnvironment.postgresEnabled))
struct NoReadEndToEndTests {
    typealias H = AgentRunHarness

    static func aggregator(
        prefix: String, natsURL: String, dsn: String, log: String, environment: [String: String] = [:]
    ) throws -> Process {
        try ProcessRunner.start(
            TestEnvironment.productsDirectory + "/scan-aggregator", ["run", "--prefix", prefix, "--batch", "10"],
            environment: ProcessInfo.processInfo.environment.merging(
                [
                    "SCANTRACK_NATS": natsURL, "SCANTRACK_PG": dsn,
                    "SCANTRACK_MIGRATIONS": TestEnvironment.repoRoot + "/migrations",
                ].merging(environment) { $1 }
            ) { _, new in new }, log: log)
    }

    @Test(
        "torn labels: noread events reach the WMS subject and PostgreSQL once each across an aggregator restart; scanadmin lists them, writes their pictures and reports the read rate"
    )
    func endToEnd() throws {
        let natsURL = try TestEnvironment.requireNATS()
        let python = TestEnvironment.repoRoot + "/.cache/venv/bin/python"
        try #require(
            FileManager.default.isExecutableFile(atPath: python), "run scripts/install-deps.sh (make test does)")
        let migrated = try MigratedDatabase(prefix: "st_noread")
        let dsn = migrated.dsn
        let database = migrated.connection
        let prefix = TestEnvironment.uniqueName("st")
        let subjects = ContractSubjects(prefix: prefix)
        let jetStream = try NATSConnection(url: natsURL).jetStream()
        let dir = try ReplayHarness.temporaryDirectory()
        defer { H.cleanUp([], jetStream: jetStream, subjects: subjects, database: migrated, dir: dir) }
        let renderer = try SceneRenderer(scene: Scenarios.torn())
        let clip = dir + "/torn.y4m"
        try renderer.writeClip(to: clip)
        let torn = renderer.expectedNoReads().count
        let readable = renderer.expectedCodes().count

        // The aggregator runs while the agent publishes; it is killed after the first no-read is
        // stored and started again.
        var aggregator = try Self.aggregator(prefix: prefix, natsURL: natsURL, dsn: dsn, log: dir + "/agg.log")
        let config = try H.config(
            in: dir, source: H.clipSource(clip, realtime: true), natsURL: natsURL, prefix: prefix,
            extra: #", "noread": {"imageDir": "\#(dir)/noreads", "maxImages": 2}"#)
        let agent = try H.start(config: config, log: dir + "/agent.log")
        func stored() throws -> Int {
            Int(try database.query("SELECT count(*) FROM noreads").rows.first?[0] ?? "0") ?? 0
        }
        #expect(try H.eventually(seconds: 120) { try stored() >= 1 })
        kill(aggregator.processIdentifier, SIGKILL)
        aggregator.waitUntilExit()
        aggregator = try Self.aggregator(prefix: prefix, natsURL: natsURL, dsn: dsn, log: dir + "/agg.log")
        #expect(H.waitForExit(agent))
        #expect(
            agent.terminationStatus == 0, "\((try? String(contentsOfFile: dir + "/agent.log", encoding: .utf8)) ?? "")")
        #expect(try H.eventually(seconds: 120) { try stored() >= torn })
        #expect(
            try H.eventually(seconds: 120) {
                Int(try database.query("SELECT count(*) FROM sightings").rows.first?[0] ?? "0") == readable
            })
        aggregator.terminate()
        aggregator.waitUntilExit()
        #expect(aggregator.terminationStatus == 0)
        #expect(try stored() == torn, "each no-read stored once")
        // The agent's folder keeps the newest two pictures (maxImages).
        let kept = try FileManager.default.contentsOfDirectory(atPath: dir + "/noreads").filter { $0.hasSuffix(".png") }
        #expect(kept.count == min(2, torn))

        // What a WMS reads on the documented subject validates against the documented schema.
        let wms = try ProcessRunner.run(
            python,
            [
                TestEnvironment.repoRoot + "/scripts/wms_consumer.py", "--nats", natsURL, "--prefix", prefix, "--idle",
                "1.5",
            ])
        #expect(wms.status == 0, "\(wms.stdoutText) \(wms.stderr)")
        let summary = try JSONValue.parse(wms.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(summary["noReads"]?.intValue == torn)
        #expect(summary["sightings"]?.intValue == readable)
        #expect(summary["problems"] == .array([]))

        // scanadmin: the list, a picture, and the read rate.
        let environment = [
            "SCANTRACK_PG": dsn, "SCANTRACK_MIGRATIONS": TestEnvironment.repoRoot + "/migrations",
            "SCANTRACK_CONFIG": "",
        ]
        let scanadmin = TestEnvironment.productsDirectory + "/scanadmin"
        let range = ["--from", "2020-01-01", "--to", "2100-01-01", "--time-zone", "UTC"]
        let listed = try ProcessRunner.run(
            scanadmin, ["noreads", "list", "--format", "json"] + range, environment: environment)
        #expect(listed.status == 0, "\(listed.stderr)")
        guard case .array(let rows) = try JSONValue.parse(listed.stdoutText), let first = rows.first else {
            Issue.record("no rows: \(listed.stdoutText)")
            return
        }
        #expect(rows.count == torn)
        #expect(rows.allSatisfy { $0["camera"] == .string("cam-01") && $0["lane"] == .string("L1") })
        let out = dir + "/shown.png"
        let shown = try ProcessRunner.run(
            scanadmin, ["noreads", "show", first["id"]?.stringValue ?? "?", "--out", out], environment: environment)
        #expect(shown.status == 0, "\(shown.stderr)")
        let picture = try PNGImage.decode(Array(try Data(contentsOf: URL(fileURLWithPath: out))))
        #expect(picture.width > 100 && picture.height > 40)
        let report = try ProcessRunner.run(scanadmin, ["report", "--format", "json"] + range, environment: environment)
        #expect(report.status == 0, "\(report.stderr)")
        let cameras = try ReportOutput.cameras(report.stdoutText)
        let camera = cameras.first { $0["camera"] == .string("cam-01") }
        #expect(camera?["noReads"]?.intValue == torn && camera?["sightings"]?.intValue == readable)
        #expect(camera?["readRate"]?.doubleValue == Double(readable) / Double(readable + torn))
    }
}
