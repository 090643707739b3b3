import Foundation
import ScanTestSupport
import Testing

/// `scan-agent config check`: a config checked as `run` reads it, without a camera or a server.
@Suite("scan-agent config check")
struct ConfigCheckTests {
    @Test("every agent config in docs/examples and docker/ passes, saying what it sets up")
    func examples() throws {
        var checked = 0
        for folder in ["/docs/examples", "/docker"] {
            let path = TestEnvironment.repoRoot + folder
            for name in try FileManager.default.contentsOfDirectory(atPath: path).sorted() where name.hasSuffix(".json")
            {
                let text = try String(contentsOfFile: path + "/" + name, encoding: .utf8)
                guard text.contains("\"camera\"") && !text.contains("\"sites\"") else { continue }
                let result = try ProcessRunner.run(ReplayHarness.agent, ["config", "check", path + "/" + name])
                #expect(result.status == 0, "\(name): \(result.stderr)")
                #expect(result.stdoutText.contains(": ok\ncamera "), "\(name): \(result.stdoutText)")
                checked += 1
            }
        }
        #expect(checked >= 3)
    }

    @Test("a bad config exits 2 listing every problem by path; a password in an RTSP URL is never printed")
    func badAndSecret() throws {
        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let bad = dir + "/bad.json"
        try #"{"camera": {"id": "c"}, "decision": {"enabled": true}, "decoder": {"density": 99}}"#
            .write(toFile: bad, atomically: true, encoding: .utf8)
        let refused = try ProcessRunner.run(ReplayHarness.agent, ["config", "check", bad])
        #expect(refused.status == 2)
        for path in ["decision.enabled", "decoder.density"] {
            #expect(refused.stderr.contains(path), "\(refused.stderr)")
        }
        let good = dir + "/good.json"
        try #"{"camera": {"id": "c", "lane": "L1"}, "source": {"type": "rtsp", "url": "rtsp://u:hunter2@cam/s"}}"#
            .write(toFile: good, atomically: true, encoding: .utf8)
        let accepted = try ProcessRunner.run(ReplayHarness.agent, ["config", "check", good])
        #expect(accepted.status == 0, "\(accepted.stderr)")
        #expect(accepted.stdoutText.contains("rtsp://u:***@cam/s") && !accepted.stdoutText.contains("hunter2"))
    }
}
