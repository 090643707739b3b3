import Foundation
import ScanTestSupport
import ScanTestTiming
import Testing

/// scripts/servers.sh and scripts/install-deps.sh as a shell user runs them.
@Suite("set-up scripts", .timed)
struct ServersScriptTests {
    static let installDeps = TestEnvironment.repoRoot + "/scripts/install-deps.sh"

    @Test(
        "install-deps: each make target's packages (build needs no server, browser or Prometheus); off Debian it names them and exits 1"
    )
    func installDepsPerTarget() throws {
        func list(_ target: String) throws -> Set<String> {
            let run = try ProcessRunner.run("/bin/bash", [Self.installDeps, "--list", target])
            #expect(run.status == 0, "\(target): \(run.stderr)")
            return Set(run.stdoutText.split(separator: "\n").map(String.init))
        }
        let build = try list("build")
        let demo = try list("demo")
        let test = try list("test")
        #expect(build.isSuperset(of: ["libzbar-dev", "libpq-dev", "libnats-dev", "cmake", "pkg-config"]), "\(build)")
        #expect(build.isDisjoint(with: ["postgresql", "nats-server", "chromium", "prometheus", "docker-compose"]))
        #expect(demo.isSuperset(of: build.union(["postgresql", "nats-server"])) && !demo.contains("chromium"))
        #expect(test.isSuperset(of: demo.union(["chromium", "prometheus", "zbar-tools", "imagemagick"])))
        #expect(try ProcessRunner.run("/bin/bash", [Self.installDeps, "--list", "everything"]).status == 64)
        // A system without apt-get or dpkg: the packages are named, nothing is attempted.
        let off = try ProcessRunner.run(
            "/usr/bin/env", ["-i", "PATH=/nonexistent", "/bin/bash", Self.installDeps, "build"])
        #expect(off.status == 1, "\(off.stderr)")
        #expect(off.stderr.contains("no apt-get") && off.stderr.contains("libzbar-dev"), "\(off.stderr)")
    }

    @Test(
        "start-nats can be piped: `servers.sh start-nats NAME | cat` ends once the server is up (it keeps running)",
        .enabled(if: TestEnvironment.natsEnabled))
    func piped() throws {
        let name = TestEnvironment.uniqueName("piped")
        let dir = try ReplayHarness.temporaryDirectory()
        let script = AgentRunHarness.script
        defer {
            _ = try? ProcessRunner.runDetached(["/bin/bash", script, "stop-nats", name], log: dir + "/stop.log")
            try? FileManager.default.removeItem(atPath: TestEnvironment.repoRoot + "/run/" + name)
            try? FileManager.default.removeItem(atPath: dir)
        }
        // A server that kept the pipe as its stdout would keep `cat` waiting for ever.
        let pipeline = try ProcessRunner.start(
            "/bin/bash", ["-c", "'\(script)' start-nats \(name) | cat"],
            environment: ProcessInfo.processInfo.environment, log: dir + "/start.log", stdoutFile: dir + "/start.out")
        #expect(AgentRunHarness.waitForExit(pipeline, seconds: 120), "the pipeline ended")
        #expect(pipeline.terminationStatus == 0)
        let said = (try? String(contentsOfFile: dir + "/start.out", encoding: .utf8)) ?? ""
        #expect(said.contains("servers: nats-server on 127.0.0.1:"), "\(said)")
        let port = try String(
            contentsOfFile: TestEnvironment.repoRoot + "/run/\(name)/nats/port", encoding: .utf8
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try ProcessRunner.run("/bin/bash", ["-c", "exec 3<>/dev/tcp/127.0.0.1/\(port)"]).status == 0)
    }
}
