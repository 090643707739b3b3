import Foundation
import ScanCore
import ScanTestSupport
import ScanTestTiming
import Testing
import ScanAgentConfig
import ScanReconciliation

/// docker/: the compose file validates (Debian's docker-compose checks it without an engine),
/// its build targets exist in the Dockerfile, and the files it mounts are valid ScanTrack files.
@Suite("deployment files", .timed)
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

    @Test(
        "compose: each ScanTrack service has a healthcheck running its program's health command (which exists), the schema is migrated before the aggregator and the dashboard start, migrate waits for a healthy PostgreSQL"
    )
    func composeHealthAndOrder() throws {
        let python = try AsyncAPIDocumentTests.python()
        let script = """
            import json, sys, yaml
            compose = yaml.safe_load(open(sys.argv[1]))
            services = compose["services"]
            print(json.dumps({name: {"health": (s.get("healthcheck") or {}).get("test"), "depends": s.get("depends_on")}
                              for name, s in services.items()}))
            """
        let run = try ProcessRunner.run(python, ["-c", script, Self.docker + "/compose.yaml"])
        try #require(run.status == 0, "\(run.stderr)")
        let services = try JSONValue.parse(run.stdout)
        let programs = ["aggregator": "scan-aggregator", "dashboard": "scanadmin", "agent-cam-01": "scan-agent"]
        for (service, program) in programs {
            guard case .array(let test)? = services[service]?["health"] else {
                Issue.record("\(service) has no healthcheck")
                continue
            }
            let words = test.compactMap(\.stringValue)
            #expect(words.prefix(3) == ["CMD", program, "health"], "\(service): \(words)")
            // The command the image runs exists in the program, with the options given.
            let help = try ProcessRunner.run(TestEnvironment.productsDirectory + "/" + program, ["health", "--help"])
            #expect(help.status == 0, "\(program) health --help: \(help.stderr)")
            for option in words.dropFirst(3) where option.hasPrefix("--") {
                #expect(help.stdoutText.contains(option), "\(program) health has no \(option)")
            }
        }
        for service in ["aggregator", "dashboard"] {
            #expect(
                services[service]?["depends"]?["migrate"]?["condition"] == .string("service_completed_successfully"),
                "\(service)")
        }
        #expect(services["migrate"]?["depends"]?["postgres"]?["condition"] == .string("service_healthy"))
        #expect(services["aggregator"]?["depends"]?["postgres"]?["condition"] == .string("service_healthy"))
    }

    @Test(
        "compose provisions Grafana: Prometheus of the compose file as its data source, the dashboard mounted where the provider reads, the admin password a secret compose-secrets.sh makes, on loopback"
    )
    func composeGrafana() throws {
        let python = try AsyncAPIDocumentTests.python()
        let script = """
            import json, sys, yaml
            docker = sys.argv[1]
            compose = yaml.safe_load(open(docker + "/compose.yaml"))
            grafana = compose["services"]["grafana"]
            sources = yaml.safe_load(open(docker + "/grafana/provisioning/datasources/prometheus.yml"))["datasources"]
            providers = yaml.safe_load(open(docker + "/grafana/provisioning/dashboards/scantrack.yml"))["providers"]
            print(json.dumps({"volumes": grafana["volumes"], "ports": grafana["ports"], "environment": grafana["environment"],
                              "secrets": grafana["secrets"], "secretFiles": compose["secrets"],
                              "sources": sources, "paths": [p["options"]["path"] for p in providers],
                              "prometheus": "prometheus" in compose["services"]}))
            """
        let run = try ProcessRunner.run(python, ["-c", script, Self.docker])
        try #require(run.status == 0, "\(run.stderr)")
        let facts = try JSONValue.parse(run.stdout)
        #expect(facts["prometheus"] == .bool(true))
        if case .array(let sources)? = facts["sources"] {
            #expect(sources.first?["url"] == .string("http://prometheus:9090"))
            #expect(sources.first?["type"] == .string("prometheus"))
        } else {
            Issue.record("no data source: \(run.stdoutText)")
        }
        guard case .array(let volumes)? = facts["volumes"], case .array(let paths)? = facts["paths"],
            let path = paths.first?.stringValue
        else {
            Issue.record("\(run.stdoutText)")
            return
        }
        // The dashboard file is mounted inside the folder the provider loads.
        #expect(
            volumes.contains { $0.stringValue?.hasPrefix("./grafana/scantrack-dashboard.json:\(path)/") ?? false },
            "\(volumes)")
        #expect(facts["ports"] == .array([.string("127.0.0.1:3000:3000")]))
        #expect(
            facts["environment"]?["GF_SECURITY_ADMIN_PASSWORD__FILE"] == .string("/run/secrets/grafana_admin_password"))
        #expect(facts["secretFiles"]?["grafana_admin_password"]?["file"] == .string("./secrets/grafana_admin_password"))
        let secrets = try String(
            contentsOfFile: TestEnvironment.repoRoot + "/scripts/compose-secrets.sh", encoding: .utf8)
        #expect(secrets.contains("grafana_admin_password"), "compose-secrets.sh makes the password")
    }

    /// The compose file as it was before it was made secure by default: every rule is broken once.
    static let insecureCompose = """
        version: "3.8"
        services:
          nats:
            image: nats:2.10
            command: ["-js", "-sd", "/data", "-m", "8222"]
            ports: ["4222:4222", "8222:8222"]
          postgres:
            image: postgres:15
            environment: {POSTGRES_USER: scantrack, POSTGRES_HOST_AUTH_METHOD: trust, POSTGRES_PASSWORD: secret}
            ports: ["0.0.0.0:5432:5432"]
          aggregator:
            image: scantrack/aggregator
            environment:
              SCANTRACK_NATS: nats://aggregator:pass@nats:4222
              SCANTRACK_PG: host=postgres user=scantrack dbname=scantrack
          agent-cam-01:
            image: scantrack/agent
            environment: {SCANTRACK_NATS: nats://nats:4222}

        """

    @Test(
        "the compose file is secure by default (scripts/compose_policy.py passes), and the check names every rule an insecure file breaks"
    )
    func securePolicy() throws {
        let python = TestEnvironment.repoRoot + "/.cache/venv/bin/python"
        let policy = TestEnvironment.repoRoot + "/scripts/compose_policy.py"
        let shipped = try ProcessRunner.run(python, [policy, Self.docker + "/compose.yaml"])
        #expect(shipped.status == 0, "\(shipped.stdoutText)\(shipped.stderr)")
        #expect(shipped.stdoutText.contains("compose policy: ok"))

        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.insecureCompose.write(toFile: dir + "/compose.yaml", atomically: true, encoding: .utf8)
        let insecure = try ProcessRunner.run(python, [policy, dir + "/compose.yaml"])
        #expect(insecure.status == 1)
        for expected in [
            "'version' key", "nats: port 4222 is published on every interface", "nats: port 8222 is published",
            "postgres: port 5432 is published", "nats: nats-server runs without a config file",
            "postgres: POSTGRES_HOST_AUTH_METHOD is trust", "postgres: PostgreSQL runs without ssl=on",
            "postgres: POSTGRES_PASSWORD holds a secret in the environment",
            "aggregator: logs into PostgreSQL as the superuser scantrack",
            "aggregator: PostgreSQL without sslmode=verify-full", "aggregator: SCANTRACK_NATS carries credentials",
            "aggregator: NATS without TLS", "agent-cam-01: no NATS password file",
        ] {
            #expect(insecure.stdoutText.contains(expected), "\(expected) in:\n\(insecure.stdoutText)")
        }

        let compose = try String(contentsOfFile: Self.docker + "/compose.yaml", encoding: .utf8)
        // The only assignments of a password are nats-server's, each read from its secret file
        // and quoted for nats-server's parser.
        for line in compose.split(separator: "\n") where line.lowercased().contains("password=") {
            #expect(line.contains("_PASSWORD=\"\\\"$$(cat /run/secrets/nats_"), "\(line)")
            #expect(line.hasSuffix(")\\\"\""), "\(line)")
        }
        let ignored = try String(contentsOfFile: Self.docker + "/secrets/.gitignore", encoding: .utf8)
        #expect(ignored.hasPrefix("# Made by scripts/compose-secrets.sh") && ignored.contains("\n*\n"))
        let dockerfile = try String(contentsOfFile: Self.docker + "/Dockerfile", encoding: .utf8)
        #expect(dockerfile.components(separatedBy: "USER scantrack").count - 1 >= 2, "runtime stages run as scantrack")
    }

    @Test(
        "compose-secrets.sh: the folder 0700; as root each password 0400 and owned by the container user that reads it, keys 0600; a second run keeps the passwords and tightens files an older version left open"
    )
    func secretsPermissions() throws {
        let parent = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let dir = parent + "/secrets"
        let script = TestEnvironment.repoRoot + "/scripts/compose-secrets.sh"
        let made = try ProcessRunner.run("/bin/bash", [script, dir])
        try #require(made.status == 0, "\(made.stderr)")
        func mode(_ name: String) throws -> (mode: Int, owner: Int) {
            let attributes = try FileManager.default.attributesOfItem(atPath: dir + "/" + name)
            return (
                ((attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1) & 0o777,
                (attributes[.ownerAccountID] as? NSNumber)?.intValue ?? -1
            )
        }
        #expect(try mode("").mode == 0o700, "the folder")
        let passwords = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix("_password") }
        #expect(passwords.count == 12)
        let root = getuid() == 0
        for name in passwords {
            let (bits, owner) = try mode(name)
            #expect(bits == (root ? 0o400 : 0o444), "\(name): \(String(bits, radix: 8))")
            if root { #expect(owner == (name == "grafana_admin_password" ? 472 : 10001), "\(name): uid \(owner)") }
        }
        for key in ["ca-key.pem", "nats-key.pem", "postgres-key.pem"] { #expect(try mode(key).mode == 0o600, "\(key)") }
        #expect(try mode("ca.pem").mode == 0o444)
        let dockerfile = try String(contentsOfFile: Self.docker + "/Dockerfile", encoding: .utf8)
        #expect(
            dockerfile.contains("useradd --system --uid 10001"), "the images' user is the uid the files are given to")

        // Files as an older version left them: world-readable in a 0755 folder. A second run
        // keeps every password and closes them up.
        let before = try String(contentsOfFile: dir + "/nats_wms_password", encoding: .utf8)
        chmod(dir, 0o755)
        for name in passwords { chmod(dir + "/" + name, 0o644) }
        chmod(dir + "/nats-key.pem", 0o644)
        let again = try ProcessRunner.run("/bin/bash", [script, dir])
        try #require(again.status == 0, "\(again.stderr)")
        #expect(try String(contentsOfFile: dir + "/nats_wms_password", encoding: .utf8) == before)
        #expect(try mode("").mode == 0o700)
        #expect(try passwords.allSatisfy { try mode($0).mode == (root ? 0o400 : 0o444) })
        #expect(try mode("nats-key.pem").mode == 0o600)
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

    @Test(
        "the images carry OCI labels and a HEALTHCHECK of their program; the build context leaves out the clone's builds, caches and .git"
    )
    func imageConventions() throws {
        let dockerfile = try String(contentsOfFile: Self.docker + "/Dockerfile", encoding: .utf8)
        let stages = dockerfile.components(separatedBy: "\nFROM ").dropFirst()
        let base = try #require(stages.first { $0.hasPrefix("${RUNTIME_IMAGE} AS runtime-base") })
        for label in ["title", "description", "version", "revision"] {
            #expect(base.contains("org.opencontainers.image.\(label)="), "\(label)")
        }
        #expect(base.contains(#"org.opencontainers.image.revision="${SCANTRACK_COMMIT}""#))
        for (target, program) in [("agent", "scan-agent"), ("aggregator", "scan-aggregator")] {
            let stage = try #require(stages.first { $0.hasPrefix("runtime-base AS \(target)\n") })
            let check = stage.split(separator: "\n").drop { !$0.hasPrefix("HEALTHCHECK") }.prefix(2).joined()
            #expect(check.contains(#"CMD ["\#(program)", "health""#), "\(target): \(check)")
        }
        let ignore = try String(contentsOfFile: Self.docker + "/Dockerfile.dockerignore", encoding: .utf8)
        let ignored = Set(ignore.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init))
        #expect(ignored.isSuperset(of: [".git", ".build", ".build-*", ".cache", "run"]), "\(ignored)")
        // What the build stage copies is not left out.
        for copied in dockerfile.matches(of: /\nCOPY (?!--from)(\S+)/).map({ String($0.output.1) }) {
            #expect(!ignored.contains(copied.split(separator: "/").first.map(String.init) ?? copied), "\(copied)")
        }
    }

    @Test("the mounted agent config and topology are valid")
    func mountedFiles() throws {
        let agent = try #require(FileManager.default.contents(atPath: Self.docker + "/agent-cam-01.json"))
        let config = try AgentConfig.parse(Array(agent), file: "agent-cam-01.json")
        #expect(config.source.kind == .v4l2 && config.source.device == "/dev/video0")
        #expect(config.nats.url.hasPrefix("tls://"), "the agent reaches NATS over TLS")
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
        // The rules' own unit tests: made-up series that must fire, and must not fire, each alert.
        let tested = try ProcessRunner.run(
            promtool, ["test", "rules", Self.docker + "/prometheus/scantrack-alerts.test.yml"])
        #expect(tested.status == 0 && tested.stdoutText.contains("SUCCESS"), "\(tested.stdoutText) \(tested.stderr)")
        // Every alert has a runbook, and the runbook's section is there; no rule picks targets by a job name.
        let rulesText = try String(contentsOfFile: rules, encoding: .utf8)
        let runbooks = try String(contentsOfFile: TestEnvironment.repoRoot + "/docs/runbooks.md", encoding: .utf8)
        let sections = Set(
            runbooks.split(separator: "\n").filter { $0.hasPrefix("## ") }.map { $0.dropFirst(3).lowercased() })
        let names = rulesText.matches(of: /- alert: (\w+)/).map { String($0.output.1) }
        #expect(names.count >= 12)
        for name in names {
            #expect(rulesText.contains("runbook_url: \"docs/runbooks.md#\(name.lowercased())\""), "\(name)")
            #expect(sections.contains(name.lowercased()), "docs/runbooks.md has no section \(name)")
        }
        #expect(!rulesText.contains("job="), "alerts select targets by the scantrack label, not a job name")
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

    @Test(
        "the systemd units verify (systemd-analyze), are Type=notify with a watchdog, do not restart a config error, and are hardened"
    )
    func systemdUnits() throws {
        let analyze = try #require(
            ProcessRunner.which("systemd-analyze"),
            "systemd-analyze (Debian's systemd) is installed by scripts/install-deps.sh")
        let units = TestEnvironment.repoRoot + "/scripts/dist/systemd"
        let names = try FileManager.default.contentsOfDirectory(atPath: units).filter { $0.hasSuffix(".service") }
            .sorted()
        #expect(names == ["scan-agent@.service", "scan-aggregator.service", "scanadmin-serve.service"])
        // Verified where the programs are (the packages put them in /usr/bin): the unit's commands must exist.
        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var instances: [String] = []
        for name in names {
            let text = try String(contentsOfFile: units + "/" + name, encoding: .utf8)
            for required in [
                "Type=notify", "WatchdogSec=", "RestartPreventExitStatus=2 64", "Restart=on-failure", "User=scantrack",
                "ProtectSystem=strict", "NoNewPrivileges=true", "ProtectHome=true", "PrivateTmp=true",
                "CapabilityBoundingSet=\n", "ConfigurationDirectory=scantrack",
            ] {
                #expect(text.contains(required), "\(name) lacks \(required)")
            }
            #expect(!text.contains("Restart=always"), "\(name)")
            try text.replacingOccurrences(of: "/usr/bin/", with: TestEnvironment.productsDirectory + "/").write(
                toFile: dir + "/" + name, atomically: true, encoding: .utf8)
            instances.append(dir + "/" + name.replacingOccurrences(of: "@.service", with: "@cam-01.service"))
        }
        #expect(
            try String(contentsOfFile: units + "/scan-agent@.service", encoding: .utf8).contains(
                "StateDirectory=scantrack/%i"))
        let verified = try ProcessRunner.run(analyze, ["verify", "--man=no"] + instances)
        #expect(verified.status == 0 && verified.stderr.isEmpty && verified.stdoutText.isEmpty, "\(verified)")
        // The check can fail: a unit with an unknown key or value is reported.
        try "[Service]\nType=notifyy\nExecStart=/bin/true\n".write(
            toFile: dir + "/broken.service", atomically: true, encoding: .utf8)
        let broken = try ProcessRunner.run(analyze, ["verify", "--man=no", dir + "/broken.service"])
        #expect(broken.stderr.contains("notifyy"), "\(broken)")
    }

    @Test(
        "the Swift packages are pinned: exact versions in Package.swift, and the build resolved exactly scripts/deps/pins.txt"
    )
    func dependencyPins() throws {
        let root = TestEnvironment.repoRoot
        var pins: [String: String] = [:]
        for line in try String(contentsOfFile: root + "/scripts/deps/pins.txt", encoding: .utf8).split(separator: "\n")
        {
            let fields = line.split(separator: "#")[0].split(separator: " ")
            if fields.count == 2 { pins[String(fields[0])] = String(fields[1]) }
        }
        #expect(pins.count >= 6)
        let manifest = try String(contentsOfFile: root + "/Package.swift", encoding: .utf8)
        let packages = manifest.matches(of: /\.package\(url: "([^"]+)", (\w+): "([0-9.]+)"/)
        #expect(packages.count >= 6)
        for package in packages {
            let name = String(package.output.1.split(separator: "/").last ?? "").lowercased()
            #expect(package.output.2 == "exact", "\(name) is pinned with exact:, not \(package.output.2):")
            #expect(
                pins[name] == String(package.output.3),
                "\(name): Package.swift \(package.output.3), pins.txt \(pins[name] ?? "none")")
        }
        // What this build resolved (swift build writes Package.resolved beside the manifest).
        let resolved = try JSONValue.parse(
            Array(try String(contentsOfFile: root + "/Package.resolved", encoding: .utf8).utf8))
        guard case .array(let entries)? = resolved["pins"] else {
            Issue.record("Package.resolved has no pins")
            return
        }
        var built: [String: String] = [:]
        for entry in entries {
            if let name = entry["identity"]?.stringValue {
                built[name] = entry["state"]?["version"]?.stringValue ?? "?"
            }
        }
        #expect(
            built == pins,
            "resolved but not pinned: \(built.filter { pins[$0.key] != $0.value }); pinned but not resolved: \(pins.filter { built[$0.key] != $0.value })"
        )
    }

    @Test(
        "every swift build the Makefile runs checks that targets import only their declared dependencies, and release builds link the Swift runtime statically with full RELRO"
    )
    func makefileBuilds() throws {
        let makefile = try String(contentsOfFile: TestEnvironment.repoRoot + "/Makefile", encoding: .utf8)
        let lines = makefile.split(separator: "\n")
        let variables = Dictionary(
            lines.compactMap { line -> (String, String)? in
                let parts = line.split(separator: ":=", maxSplits: 1)
                guard parts.count == 2, !line.hasPrefix("\t"), !line.hasPrefix("export") else { return nil }
                return (parts[0].trimmingCharacters(in: .whitespaces), parts[1].trimmingCharacters(in: .whitespaces))
            }, uniquingKeysWith: { $1 })
        #expect(variables["SWIFT_BUILD"]?.contains("--explicit-target-dependency-import-check error") == true)
        let release = variables["RELEASE_BUILD"] ?? ""
        #expect(release.hasPrefix("$(SWIFT_BUILD) -c release") && release.contains("--static-swift-stdlib"))
        #expect(release.contains("-Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now"), "\(release)")
        // Recipes build through the variables only (a bare `swift build` would skip the check, and a
        // release build with other flags would rebuild everything in the other flavour).
        let bare = lines.filter { $0.hasPrefix("\t") && $0.contains("swift build") }
        #expect(bare.isEmpty, "\(bare)")
        #expect(lines.filter { $0.hasPrefix("\t") && $0.contains("$(RELEASE_BUILD)") }.count >= 3)
    }
}
