import Foundation
import ScanCore
import ScanPostgres
import ScanTestSupport
import ScanTestTiming
import Testing

/// The dashboard against stored script: values a camera or a label sent, opened in a real headless
/// Chromium, show as text and run nothing.
@Suite("dashboard against stored script", .timed, .enabled(if: TestEnvironment.postgresEnabled))
struct DashboardSecurityTests {
    static let payloads = [
        "state": "<script>window.__scantrackCanary='state'</script>",
        "camera": "cam<img src=x onerror=\"window.__scantrackCanary='camera'\">",
        "order": "ORD<script>window.__scantrackCanary='order'</script>",
        "code": "<img src=x onerror=window.__scantrackCanary='code'>",
    ]

    static func environment(dsn: String) -> [String: String] {
        ProcessInfo.processInfo.environment.merging(["SCANTRACK_PG": dsn, "SCANTRACK_CONFIG": ""]) { _, new in new }
    }

    /// `scanadmin serve` with `arguments`, and the address it prints once it listens.
    static func serve(_ arguments: [String], dsn: String, dir: String) throws -> (Process, String) {
        let serve = try ProcessRunner.start(
            TestEnvironment.productsDirectory + "/scanadmin", ["serve"] + arguments, environment: environment(dsn: dsn),
            log: dir + "/serve.log", stdoutFile: dir + "/serve.out")
        var url = ""
        _ = Polling.until(seconds: 120) {
            if !serve.isRunning { return true }
            let out = (try? String(contentsOfFile: dir + "/serve.out", encoding: .utf8)) ?? ""
            guard let line = out.split(separator: "\n").first(where: { $0.hasPrefix("dashboard: ") }) else {
                return false
            }
            url = String(line.dropFirst("dashboard: ".count))
            return true
        }
        guard !url.isEmpty else {
            serve.terminate()
            throw TestFailure(
                "scanadmin serve did not start: \((try? String(contentsOfFile: dir + "/serve.log", encoding: .utf8)) ?? "")"
            )
        }
        return (serve, url)
    }

    @Test("scanadmin serve --log-format json: its log lines on stderr are JSON objects with a millisecond time")
    func jsonLogs() throws {
        let migrated = try MigratedDatabase(prefix: "st_servelog")
        defer { migrated.drop() }
        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (serve, _) = try Self.serve(
            ["--listen", "127.0.0.1:0", "--log-format", "json"], dsn: migrated.dsn, dir: dir)
        defer { serve.terminate() }
        var lines: [Substring] = []
        _ = Polling.until(seconds: 120) {
            lines = ((try? String(contentsOfFile: dir + "/serve.log", encoding: .utf8)) ?? "").split(separator: "\n")
            return !lines.isEmpty
        }
        #expect(!lines.isEmpty, "the server's start is logged")
        for line in lines {
            let object = try JSONValue.parse(Array(line.utf8))
            #expect(object["time"]?.stringValue.flatMap(Timestamp.init(rfc3339:)) != nil, "\(line)")
            #expect(object["logger"] == .string("scanadmin.serve") && object["message"]?.stringValue != nil, "\(line)")
        }
    }

    @Test("HEAD on every route answers as GET does, with the same headers and no body (it was 404 everywhere)")
    func head() throws {
        let migrated = try MigratedDatabase(prefix: "st_head")
        defer { migrated.drop() }
        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (serve, url) = try Self.serve(["--listen", "127.0.0.1:0"], dsn: migrated.dsn, dir: dir)
        defer {
            serve.terminate()
            serve.waitUntilExit()
        }
        let port = url.split(separator: ":").last.map { String($0.prefix { $0.isNumber }) } ?? ""
        let paths = [
            "/", "/health/live", "/health/ready", "/assets/dashboard.css", "/assets/dashboard.js", "/fragments/now",
            "/fragments/trends", "/cameras/cam-1", "/packs/none", "/lanes/dc1/in",
        ]
        for path in paths {
            func answer(_ method: String) throws -> String {
                let result = try ProcessRunner.run(
                    TestEnvironment.repoRoot + "/.cache/venv/bin/python",
                    [
                        "-c",
                        "import http.client as h; c = h.HTTPConnection('127.0.0.1', \(port)); c.request('\(method)', '\(path)'); r = c.getresponse(); print(r.status, r.getheader('Content-Type'), len(r.read()))",
                    ])
                return result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            let get = try answer("GET").split(separator: " ")
            let head = try answer("HEAD").split(separator: " ")
            #expect(get.count >= 3 && head.count >= 3, "\(path): GET \(get), HEAD \(head)")
            #expect(head.first == get.first, "\(path): GET \(get), HEAD \(head)")
            #expect(head.dropFirst().dropLast() == get.dropFirst().dropLast(), "\(path): the same Content-Type")
            #expect(head.last == "0", "\(path): HEAD has no body")
        }
    }

    @Test(
        "a camera state, camera id, order id and decoded value carrying <script> and <img onerror> show as text and do not run; every page has the security headers"
    )
    func storedScriptDoesNotRun() throws {
        let python = TestEnvironment.repoRoot + "/.cache/venv/bin/python"
        let chromium = try #require(ProcessRunner.which("chromium"), "chromium is installed by scripts/install-deps.sh")
        let migrated = try MigratedDatabase(prefix: "st_xss")
        defer { migrated.drop() }
        let database = migrated.connection
        let camera = Self.payloads["camera"] ?? ""
        try database.query(
            """
            INSERT INTO sites (site, time_zone) VALUES ('dc1', 'UTC');
            """)
        try database.query(
            """
            INSERT INTO cameras (camera, site, lane, station, last_status, last_seen)
            VALUES ($1, 'dc1', NULL, NULL, jsonb_build_object('source', jsonb_build_object('state', $2::text)), now())
            """, [.text(camera), .text(Self.payloads["state"] ?? "")])
        try database.query(
            """
            INSERT INTO pack_records (session_id, site, station, camera, order_id, verdict, started_at, completed_at, items)
            VALUES ('s-xss', 'dc1', 'pack-01', 'cam-10', $1, 'short', now(), now(), 1)
            """, [.text(Self.payloads["order"] ?? "")])
        try database.query(
            """
            INSERT INTO pack_lines (session_id, position, line, code, symbology, expected, counted, verdict)
            VALUES ('s-xss', 0, 1, $1, 'QR-Code', 2, 1, 'short')
            """, [.text(Self.payloads["code"] ?? "")])

        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (serve, url) = try Self.serve(
            ["--listen", "127.0.0.1:0", "--refresh-seconds", "0.5"], dsn: migrated.dsn, dir: dir)
        defer {
            serve.terminate()
            serve.waitUntilExit()
        }
        let cameraPath = "/cameras/" + (camera.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        let result = try ProcessRunner.run(
            python,
            [
                TestEnvironment.repoRoot + "/scripts/dashboard_browser.py", "--canary", "--url", url, "--out", dir,
                "--chromium", chromium, "--drill", "/packs/s-xss", "--drill", cameraPath,
            ])
        try #require(result.status == 0, "\(result.stderr)")
        let pages = try JSONValue.parse(result.stdoutText)
        for path in ["/", "/packs/s-xss", cameraPath] {
            let page = try #require(pages[path], "\(path) in \(result.stdoutText)")
            #expect(page["status"]?.intValue == 200, "\(path): \(page["text"] ?? .null)")
            #expect(page["canary"] == .null, "\(path): something ran: \(page["canary"] ?? .null)")
            #expect(page["scripts"]?.intValue == 1, "\(path): only the dashboard's own script")
            #expect(
                page["headers"]?["content-security-policy"]?.stringValue?.contains("script-src 'self'") == true,
                "\(path)")
            #expect(page["headers"]?["x-content-type-options"] == .string("nosniff"))
            #expect(page["headers"]?["referrer-policy"] == .string("no-referrer"))
            #expect(page["headers"]?["x-frame-options"] == .string("DENY"))
        }
        let home = pages["/"]?["text"]?.stringValue ?? ""
        #expect(home.contains(camera), "the camera id shows as text: \(home)")
        #expect(home.contains("unknown") && !home.contains("__scantrackCanary='state'"), "a state off the list")
        let pack = pages["/packs/s-xss"]?["text"]?.stringValue ?? ""
        #expect(pack.contains(Self.payloads["order"] ?? "-") && pack.contains(Self.payloads["code"] ?? "-"), "\(pack)")
        #expect(pages[cameraPath]?["text"]?.stringValue?.contains("unknown") == true)

        // Another host name is refused (DNS rebinding), and beyond loopback a password is required.
        let port = url.split(separator: ":").last.map { String($0.prefix { $0.isNumber }) } ?? ""
        let misdirected = try ProcessRunner.run(
            python,
            [
                "-c",
                "import http.client as h; c = h.HTTPConnection('127.0.0.1', \(port)); c.request('GET', '/', headers={'Host': 'evil.example:\(port)'}); print(c.getresponse().status)",
            ])
        #expect(misdirected.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) == "421")
        let beyond = try ProcessRunner.run(
            TestEnvironment.productsDirectory + "/scanadmin", ["serve", "--listen", "0.0.0.0:0"],
            environment: Self.environment(dsn: migrated.dsn))
        #expect(beyond.status == 64 && beyond.stderr.contains("--auth-token-file"), "\(beyond.stderr)")
    }

    @Test(
        "with a password file: no credentials or a wrong password is 401 with a Basic challenge; the password lets in")
    func password() throws {
        let migrated = try MigratedDatabase(prefix: "st_dashpw")
        defer { migrated.drop() }
        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "correct-horse-battery\n".write(toFile: dir + "/token", atomically: true, encoding: .utf8)
        let (serve, url) = try Self.serve(
            ["--listen", "0.0.0.0:0", "--auth-token-file", dir + "/token", "--allow-host", "scan.example"],
            dsn: migrated.dsn, dir: dir)
        defer {
            serve.terminate()
            serve.waitUntilExit()
        }
        let port = url.split(separator: ":").last.map { String($0.prefix { $0.isNumber }) } ?? ""
        func status(host: String, authorization: String?) throws -> String {
            let header = authorization.map { ", 'Authorization': '\($0)'" } ?? ""
            let result = try ProcessRunner.run(
                TestEnvironment.repoRoot + "/.cache/venv/bin/python",
                [
                    "-c",
                    "import http.client as h; c = h.HTTPConnection('127.0.0.1', \(port)); c.request('GET', '/assets/dashboard.css', headers={'Host': '\(host)'\(header)}); r = c.getresponse(); print(r.status, r.getheader('WWW-Authenticate') or '')",
                ])
            return result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let basic = { (password: String) in "Basic " + Data("anyone:\(password)".utf8).base64EncodedString() }
        #expect(try status(host: "scan.example", authorization: nil).hasPrefix("401 Basic realm="))
        #expect(try status(host: "scan.example", authorization: basic("wrong-password")).hasPrefix("401"))
        #expect(try status(host: "scan.example", authorization: basic("correct-horse-battery")) == "200")
        #expect(try status(host: "scan.example", authorization: "Bearer correct-horse-battery") == "200")
        #expect(try status(host: "other.example", authorization: basic("correct-horse-battery")).hasPrefix("421"))
        // Health alone needs no password (a container's HEALTHCHECK has none), and says nothing else.
        let health = try ProcessRunner.run(
            TestEnvironment.productsDirectory + "/scanadmin", ["health", "--listen", "0.0.0.0:\(port)"])
        #expect(health.status == 0 && health.stdoutText == "postgres ok\n", "\(health)")
    }
}
