import Foundation
import ScanCore
import ScanTestSupport
import Testing

/// docker/: the compose file validates (Debian's docker-compose checks it without an engine),
/// its build targets exist in the Dockerfile, and the files it mounts are valid ScanTrack files.
@Suite("deployment files")
struct DeploymentFilesTests {
    static let docker = TestEnvironment.repoRoot + "/docker"

    @Test("docker-compose config accepts docker/compose.yaml")
    func composeValidates() throws {
        let tool = try #require(
            ProcessRunner.which("docker-compose"), "docker-compose is missing: scripts/install-deps.sh installs it")
        let result = try ProcessRunner.run(
            tool, ["-f", Self.docker + "/compose.yaml", "config", "-q"])
        #expect(result.status == 0, "\(result.stderr)")
        let resolved = try ProcessRunner.run(tool, ["-f", Self.docker + "/compose.yaml", "config", "--services"])
        let services = Set(resolved.stdoutText.split(separator: "\n").map(String.init))
        #expect(
            services.isSuperset(of: [
                "nats", "postgres", "migrate", "aggregator", "dashboard", "agent-cam-01", "prometheus",
            ]))
        // A broken file is refused, so the check above means something.
        let broken = NSTemporaryDirectory() + TestEnvironment.uniqueName("compose") + ".yaml"
        try "services:\n  x:\n    image: [unclosed\n".write(toFile: broken, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: broken) }
        #expect(try ProcessRunner.run(tool, ["-f", broken, "config", "-q"]).status != 0)
    }

    @Test("the compose file holds no password: PostgreSQL and every program read it from a mounted secret file")
    func secretsAreFiles() throws {
        let compose = try String(contentsOfFile: Self.docker + "/compose.yaml", encoding: .utf8)
        #expect(
            !compose.contains("POSTGRES_PASSWORD:") && !compose.contains("${POSTGRES_PASSWORD"), "no default password")
        #expect(!compose.lowercased().contains("password="), "no password in a DSN")
        #expect(compose.contains("POSTGRES_PASSWORD_FILE: /run/secrets/postgres_password"))
        #expect(compose.contains("SCANTRACK_PG_PASSWORD_FILE: /run/secrets/postgres_password"))
        #expect(compose.contains("file: ./secrets/postgres_password"))
        // Each service given the DSN (the shared environment) also mounts the secret.
        var chunks: [String] = []  // one a top-level entry or service (a line indented by two spaces)
        for line in compose.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("  ") && !line.hasPrefix("   ") || chunks.isEmpty { chunks.append("") }
            chunks[chunks.count - 1] += line + "\n"
        }
        let services = chunks.filter { $0.contains("environment: *scantrack-env") }
        #expect(services.count == 3)
        for service in services { #expect(service.contains("secrets: [postgres_password]"), "\(service.prefix(40))") }
        let ignored = try String(contentsOfFile: Self.docker + "/secrets/.gitignore", encoding: .utf8)
        #expect(ignored.contains("postgres_password"), "the secret is kept out of git")
        let dockerfile = try String(contentsOfFile: Self.docker + "/Dockerfile", encoding: .utf8)
        #expect(dockerfile.components(separatedBy: "USER scantrack").count - 1 >= 2, "runtime stages run as scantrack")
    }

    @Test("every build target of the compose file is a stage of the Dockerfile; runtime stages carry no toolchain")
    func targets() throws {
        let compose = try String(contentsOfFile: Self.docker + "/compose.yaml", encoding: .utf8)
        let dockerfile = try String(contentsOfFile: Self.docker + "/Dockerfile", encoding: .utf8)
        let targets = Set(
            compose.split(separator: "\n").compactMap { line -> String? in
                let text = line.trimmingCharacters(in: .whitespaces)
                return text.hasPrefix("target:")
                    ? text.dropFirst("target:".count).trimmingCharacters(in: .whitespaces) : nil
            })
        #expect(targets == ["agent", "aggregator", "scanadmin"])
        for target in targets { #expect(dockerfile.contains(" AS \(target)\n"), "\(target)") }
        // Runtime stages start from the slim image, not the Swift one.
        let stages = dockerfile.components(separatedBy: "\nFROM ").dropFirst()
        for stage in stages where targets.contains(where: { stage.hasPrefix("runtime-base AS \($0)") }) {
            #expect(!stage.contains("-dev"), "\(stage.prefix(40))")
        }
    }

    @Test("the mounted agent config and topology are valid")
    func mountedFiles() throws {
        let agent = try #require(FileManager.default.contents(atPath: Self.docker + "/agent-cam-01.json"))
        let config = try AgentConfig.parse(Array(agent), file: "agent-cam-01.json")
        #expect(config.source.kind == .v4l2 && config.source.device == "/dev/video0")
        #expect(config.metricsListen == "0.0.0.0:9464")
        let topology = try #require(FileManager.default.contents(atPath: Self.docker + "/topology.json"))
        #expect(try Topology.parse(Array(topology), file: "topology.json").lane(site: "dc1", camera: "cam-01") != nil)
    }

    /// Metric names (histograms without their _bucket/_sum/_count) in a text.
    static func metricNames(_ text: String) -> Set<String> {
        let names = text.matches(of: /scantrack_[a-z_]+/).map { String($0.output) }
        return Set(
            names.map { name in
                for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
                    return String(name.dropLast(suffix.count))
                }
                return name
            })
    }

    /// The metric names docs/metrics.md lists in its tables.
    static func documentedMetrics() throws -> Set<String> {
        let doc = try String(contentsOfFile: TestEnvironment.repoRoot + "/docs/metrics.md", encoding: .utf8)
        return Set(
            doc.split(separator: "\n").filter { $0.hasPrefix("| `scantrack_") }.compactMap { line in
                line.split(separator: "`").dropFirst().first.map(String.init)
            })
    }

    @Test(
        "promtool accepts the Prometheus config and the alert rules; the alerts and the Grafana dashboard use documented metrics only"
    )
    func monitoringFiles() throws {
        let promtool = try #require(
            ProcessRunner.which("promtool"), "promtool (Debian's prometheus) is installed by scripts/install-deps.sh")
        let rules = Self.docker + "/prometheus/scantrack-alerts.yml"
        let checkedRules = try ProcessRunner.run(promtool, ["check", "rules", rules])
        #expect(checkedRules.status == 0, "\(checkedRules.stdoutText) \(checkedRules.stderr)")
        // The config names the rules where the container mounts them: point it at the repo's copy.
        let config = try String(contentsOfFile: Self.docker + "/prometheus/prometheus.yml", encoding: .utf8)
        #expect(config.contains("/etc/prometheus/scantrack-alerts.yml"))
        let local = NSTemporaryDirectory() + TestEnvironment.uniqueName("prometheus") + ".yml"
        try config.replacingOccurrences(of: "/etc/prometheus/scantrack-alerts.yml", with: rules).write(
            toFile: local, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: local) }
        let checkedConfig = try ProcessRunner.run(promtool, ["check", "config", local])
        #expect(checkedConfig.status == 0, "\(checkedConfig.stdoutText) \(checkedConfig.stderr)")

        let documented = try Self.documentedMetrics()
        #expect(documented.count >= 20)
        let alerts = Self.metricNames(try String(contentsOfFile: rules, encoding: .utf8))
        let dashboardText = try String(
            contentsOfFile: Self.docker + "/grafana/scantrack-dashboard.json", encoding: .utf8)
        guard case .array(let panels)? = try JSONValue.parse(dashboardText)["panels"] else {
            Issue.record("no panels in the dashboard")
            return
        }
        #expect(panels.count >= 8)
        let charted = Self.metricNames(dashboardText)
        #expect(alerts.isSubset(of: documented), "\(alerts.subtracting(documented))")
        #expect(charted.isSubset(of: documented), "\(charted.subtracting(documented))")
        #expect(!alerts.isEmpty && !charted.isEmpty)
    }
}
