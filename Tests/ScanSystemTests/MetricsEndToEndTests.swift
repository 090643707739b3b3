import Foundation
import ScanCore
import ScanNATS
import ScanPostgres
import ScanTestSupport
import ScanTestTiming
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// /metrics and /health of a running agent and aggregator, scraped by a real Prometheus (Debian's
/// `prometheus`), with a nats-server of the test's own that it stops and starts again.
@Suite("metrics and health scraped by Prometheus", .timed, .enabled(if: TestEnvironment.postgresEnabled))
struct MetricsEndToEndTests {
    typealias H = AgentRunHarness

    /// How many series one instant query to Prometheus's HTTP API returns (nil: an error).
    static func seriesCount(_ prometheus: String, _ expression: String) -> Int? {
        let encoded = expression.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? expression
        let answer = TestEnvironment.httpGet("\(prometheus)/api/v1/query?query=\(encoded)")
        guard answer.status == 200, let json = try? JSONValue.parse(answer.body),
            case .array(let results)? = json["data"]?["result"]
        else { return nil }
        return results.count
    }

    /// One instant query to Prometheus's HTTP API: the first series' value, nil when none.
    static func query(_ prometheus: String, _ expression: String) -> Double? {
        let encoded = expression.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? expression
        let answer = TestEnvironment.httpGet("\(prometheus)/api/v1/query?query=\(encoded)")
        guard answer.status == 200, let json = try? JSONValue.parse(answer.body),
            case .array(let results)? = json["data"]?["result"], case .array(let pair)? = results.first?["value"],
            pair.count == 2
        else { return nil }
        return pair[1].stringValue.flatMap(Double.init)
    }

    /// The status of a GET to 127.0.0.1:`port` naming `host` in its Host header (0: no answer).
    static func status(port: Int, path: String, host: String, method: String = "GET") throws -> Int {
        let script = """
            import http.client, sys
            c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
            c.putrequest(sys.argv[4], sys.argv[2], skip_host=True)
            c.putheader("Host", sys.argv[3])
            c.endheaders()
            print(c.getresponse().status)
            """
        let result = try ProcessRunner.run("/usr/bin/python3", ["-c", script, String(port), path, host, method])
        return Int(result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    @Test(
        "an agent's metrics and health on loopback answer only requests naming a loopback host: another name (DNS rebinding) gets 421"
    )
    func loopbackHostOnly() throws {
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let port = try TestEnvironment.freePort()
        let clip = try H.flowClip(frames: 600, seed: 3)
        let config = try H.config(
            in: dir, source: H.clipSource(clip), natsURL: "nats://127.0.0.1:\(try TestEnvironment.freePort())",
            prefix: TestEnvironment.uniqueName("st"), extra: #", "metrics": {"listen": "127.0.0.1:\#(port)"}"#)
        let agent = try H.start(config: config, log: dir + "/agent.log", drainSeconds: 1)
        defer {
            kill(agent.processIdentifier, SIGKILL)
            agent.waitUntilExit()
        }
        #expect(
            H.eventually(seconds: 120) {
                (try? Self.status(port: port, path: "/health/live", host: "localhost")) == 200
            })
        for host in ["localhost", "localhost:\(port)", "127.0.0.1:\(port)", "[::1]:\(port)"] {
            #expect(try Self.status(port: port, path: "/metrics", host: host) == 200, "\(host)")
        }
        // HEAD answers as GET does (it was 404 on every route).
        for path in ["/metrics", "/health/live", "/health/ready"] {
            let get = try Self.status(port: port, path: path, host: "localhost")
            let head = try Self.status(port: port, path: path, host: "localhost", method: "HEAD")
            #expect(get != 404 && head == get, "HEAD \(path): \(head), GET \(get)")
        }
        for host in ["evil.example", "evil.example:\(port)", "127.0.0.1.evil.example", "[::2]"] {
            for path in ["/metrics", "/health/live", "/health/ready"] {
                #expect(try Self.status(port: port, path: path, host: host) == 421, "\(host) \(path)")
            }
        }
    }

    @Test(
        "Prometheus scrapes the agent's frames and the aggregator's stored sightings with the values the database holds; /health/ready turns 503 while NATS is down and 200 again"
    )
    func scrapedByPrometheus() throws {
        let testStarted = Date().timeIntervalSince1970
        let prometheusBinary = try #require(
            ProcessRunner.which("prometheus"), "Debian's prometheus is installed by scripts/install-deps.sh")
        let nats = try H.PrivateNATS()
        let migrated = try MigratedDatabase(prefix: "st_metrics")
        let dir = try ReplayHarness.temporaryDirectory()
        var running: [Process] = []
        defer {
            for process in running where process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
            migrated.drop()
            try? FileManager.default.removeItem(atPath: dir)
        }
        let prefix = TestEnvironment.uniqueName("st")
        let (agentPort, aggregatorPort, prometheusPort) = (
            try TestEnvironment.freePort(), try TestEnvironment.freePort(), try TestEnvironment.freePort()
        )
        let agentURL = "http://127.0.0.1:\(agentPort)"
        let aggregatorURL = "http://127.0.0.1:\(aggregatorPort)"
        let prometheusURL = "http://127.0.0.1:\(prometheusPort)"

        running.append(
            try ProcessRunner.start(
                TestEnvironment.productsDirectory + "/scan-aggregator",
                ["run", "--prefix", prefix, "--batch", "10", "--metrics-listen", "127.0.0.1:\(aggregatorPort)"],
                environment: ProcessInfo.processInfo.environment.merging([
                    "SCANTRACK_NATS": nats.url, "SCANTRACK_PG": migrated.dsn,
                    "SCANTRACK_MIGRATIONS": TestEnvironment.repoRoot + "/migrations",
                ]) { _, new in new }, log: dir + "/aggregator.log"))
        try """
        global: {scrape_interval: 1s, evaluation_interval: 1s}
        scrape_configs:
          - job_name: scantrack
            static_configs:
              - targets: ["127.0.0.1:\(agentPort)", "127.0.0.1:\(aggregatorPort)"]
        """.write(toFile: dir + "/prometheus.yml", atomically: true, encoding: .utf8)
        running.append(
            try ProcessRunner.start(
                prometheusBinary,
                [
                    "--config.file=\(dir)/prometheus.yml", "--storage.tsdb.path=\(dir)/tsdb",
                    "--web.listen-address=127.0.0.1:\(prometheusPort)",
                ], environment: ProcessInfo.processInfo.environment, log: dir + "/prometheus.log"))
        // A 20 s clip in real time: the agent is up while NATS goes and comes back.
        let clip = try H.flowClip(frames: 600)
        let config = try H.config(
            in: dir, source: H.clipSource(clip, realtime: true), natsURL: nats.url, prefix: prefix,
            extra: #", "metrics": {"listen": "127.0.0.1:\#(agentPort)"}"#)
        let agent = try H.start(config: config, log: dir + "/agent.log")
        running.append(agent)
        func log(_ name: String) -> String {
            (try? String(contentsOfFile: dir + "/\(name).log", encoding: .utf8)) ?? ""
        }

        #expect(
            H.eventually(seconds: 120) { TestEnvironment.httpGet(prometheusURL + "/-/ready").status == 200 },
            "\(log("prometheus"))")
        #expect(
            H.eventually(seconds: 120) {
                (Self.query(prometheusURL, #"scantrack_agent_frames_received_total{camera="cam-01",site="dc1"}"#) ?? 0)
                    > 0
            }, "\(TestEnvironment.httpGet(agentURL + "/metrics").body.prefix(2000))")
        for url in [agentURL, aggregatorURL] {
            #expect(
                H.eventually(seconds: 120) { TestEnvironment.httpGet(url + "/health/ready").status == 200 }, "\(url)")
            #expect(TestEnvironment.httpGet(url + "/health/live").status == 200)
        }
        // The programs' own `health` commands (the containers' HEALTHCHECK) say the same.
        let agentBinary = TestEnvironment.productsDirectory + "/scan-agent"
        let aggregatorBinary = TestEnvironment.productsDirectory + "/scan-aggregator"
        func health() throws -> (agent: ProcessResult, aggregator: ProcessResult) {
            (
                try ProcessRunner.run(agentBinary, ["health", "--config", config]),
                try ProcessRunner.run(
                    aggregatorBinary, ["health"],
                    environment: ["SCANTRACK_METRICS_LISTEN": "0.0.0.0:\(aggregatorPort)"])
            )
        }
        let healthy = try health()
        #expect(healthy.agent.status == 0 && healthy.agent.stdoutText.contains("nats ok"), "\(healthy.agent)")
        #expect(
            healthy.aggregator.status == 0 && healthy.aggregator.stdoutText.contains("postgres ok"),
            "\(healthy.aggregator)")
        // What the agent serves (it is gone once its clip ends).
        let agentExposition = TestEnvironment.httpGet(agentURL + "/metrics").body
        // Every query of the Grafana dashboard (docker/grafana), its site and camera variables at
        // "All", returns series while the agent and the aggregator run (the dead letters' once
        // there is one: that counter has a series per reason, made by the first).
        let dashboard = try JSONValue.parse(
            Array(
                try Data(
                    contentsOf: URL(
                        fileURLWithPath: TestEnvironment.repoRoot + "/docker/grafana/scantrack-dashboard.json"))))
        guard case .array(let panels)? = dashboard["panels"] else {
            Issue.record("no panels")
            return
        }
        var queries: [String] = []
        for panel in panels {
            if case .array(let targets)? = panel["targets"] {
                queries += targets.compactMap { $0["expr"]?.stringValue }
            }
        }
        #expect(queries.count >= 15)
        func charted(_ query: String) -> Bool {
            let expression = query.replacingOccurrences(of: "$site", with: ".*").replacingOccurrences(
                of: "$camera", with: ".*")
            return H.eventually(seconds: 120) { (Self.seriesCount(prometheusURL, expression) ?? 0) > 0 }
        }
        for query in queries where !query.contains("dead_letters") { #expect(charted(query), "no series: \(query)") }
        #expect(
            try String(
                contentsOfFile: TestEnvironment.repoRoot + "/docker/grafana/scantrack-dashboard.json", encoding: .utf8
            )
            .contains(#"label_values(scantrack_agent_frames_received_total, site)"#), "a site variable")

        // The NATS link as a labelled gauge: 1 for the state now, on both programs.
        func link(_ url: String) -> String? {
            TestEnvironment.httpGet(url + "/metrics").body.split(separator: "\n").first {
                $0.hasPrefix("scantrack_") && $0.contains("_nats_link{")
                    && $0.split(separator: " ").last.flatMap { Double($0) } == 1
            }?.firstMatch(of: /state="(\w+)"/).map { String($0.output.1) }
        }
        for url in [agentURL, aggregatorURL] {
            #expect(H.eventually(seconds: 120) { link(url) == "connected" }, "\(url): \(link(url) ?? "none")")
        }
        // Which build runs: scantrack_build_info with what --version says.
        for (url, binary, program) in [
            (agentURL, agentBinary, "scan-agent"), (aggregatorURL, aggregatorBinary, "scan-aggregator"),
        ] {
            let version = try ProcessRunner.run(binary, ["--version"]).stdoutText
            let commit = try #require(version.firstMatch(of: /\(commit (\S+)\)/)).output.1
            let info = TestEnvironment.httpGet(url + "/metrics").body.split(separator: "\n").first {
                $0.hasPrefix("scantrack_build_info{")
            }
            #expect(
                info.map { $0.contains(#"program="\#(program)""#) && $0.contains(#"commit="\#(commit)""#) } == true,
                "\(info ?? "none") vs \(version)")
        }

        // NATS goes away: neither is ready (the agent spools, the aggregator waits); back: both are.
        try nats.stop()
        for url in [agentURL, aggregatorURL] {
            #expect(
                H.eventually(seconds: 120) {
                    let ready = TestEnvironment.httpGet(url + "/health/ready")
                    return ready.status == 503 && ready.body.contains("nats failing")
                }, "\(url): \(TestEnvironment.httpGet(url + "/health/ready"))")
            #expect(TestEnvironment.httpGet(url + "/health/live").status == 200)
        }
        let unhealthy = try health()
        #expect(
            unhealthy.agent.status == 1 && unhealthy.agent.stdoutText.contains("nats failing"), "\(unhealthy.agent)")
        #expect(unhealthy.aggregator.status == 1, "\(unhealthy.aggregator)")
        for url in [agentURL, aggregatorURL] {
            #expect(H.eventually(seconds: 120) { link(url) == "disconnected" }, "\(url): \(link(url) ?? "none")")
        }
        #expect(try ProcessRunner.run(agentBinary, ["health", "--config", config, "--live"]).status == 0)
        try nats.start()
        for url in [agentURL, aggregatorURL] {
            #expect(
                H.eventually(seconds: 120) { TestEnvironment.httpGet(url + "/health/ready").status == 200 }, "\(url)")
            #expect(H.eventually(seconds: 120) { link(url) == "connected" }, "\(url): \(link(url) ?? "none")")
        }

        // A malformed event on a sighting subject: one dead letter, counted by its reason.
        _ = try NATSConnection(url: nats.url).jetStream().publish(
            subject: "\(prefix).v1.sighting.dc1.cam-01", bytes: Array("{\"type\": \"sighting\", ".utf8))
        for query in queries where query.contains("dead_letters") { #expect(charted(query), "no series: \(query)") }

        // The clip ends; every sighting is stored, and Prometheus's figure is the database's.
        #expect(H.waitForExit(agent))
        #expect(agent.terminationStatus == 0, "\(log("agent"))")
        let gone = try ProcessRunner.run(agentBinary, ["health", "--config", config])
        #expect(gone.status == 1 && gone.stderr.contains("nothing answers"), "\(gone)")
        let database = migrated.connection
        func count(_ sql: String) throws -> Int { try database.query(sql).named("count").first?.int("n") ?? -1 }
        var stored = 0
        #expect(
            try H.eventually(seconds: 120) {
                let now = try count("SELECT count(*) AS n FROM sightings")
                defer { stored = now }
                return now > 0 && now == stored
                    && Self.query(prometheusURL, #"scantrack_aggregator_events_stored_total{type="sighting"}"#)
                        == Double(now)
            }, "\(log("aggregator"))")
        // The latency histograms: events counted from capture to publish in the agent, and every
        // stored message from its publish to its commit in the aggregator (sightings among them).
        #expect(
            H.eventually(seconds: 120) {
                (Self.query(
                    prometheusURL,
                    #"max_over_time(scantrack_agent_capture_to_publish_seconds_count{camera="cam-01"}[5m])"#) ?? 0)
                    > 0
                    && (Self.query(prometheusURL, "scantrack_aggregator_publish_to_stored_seconds_count") ?? 0)
                        >= Double(stored)
            }, "latency histograms")
        let reason = try #require(
            try database.query("SELECT reason FROM dead_letters").named("dead letter").first?.text("reason"))
        #expect(
            H.eventually(seconds: 120) {
                Self.query(prometheusURL, #"scantrack_aggregator_dead_letters_total{reason="\#(reason)"}"#) == 1
            }, "\(reason)")
        // The agents' stream's fill and limit (the ScanTrackStreamNearlyFull alert divides them).
        let agentStream = ContractSubjects(prefix: prefix).agentStream
        let spec = ContractSubjects(prefix: prefix).agentStreamSpec()
        #expect(
            H.eventually(seconds: 120) {
                Self.query(prometheusURL, #"scantrack_aggregator_stream_max_bytes{stream="\#(agentStream)"}"#)
                    == Double(spec.maxBytes)
                    && (Self.query(prometheusURL, #"scantrack_aggregator_stream_bytes{stream="\#(agentStream)"}"#) ?? 0)
                        > 0
            }, "the stream gauges of \(agentStream)")
        // The agent's frame counter, as scraped, is the frame count of one of its heartbeats (the
        // counter advances at each heartbeat).
        let scraped = try #require(
            Self.query(prometheusURL, #"max_over_time(scantrack_agent_frames_received_total{camera="cam-01"}[5m])"#))
        #expect(scraped > 0 && scraped <= 600)
        let heard = try database.query(
            "SELECT (body->>'framesIn')::int AS frames FROM heartbeats WHERE camera = 'cam-01' ORDER BY time"
        ).named("heartbeats").map { try $0.int("frames") }
        // At least what the last stored heartbeat said, at most the frames of the whole run (the
        // agent's last line); the last one or two heartbeats of a run may not reach the database.
        let total = try #require(
            log("agent").split(separator: "\n").last(where: { $0.contains("scan-agent stopped") })?.firstMatch(
                of: /\sframes=(\d+)/
            ).flatMap { Int($0.output.1) },
            "\(log("agent").suffix(1000))")
        #expect(
            heard.contains(Int(scraped)) || (Int(scraped) >= (heard.max() ?? 0) && Int(scraped) <= total),
            "scraped \(scraped), heartbeats \(heard), run \(total)")
        #expect(Int(scraped) <= total)
        print("prometheus: \(stored) sightings stored, agent frames \(Int(scraped)) at the last scrape")

        // Every metric the programs serve is in docs/metrics.md, and every one documented is served.
        var served = Set<String>()
        for line in (TestEnvironment.httpGet(aggregatorURL + "/metrics").body + agentExposition).split(separator: "\n")
        where line.hasPrefix("# TYPE ") {
            served.insert(String(line.split(separator: " ")[2]))
        }
        let doc = try String(contentsOfFile: TestEnvironment.repoRoot + "/docs/metrics.md", encoding: .utf8)
        let documented = Set(
            doc.split(separator: "\n").filter { $0.hasPrefix("| `scantrack_") || $0.hasPrefix("| `process_") }
                .compactMap {
                    $0.split(separator: "`").dropFirst().first.map(String.init)
                })
        // A counter with labels appears with its first count: decisions are made on a lane with
        // divert rules, which this run's camera is not on (AgentServicesTests.decisionsCounted and
        // ReconcileLoopTests.decisions count them; ScanMetricsTests holds their HELP to these words).
        let decisionsOnly: Set = ["scantrack_agent_decisions_total", "scantrack_aggregator_decisions_total"]
        #expect(
            served == documented.subtracting(decisionsOnly),
            "served only: \(served.subtracting(documented)); documented only: \(documented.subtracting(served))")
        // Each served metric has its HELP line, in docs/metrics.md's words; decode times resolve
        // below a millisecond.
        let exposition = TestEnvironment.httpGet(aggregatorURL + "/metrics").body + agentExposition
        let lines = exposition.split(separator: "\n")
        for (index, line) in lines.enumerated() where line.hasPrefix("# TYPE ") {
            let name = String(line.split(separator: " ")[2])
            let row = doc.split(separator: "\n").first { $0.hasPrefix("| `\(name)` |") }
            let words = row.flatMap { $0.split(separator: "|").dropFirst(2).first }.map {
                $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "`", with: "")
            }
            #expect(
                index > 0 && lines[index - 1] == "# HELP \(name) \(words ?? "?")",
                "\(name): \(lines[max(0, index - 1)])")
        }
        #expect(
            agentExposition.contains(#"camera="cam-01",le="0.00025"} "#),
            "\(agentExposition.prefix(3000))")
        #expect(agentExposition.contains("# TYPE scantrack_agent_spool_dropped_events_total counter"))
        // Each program's own process: it has used CPU and memory, holds descriptors, and started
        // before this scrape (and not before the test).
        for (program, text) in [
            ("aggregator", TestEnvironment.httpGet(aggregatorURL + "/metrics").body), ("agent", agentExposition),
        ] {
            func value(_ name: String) -> Double? {
                text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap {
                    Double($0.split(separator: " ")[1])
                }
            }
            #expect((value("process_cpu_seconds_total") ?? 0) > 0, "\(program)")
            #expect((value("process_resident_memory_bytes") ?? 0) > 1_000_000, "\(program)")
            #expect((value("process_open_fds") ?? 0) >= 3, "\(program)")
            #expect((value("process_max_fds") ?? 0) >= (value("process_open_fds") ?? .infinity), "\(program)")
            let started = value("process_start_time_seconds") ?? 0
            #expect(started <= Date().timeIntervalSince1970 && started >= testStarted - 5, "\(program): \(started)")
        }
    }
}
