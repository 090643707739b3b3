import Foundation
import ScanCore
import ScanNATS
import ScanPNG
import ScanPostgres
import ScanServices
import ScanSynth
import ScanTestSupport
import ScanTestTiming
import Testing

/// The supervisor dashboard (`scanadmin serve`) opened in a real headless Chromium on the demo's
/// data: topology, orders, three agents and the aggregator on the real servers.
@Suite("dashboard in a browser", .timed, .enabled(if: TestEnvironment.postgresEnabled))
struct DashboardBrowserTests {
    typealias H = AgentRunHarness

    /// One 12-hour shift around now and another after it, in UTC: the test's data is never cut by
    /// a shift's end, whenever it runs.
    static func shiftsAroundNow() -> String {
        let hour = Calendar(identifier: .gregorian).dateComponents(in: TimeZone.gmt, from: Date()).hour ?? 0
        let start = (hour + 18) % 24
        let end = (hour + 6) % 24
        return String(format: "day=%02d:00-%02d:00,other=%02d:00-%02d:00", start, end, end, start)
    }

    static func agentConfig(
        _ dir: String, camera: String, place: String, clip: String, natsURL: String, prefix: String, extra: String = "",
        startAt: Timestamp? = nil
    ) throws -> String {
        let path = dir + "/\(camera)-\(URL(fileURLWithPath: clip).deletingPathExtension().lastPathComponent).json"
        try """
        {"camera": {"id": "\(camera)", "site": "dc1", \(place)},
         "source": \(AgentRunHarness.clipSource(clip, realtime: false, startAt: startAt)),
         "nats": {"url": "\(natsURL)", "prefix": "\(prefix)"},
         "spool": {"dir": "\(dir)/spool-\(camera)-\(URL(fileURLWithPath: clip).lastPathComponent)"},
         "heartbeatSeconds": 0.5\(extra)}
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test(
        "the page shows the demo's lanes, packs and cameras with the figures of scanadmin report, updates in place when new sightings and no-reads arrive, and drills down to no-read pictures, a pack's lines and a camera's heartbeats"
    )
    func demoInChromium() throws {
        let natsURL = try TestEnvironment.requireNATS()
        let python = TestEnvironment.repoRoot + "/.cache/venv/bin/python"
        try #require(
            FileManager.default.isExecutableFile(atPath: python), "run scripts/install-deps.sh (make test does)")
        let chromium = try #require(ProcessRunner.which("chromium"), "chromium is installed by scripts/install-deps.sh")
        let migrated = try MigratedDatabase(prefix: "st_dash")
        let database = migrated.connection
        let prefix = TestEnvironment.uniqueName("st")
        let subjects = ContractSubjects(prefix: prefix)
        let jetStream = try NATSConnection(url: natsURL).jetStream()
        let dir = try ReplayHarness.temporaryDirectory()
        // Screenshots stay after the run, beside the build.
        let output = TestEnvironment.repoRoot + "/.build/test-output/dashboard"
        try? FileManager.default.removeItem(atPath: output)
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        var running: [Process] = []
        defer { H.cleanUp(running, jetStream: jetStream, subjects: subjects, database: migrated, dir: dir) }
        let repo = TestEnvironment.repoRoot
        let bin = TestEnvironment.productsDirectory
        let environment = [
            "SCANTRACK_PG": migrated.dsn, "SCANTRACK_MIGRATIONS": repo + "/migrations", "SCANTRACK_CONFIG": "",
            "SCANTRACK_NATS": natsURL,
        ]
        func admin(_ arguments: [String]) throws -> String {
            let result = try ProcessRunner.run(bin + "/scanadmin", arguments, environment: environment)
            try #require(result.status == 0, "scanadmin \(arguments.joined(separator: " ")): \(result.stderr)")
            return result.stdoutText
        }

        // The demo's set-up: topology, orders, clips of a lane and a pack station.
        _ = try admin(["topology", "load", repo + "/scripts/demo/topology.json"])
        _ = try admin(["orders", "import", repo + "/docs/examples/orders.csv"])
        for scene in ["lane", "pack"] {
            let made = try ProcessRunner.run(bin + "/scan-synth", [scene, "\(dir)/\(scene).y4m"])
            try #require(made.status == 0, "\(made.stderr)")
        }
        let aggregator = try NoReadEndToEndTests.aggregator(
            prefix: prefix, natsURL: natsURL, dsn: migrated.dsn, log: dir + "/agg.log")
        running.append(aggregator)
        let lane = #""lane": "L1""#
        // cam-02 is 1.5 s downstream of cam-01 (the topology's travel time): its clip starts 1.5 s later.
        let start = SystemClock().now
        let cam01 = try Self.agentConfig(
            dir, camera: "cam-01", place: lane, clip: dir + "/lane.y4m", natsURL: natsURL, prefix: prefix,
            startAt: start)
        let cam02 = try Self.agentConfig(
            dir, camera: "cam-02", place: lane, clip: dir + "/lane.y4m", natsURL: natsURL, prefix: prefix,
            startAt: start.adding(milliseconds: 1_500))
        let cam10 = try Self.agentConfig(
            dir, camera: "cam-10", place: #""station": "pack-01""#, clip: dir + "/pack.y4m", natsURL: natsURL,
            prefix: prefix,
            extra:
                #", "session": {"start": "orderCode", "stopAfterIdleSeconds": 2.5}, "rules": "\#(repo)/scripts/demo/pack-rules.json""#
        )
        let agents = [
            try H.start(config: cam01, log: dir + "/cam-01.log"), try H.start(config: cam10, log: dir + "/cam-10.log"),
            try H.start(config: cam02, log: dir + "/cam-02.log"),
        ]
        running += agents
        for agent in agents {
            #expect(H.waitForExit(agent))
            #expect(agent.terminationStatus == 0)
        }

        // The demo's outcome, settled: all 30 sightings stored and reconciled into item passes, three
        // packs. Ten products pass; an agent that started later than its 1.5 s by more than the lane's
        // 0.6 s window (a loaded machine) leaves some passes seen by one camera only.
        let shifts = Self.shiftsAroundNow()
        let period = ["--shift", "current", "--shifts", shifts, "--time-zone", "UTC", "--format", "json"]
        func report(_ extra: [String] = []) throws -> JSONValue {
            guard case .array(let all)? = try JSONValue.parse(try admin(["report"] + period + extra))["shifts"],
                let shift = all.first
            else { throw TestFailure("no current shift in the report") }
            return shift
        }
        var settled = JSONValue.null
        #expect(
            try H.eventually(seconds: 120) {
                settled = try report()
                let unreconciled = try database.query("SELECT count(*) AS n FROM sightings WHERE NOT reconciled")
                    .named("unreconciled").first?.int("n")
                return unreconciled == 0 && settled["sightings"]?.intValue == 30
                    && settled["packs"]?["total"]?.intValue == 3
            }, "\(settled)")
        // The report reads rollups: the same figures as summed from the demo's stored rows, for the
        // whole site and for the lane, once the last heartbeats and passes (rolled up a second at a
        // time, and on a loaded machine stored some seconds after the agents exit) are in. The four
        // reports are asked again until they agree in one round.
        var quiet = JSONValue.null
        var fromRows = JSONValue.null
        var laneRows = JSONValue.null
        var laneRollups = JSONValue.null
        #expect(
            try H.eventually(seconds: 120) {
                fromRows = try report(["--from-rows"])
                quiet = try report()
                laneRows = try report(["--lane", "L1", "--from-rows"])
                laneRollups = try report(["--lane", "L1"])
                return quiet == fromRows && laneRows == laneRollups
            },
            "from rows \(fromRows)\nfrom rollups \(quiet)\nlane from rows \(laneRows)\nlane from rollups \(laneRollups)"
        )
        #expect((10...20).contains(quiet["itemPasses"]?.intValue ?? 0), "\(quiet)")

        // The dashboard, and Chromium on it.
        let serve = try ProcessRunner.start(
            bin + "/scanadmin",
            ["serve", "--listen", "127.0.0.1:0", "--refresh-seconds", "0.5", "--shifts", shifts, "--time-zone", "UTC"],
            environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new },
            log: dir + "/serve.log", stdoutFile: dir + "/serve.out")
        running.append(serve)
        var url = ""
        #expect(
            H.eventually(seconds: 120) {
                let out = (try? String(contentsOfFile: dir + "/serve.out", encoding: .utf8)) ?? ""
                guard let line = out.split(separator: "\n").first(where: { $0.hasPrefix("dashboard: ") }) else {
                    return false
                }
                url = String(line.dropFirst("dashboard: ".count))
                return true
            }, "\((try? String(contentsOfFile: dir + "/serve.log", encoding: .utf8)) ?? "")")
        try #require(url.hasPrefix("http://127.0.0.1:"))
        let shortPack = try #require(
            try database.query("SELECT session_id FROM pack_records WHERE order_id = 'ORD-1002'").rows.first?[0] ?? nil)
        let driver = try ProcessRunner.start(
            python,
            [
                repo + "/scripts/dashboard_browser.py", "--url", url, "--out", output, "--chromium", chromium,
                "--wait-change", "lane:dc1/L1:sightings", "--wait-change", "lane:dc1/L1:noReads", "--drill",
                "/lanes/dc1/L1", "--drill", "/packs/\(shortPack)",
                "--drill", "/cameras/cam-10",
            ], environment: ProcessInfo.processInfo.environment, log: dir + "/browser.log",
            stdoutFile: dir + "/browser.json")
        running.append(driver)
        #expect(
            H.eventually(seconds: 120) { FileManager.default.fileExists(atPath: output + "/before.json") },
            "\((try? String(contentsOfFile: dir + "/browser.log", encoding: .utf8)) ?? "")")

        // What the page showed first equals the report, for the site and for its lane.
        let before = try JSONValue.parse(String(contentsOfFile: output + "/before.json", encoding: .utf8))
        func figures(_ snapshot: JSONValue?, _ scope: String) -> JSONValue? {
            guard case .array(let scopes)? = snapshot?["scopes"] else { return nil }
            return scopes.first { $0["scope"] == .string(scope) }?["figures"]
        }
        let siteShown = try #require(figures(before, "site:dc1"))
        let laneShown = try #require(figures(before, "lane:dc1/L1"))
        let siteReport = try report(["--site", "dc1"])
        // A lane's row is the report's lane table entry.
        guard case .array(let reportedLanes)? = siteReport["lanes"],
            let laneReport = reportedLanes.first(where: { $0["lane"] == .string("L1") })
        else {
            Issue.record("no lane L1 in the report: \(siteReport)")
            return
        }
        for (shown, reported) in [(siteShown, siteReport), (laneShown, laneReport)] {
            for key in ["itemPasses", "sightings", "noReads", "rejected"] {
                #expect(shown[key]?.stringValue == reported[key]?.intValue.map(String.init), "\(key)")
            }
            #expect(
                abs((Double(shown["readRate"]?.stringValue ?? "") ?? -1) - (reported["readRate"]?.doubleValue ?? -2))
                    < 0.0001)
        }
        for verdict in ["complete", "short", "over", "unexpected", "unknownOrder"] {
            #expect(
                siteShown["packs.\(verdict)"]?.stringValue == siteReport["packs"]?[verdict]?.intValue.map(String.init),
                "\(verdict)")
        }
        #expect(laneShown["itemPasses"]?.stringValue == settled["itemPasses"]?.intValue.map(String.init))
        #expect(siteShown["packs.complete"]?.stringValue == "1" && siteShown["packs.short"]?.stringValue == "1")
        guard case .object(let cameras)? = before["cameras"], case .array(let packs)? = before["packs"] else {
            Issue.record("no cameras or packs on the page: \(before)")
            return
        }
        #expect(cameras.map { $0.0 }.sorted() == ["cam-01", "cam-02", "cam-10"])
        #expect(packs.count == 3)
        #expect(before["charts"] == .array([.number(36)]), "one chart: lane L1 over three 12-hour shifts")

        // A live update: torn labels reach lane L1 from cam-01; the open page shows the no-reads
        // without being reloaded.
        let torn = try SceneRenderer(scene: Scenarios.torn())
        try torn.writeClip(to: dir + "/torn.y4m")
        let tornAgent = try H.start(
            config: try Self.agentConfig(
                dir, camera: "cam-01", place: lane, clip: dir + "/torn.y4m", natsURL: natsURL, prefix: prefix),
            log: dir + "/cam-01-torn.log")
        running.append(tornAgent)
        #expect(H.waitForExit(tornAgent))
        #expect(H.waitForExit(driver, seconds: 120))
        #expect(
            driver.terminationStatus == 0,
            "\((try? String(contentsOfFile: dir + "/browser.log", encoding: .utf8)) ?? "")")
        let result = try JSONValue.parse(try String(contentsOfFile: dir + "/browser.json", encoding: .utf8))
        #expect(result["reloaded"] == .bool(false))
        // New sightings and no-reads of the torn clip are on the open page.
        let laneAfter = figures(result["after"], "lane:dc1/L1")
        #expect((Int(laneAfter?["noReads"]?.stringValue ?? "") ?? 0) >= 1)
        #expect(
            (Int(laneAfter?["sightings"]?.stringValue ?? "") ?? 0)
                > (Int(laneShown["sightings"]?.stringValue ?? "") ?? 0))
        #expect((result["after"]?["updates"]?.intValue ?? 0) > (before["updates"]?.intValue ?? 0))

        // Drill-down: the lane's no-reads with pictures that loaded, the short pack's lines, the
        // pack camera's heartbeats.
        let expectedNoReads = torn.expectedNoReads().count
        #expect(
            try H.eventually(seconds: 120) {
                try report(["--site", "dc1", "--lane", "L1"])["noReads"]?.intValue == expectedNoReads
            })
        guard case .array(let images)? = result["drill"]?["/lanes/dc1/L1"]?["images"] else {
            Issue.record("no lane page: \(result)")
            return
        }
        #expect(!images.isEmpty && images.count <= expectedNoReads)
        #expect(images.allSatisfy { $0["loaded"] == .bool(true) && ($0["width"]?.intValue ?? 0) > 50 }, "\(images)")
        let packPage = figures(result["drill"]?["/packs/\(shortPack)"], "pack:\(shortPack)")
        #expect(packPage?["verdict"]?.stringValue == "short")
        #expect((result["drill"]?["/packs/\(shortPack)"]?["lines"]?.intValue ?? 0) >= 1)
        let cameraPage = figures(result["drill"]?["/cameras/cam-10"], "camera:cam-10")
        #expect((Int(cameraPage?["heartbeats"]?.stringValue ?? "") ?? 0) >= 1)
        // The camera page links to the camera's live page (served by default).
        guard case .array(let cameraLinks)? = result["drill"]?["/cameras/cam-10"]?["links"] else {
            Issue.record("no links on the camera page: \(result)")
            return
        }
        #expect(cameraLinks.contains(.string("/cameras/dc1/cam-10/live")), "\(cameraLinks)")

        // The screenshots are PNG pictures of a full page.
        let shot = try PNGImage.decode(Array(try Data(contentsOf: URL(fileURLWithPath: output + "/dashboard.png"))))
        #expect(shot.width == 1280 && shot.height > 600)
        print("dashboard screenshots in \(output)")

        // SIGTERM stops the server.
        serve.terminate()
        #expect(H.waitForExit(serve, seconds: 120))
        #expect(serve.terminationStatus == 0)
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
