import Foundation
import ScanCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import ScanPostgres
import ScanReports
import ScanTestSupport
import ScanTestTiming
import Testing

@testable import ScanAdmin

/// The dashboard's pieces in-process: the chart's hours, escaping, the listen address; and its
/// views against a real PostgreSQL seeded as the report's tests seed it.
@Suite("scanadmin serve: pages and charts", .timed)
struct DashboardTests {
    static let zurich = TimeZone(identifier: "Europe/Zurich") ?? .gmt

    static func date(_ text: String) -> Date {
        Date(timeIntervalSince1970: Double(Timestamp(rfc3339: text)?.milliseconds ?? 0) / 1000)
    }

    @Test("the chart's hours over the autumn DST night are the report's hourly keys: 02:00 once, eight buckets")
    func hoursAcrossDST() {
        let hours = TrendChart.hours(
            from: Self.date("2026-10-24T20:00:00Z"), to: Self.date("2026-10-25T05:00:00Z"), zone: Self.zurich,
            figures: ["2026-10-25 02:00": (passes: 3, decoded: 9, noReads: 1)])
        #expect(hours.count == 8)
        #expect(hours.first?.label == "2026-10-24 22:00" && hours.last?.label == "2026-10-25 05:00")
        #expect(hours.filter { $0.label == "2026-10-25 02:00" }.count == 1)
        let two = hours.first { $0.label == "2026-10-25 02:00" }
        #expect(two?.passes == 3 && two?.readRate == 0.9)
        #expect(hours.first?.readRate == nil, "an hour that saw nothing has no read rate")
    }

    @Test("the chart draws a bar an hour with passes, a point an hour with a read rate, and escapes its title")
    func chartSVG() {
        let hours = [
            TrendChart.Hour(label: "2026-11-25 08:00", passes: 4, decoded: 10, noReads: 0),
            TrendChart.Hour(label: "2026-11-25 09:00", passes: 0, decoded: 0, noReads: 0),
            TrendChart.Hour(label: "2026-11-25 10:00", passes: 2, decoded: 3, noReads: 1),
        ]
        let svg = TrendChart(hours: hours, shifts: [(0, "2026-11-25/early")]).svg(title: "Lane <L1> & \"x\"").markup
        #expect(svg.contains("data-hours=\"3\""))
        #expect(svg.components(separatedBy: "item passes</title></rect>").count - 1 == 2)
        #expect(svg.components(separatedBy: "<circle").count - 1 == 2)
        #expect(svg.contains("read rate 75.0% (3 decoded, 1 no-reads)"))
        #expect(svg.contains("Lane &lt;L1&gt; &amp; &quot;x&quot;") && !svg.contains("<L1>"))
        #expect(svg.contains("2026-11-25/early"))
    }

    @Test("HTML escaping and link segments keep any id inert")
    func escaping() {
        #expect(HTML.escape("<img src=x onerror='a'>&\"") == "&lt;img src=x onerror=&#39;a&#39;&gt;&amp;&quot;")
        #expect(HTML.segment("cam 01/../é?") == "cam%2001%2F..%2F%C3%A9%3F")
        #expect(HTML.segment("L1-a_b.c~") == "L1-a_b.c~")
    }

    @Test("--listen takes HOST:PORT, IPv6 in brackets, port 0; anything else is a usage error naming it")
    func listenAddress() throws {
        #expect(try ServeCommand.address("127.0.0.1:8080") == ("127.0.0.1", 8080))
        #expect(try ServeCommand.address("[::1]:0") == ("::1", 0))
        #expect(try ServeCommand.address("0.0.0.0:9000") == ("0.0.0.0", 9000))
        for bad in ["localhost", "host:70000", ":8080", "host:http", ""] {
            #expect(throws: (any Error).self, "\(bad)") { try ServeCommand.address(bad) }
        }
    }

    static func settings(now: String, site: String? = nil) -> DashboardSettings {
        DashboardSettings(
            shiftSpec: ShiftPlan.defaultSpec, timeZone: nil, site: site, refreshSeconds: 5, silentAfter: 15,
            trendShifts: 3, fixedNow: date(now))
    }

    @Test(
        "on the DST night: the page's figures are the report's, drill-downs find the pack, the camera and the no-read pictures, unknown ids are nil, hostile ids are escaped",
        .enabled(if: TestEnvironment.postgresEnabled))
    func pagesOnTheNight() throws {
        let seeded = try ReportCommandTests.database()
        defer { seeded.drop() }
        let db = seeded.database
        try ReportCommandTests.seedNight(db)
        try ReportCommandTests.noRead(
            db, "nr-1", camera: "cam-01", at: "2026-10-24T21:00:00.000Z", reason: "too-small")
        try db.query(
            """
            INSERT INTO cameras (camera, site, lane, station, last_status, last_seen)
            VALUES ('cam"<b>&''x', 'dc1', 'L1', '', '{"paused": true}', '2026-10-25T00:59:55Z'),
                   ('cam-old', 'dc1', 'L1', '', '{"source": {"type": "v4l2", "state": "streaming"}}', '2026-10-25T00:59:00Z'),
                   ('cam-done', 'dc1', 'L1', '', '{"source": {"type": "clip", "state": "ended"}}', '2026-10-25T00:50:00Z')
            """)
        try db.query(
            """
            INSERT INTO parcel_passes (pass_id, site, lane, first_seen, last_seen, cameras_expected, members, codes, complete,
                                       no_read, revision, closed_at)
            VALUES ('p1', 'dc1', 'L1', '2026-10-24T21:00:00Z', '2026-10-24T21:00:01Z', 2, '[]', 2, true, false, 1, now()),
                   ('p2', 'dc1', 'L1', '2026-10-24T22:00:00Z', '2026-10-24T22:00:01Z', 2, '[]', 0, false, true, 1, now())
            """)
        try db.query(
            """
            INSERT INTO decisions (event_id, parcel_id, site, lane, camera, action, reasons, late, decided_by, closed_at,
                                   deadline, body)
            VALUES ('p2.decision', 'p2', 'dc1', 'L1', 'cam-01', 'divert', '{no-read}', true, 'agent', '2026-10-24T22:00:01Z',
                    '2026-10-24T22:00:01.1Z', '{}')
            """)
        try ReportCommandTests.deadLetter(
            db, subject: "scantrack.v1.sighting.dc1.cam-02", reason: "lane-mismatch",
            detail: "lane '<i>L9</i>' is not cam-02's lane (L1)", at: "2026-10-24T23:00:00.000Z")
        let views = try DashboardViews(database: db, settings: Self.settings(now: "2026-10-25T01:00:00Z"))
        let now = try views.now().markup
        // A camera whose events are dead-lettered is warned of, with the reason; the detail is text.
        #expect(now.contains("1 message(s) of camera cam-02 dead-lettered: lane-mismatch"), "\(now)")
        #expect(now.contains("lane &#39;&lt;i&gt;L9&lt;/i&gt;&#39;") && !now.contains("<i>L9"))

        // The figures, as `scanadmin report --shift current` gives them at the same time.
        let result = try seeded.run([
            "report", "--shift", "current", "--now", "2026-10-25T01:00:00Z", "--site", "dc1", "--format", "json",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        guard case .array(let shifts)? = try JSONValue.parse(result.stdoutText)["shifts"], let night = shifts.first
        else {
            Issue.record("no shift: \(result.stdoutText)")
            return
        }
        for key in ["itemPasses", "sightings", "noReads", "rejected"] {
            let value = night[key]?.intValue ?? -1
            #expect(now.contains("data-figure=\"\(key)\" data-value=\"\(value)\""), "\(key) \(value)")
        }
        #expect(now.contains("data-figure=\"packs.unknownOrder\" data-value=\"1\""))
        for (key, value) in [
            ("parcels", night["parcels"]?["parcels"]), ("parcels.noRead", night["parcels"]?["noRead"]),
            ("decisions.divert", night["decisions"]?["divert"]), ("decisions.late", night["decisions"]?["late"]),
        ] {
            #expect(
                value?.intValue ?? 0 >= 1
                    && now.contains("data-figure=\"\(key)\" data-value=\"\(value?.intValue ?? -1)\""), "\(key)")
        }
        #expect(now.contains("shift 2026-10-24/night"))
        #expect(now.contains("data-scope=\"lane:dc1/L1\""))

        // A camera id with markup in it is shown as text; its link is percent-encoded; it is paused.
        #expect(now.contains("cam&quot;&lt;b&gt;&amp;&#39;x") && !now.contains("cam\"<b>"))
        #expect(now.contains("href=\"/cameras/cam%22%3Cb%3E%26%27x\""))
        #expect(now.contains("data-state>paused<"))
        #expect(now.contains("data-camera=\"cam-old\"") && now.contains("data-state>silent<"), "unheard for 60 s")
        #expect(now.contains("data-state>never heard<"), "cameras of the topology that never sent a heartbeat")
        // An agent whose last heartbeat said its source ended is ended, not silent, 10 minutes on.
        #expect(
            now.range(of: #"data-camera="cam-done"[^\n]*data-state>ended<"#, options: .regularExpression) != nil,
            "\(now)")

        // Drill-downs and unknown ids.
        let lane = try #require(try views.lanePage(site: "dc1", lane: "L1")?.markup)
        #expect(lane.contains("src=\"/noreads/nr-1\""))
        // Why, per camera this shift, and on each picture.
        #expect(
            lane.contains(
                "<tr data-reason=\"cam-01/too-small\"><td>cam-01</td><td>too-small</td><td class=\"num\">1</td>"))
        #expect(lane.contains(" · too-small"))
        #expect(lane.contains("<svg") && lane.contains("data-hours=\"24\""))
        #expect(try views.lanePage(site: "nowhere", lane: "L1") == nil)
        let pack = try #require(try views.pack(sessionId: "s2")?.markup)
        #expect(pack.contains("data-figure=\"verdict\">short<"))
        #expect(try views.pack(sessionId: "s'; DROP TABLE pack_records; --") == nil)
        let camera = try #require(try views.camera("cam-01")?.markup)
        #expect(camera.contains("data-figure=\"heartbeats\" data-value=\"3\""))
        #expect(try views.camera("cam-99") == nil)
        // Links to the live page and the coding desk only when the server serves them.
        #expect(!camera.contains("/live\"") && !lane.contains("href=\"/coding/"))
        var served = views.settings
        (served.liveView, served.codingDesk) = (true, true)
        let linked = try DashboardViews(database: db, settings: served)
        let cameraSite = try #require(
            try CameraStore(connection: db).cameras(site: nil).first { $0.camera == "cam-01" }?.site)
        #expect(
            try linked.camera("cam-01")?.markup.contains("href=\"/cameras/\(cameraSite)/cam-01/live\"") == true)
        #expect(try linked.lanePage(site: "dc1", lane: "L1")?.markup.contains("href=\"/coding/dc1/L1\"") == true)
        #expect(try db.query("SELECT count(*) AS n FROM pack_records").named("packs").first?.int("n") == 4)
    }

    @Test(
        "the dashboard's database session cannot write, and a failed statement does not end it",
        .enabled(if: TestEnvironment.postgresEnabled))
    func readOnlySession() async throws {
        let seeded = try ReportCommandTests.database()
        defer { seeded.drop() }
        try ReportCommandTests.seedNight(seeded.database)
        let database = DashboardDatabase(
            dsn: seeded.environment["SCANTRACK_PG"] ?? "", statementTimeoutMilliseconds: 10_000)
        await #expect(throws: PGError.self) {
            try await database.read { try $0.execute("DELETE FROM sightings") }
        }
        let count = try await database.read { connection in
            try connection.query("SELECT count(*) AS n FROM sightings").named("count").first?.int("n")
        }
        #expect(count == 7)
    }

    @Test(
        "a query past the statement timeout is cancelled by PostgreSQL, and the next request is answered",
        .enabled(if: TestEnvironment.postgresEnabled))
    func statementTimeout() async throws {
        let seeded = try ReportCommandTests.database()
        defer { seeded.drop() }
        let database = DashboardDatabase(
            dsn: seeded.environment["SCANTRACK_PG"] ?? "", statementTimeoutMilliseconds: 200)
        let error = await #expect(throws: PGError.self) {
            try await database.read { try $0.execute("SELECT pg_sleep(5)") }
        }
        #expect(error?.sqlState == "57014", "query_canceled: \(String(describing: error))")
        let one = try await database.read { try $0.query("SELECT 1 AS n").named("one").first?.int("n") }
        #expect(one == 1)
    }

    static var releaseBinary: String { TestEnvironment.repoRoot + "/.build/release/scanadmin" }

    /// Starts `scanadmin serve` and waits for the address it prints.
    static func serve(_ binary: String, _ arguments: [String], environment: [String: String], dir: String) throws
        -> (Process, String)
    {
        let process = try ProcessRunner.start(
            binary, ["serve"] + arguments,
            environment: ProcessInfo.processInfo.environment.merging(environment) { _, new in new },
            log: dir + "/serve.log", stdoutFile: dir + "/serve.out")
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline && process.isRunning {
            let out = (try? String(contentsOfFile: dir + "/serve.out", encoding: .utf8)) ?? ""
            if let line = out.split(separator: "\n").first(where: { $0.hasPrefix("dashboard: ") }) {
                return (process, String(line.dropFirst("dashboard: ".count)))
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return (process, "")
    }

    /// One GET, its body as text (a status other than 200 is an error).
    static func get(_ url: URL) throws -> String {
        final class Box: @unchecked Sendable {
            var result: Result<String, any Error> = .failure(URLError(.timedOut))
        }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: url) { data, response, error in
            if let error {
                box.result = .failure(error)
            } else if (response as? HTTPURLResponse)?.statusCode != 200 {
                box.result = .failure(URLError(.badServerResponse))
            } else {
                box.result = .success(String(decoding: data ?? Data(), as: UTF8.self))
            }
            done.signal()
        }.resume()
        _ = done.wait(timeout: .now() + 30)
        return try box.result.get()
    }

    static func waitForExit(_ process: Process, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        return !process.isRunning
    }

    @Test(
        "release build: serve answers, SIGTERM and SIGINT each stop it with exit 0; a port in use and an unreachable database exit 1 naming them",
        .enabled(if: TestEnvironment.postgresEnabled))
    func releaseServeLifecycle() throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.releaseBinary),
            "\(Self.releaseBinary): run `make test`, which builds it")
        let seeded = try ReportCommandTests.database()
        defer { seeded.drop() }
        try ReportCommandTests.seedNight(seeded.database)
        let dir = NSTemporaryDirectory() + TestEnvironment.uniqueName("serve")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for signal in [SIGTERM, SIGINT] {
            let (process, url) = try Self.serve(
                Self.releaseBinary, ["--listen", "127.0.0.1:0", "--now", "2026-10-25T01:00:00Z"],
                environment: seeded.environment, dir: dir)
            defer { if process.isRunning { process.terminate() } }
            try #require(
                url.hasPrefix("http://127.0.0.1:"),
                "\((try? String(contentsOfFile: dir + "/serve.log", encoding: .utf8)) ?? "")")
            let page = try Self.get(try #require(URL(string: url + "fragments/now")))
            #expect(page.contains("shift 2026-10-24/night") && page.contains("data-scope=\"lane:dc1/L1\""))

            // The port is taken now: a second server says so and exits 1.
            let port = url.split(separator: ":").last.map { $0.filter(\.isNumber) } ?? ""
            // `scanadmin health` asks it, without the dashboard's password: ready, it reads its database.
            let health = try ProcessRunner.run(Self.releaseBinary, ["health", "--listen", "127.0.0.1:\(port)"])
            #expect(health.status == 0 && health.stdoutText == "postgres ok\n", "\(health)")
            // Its /metrics (no password either): the build and this process's own figures.
            let metrics = TestEnvironment.httpGet("http://127.0.0.1:\(port)/metrics")
            #expect(metrics.status == 200, "\(metrics)")
            #expect(metrics.body.contains(#"scantrack_build_info{program="scanadmin""#), "\(metrics.body.prefix(800))")
            let resident = metrics.body.split(separator: "\n").first { $0.hasPrefix("process_resident_memory_bytes ") }
            #expect((resident.flatMap { Double($0.split(separator: " ")[1]) } ?? 0) > 1_000_000, "\(metrics.body)")
            let second = try ProcessRunner.run(
                Self.releaseBinary, ["serve", "--listen", "127.0.0.1:\(port)"], environment: seeded.environment)
            #expect(second.status == 1)
            #expect(second.stderr.contains("cannot serve on 127.0.0.1:\(port)"), "\(second.stderr)")

            kill(process.processIdentifier, signal)
            #expect(Self.waitForExit(process, seconds: 120), "signal \(signal)")
            #expect(process.terminationStatus == 0)
            let after = try ProcessRunner.run(
                Self.releaseBinary, ["health", "--listen", "127.0.0.1:\(port)", "--live"])
            #expect(after.status == 1 && after.stderr.contains("nothing answers"), "\(after)")
        }
        let unreachable = try ProcessRunner.run(
            Self.releaseBinary,
            ["serve", "--listen", "127.0.0.1:0", "--pg", "host=127.0.0.1 port=1 connect_timeout=2"],
            environment: ["SCANTRACK_CONFIG": ""])
        #expect(unreachable.status == 1)
        #expect(unreachable.stderr.contains("scanadmin serve:"), "\(unreachable.stderr)")
    }
}
