import Foundation
import ScanTestSupport
import Testing

/// scripts/servers.sh as a shell user runs it.
@Suite("scripts/servers.sh", .enabled(if: TestEnvironment.natsEnabled))
struct ServersScriptTests {
    @Test("start-nats can be piped: `servers.sh start-nats NAME | cat` ends once the server is up (it keeps running)")
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
        #expect(AgentRunHarness.waitForExit(pipeline, seconds: 60), "the pipeline ended")
        #expect(pipeline.terminationStatus == 0)
        let said = (try? String(contentsOfFile: dir + "/start.out", encoding: .utf8)) ?? ""
        #expect(said.contains("servers: nats-server on 127.0.0.1:"), "\(said)")
        let port = try String(
            contentsOfFile: TestEnvironment.repoRoot + "/run/\(name)/nats/port", encoding: .utf8
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try ProcessRunner.run("/bin/bash", ["-c", "exec 3<>/dev/tcp/127.0.0.1/\(port)"]).status == 0)
    }
}
