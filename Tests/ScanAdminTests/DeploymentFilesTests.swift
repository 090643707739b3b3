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
            tool, ["-f", Self.docker + "/compose.yaml", "config", "-q"], environment: ["POSTGRES_PASSWORD": "x"])
        #expect(result.status == 0, "\(result.stderr)")
        let resolved = try ProcessRunner.run(tool, ["-f", Self.docker + "/compose.yaml", "config", "--services"])
        let services = Set(resolved.stdoutText.split(separator: "\n").map(String.init))
        #expect(services.isSuperset(of: ["nats", "postgres", "migrate", "aggregator", "dashboard", "agent-cam-01"]))
        // A broken file is refused, so the check above means something.
        let broken = NSTemporaryDirectory() + TestEnvironment.uniqueName("compose") + ".yaml"
        try "services:\n  x:\n    image: [unclosed\n".write(toFile: broken, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: broken) }
        #expect(try ProcessRunner.run(tool, ["-f", broken, "config", "-q"]).status != 0)
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
        let topology = try #require(FileManager.default.contents(atPath: Self.docker + "/topology.json"))
        #expect(try Topology.parse(Array(topology), file: "topology.json").lane(site: "dc1", camera: "cam-01") != nil)
    }
}
