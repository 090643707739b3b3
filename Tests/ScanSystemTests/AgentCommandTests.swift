import Foundation
import ScanTestSupport
import ScanTestTiming
import Testing

@Suite("scan-agent command line", .timed)
struct AgentCommandTests {
    static var agent: String { TestEnvironment.productsDirectory + "/scan-agent" }

    @Test("--help names the commands")
    func help() throws {
        let result = try ProcessRunner.run(Self.agent, ["--help"])
        #expect(result.status == 0)
        #expect(result.stdoutText.contains("run"))
    }

    @Test("run with a broken config exits 2 and lists every error by JSON path")
    func badConfig() throws {
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/bad.json"
        try
            #"{"camera": {"site": "dc 1"}, "source": {"type": "usb", "fps": 0}, "spool": {"whenFull": "block"}, "colour": 1}"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        let result = try ProcessRunner.run(Self.agent, ["run", "--config", path])
        #expect(result.status == 2)
        for expected in [
            "camera.id", "camera.site", "source.type", "source.fps", "spool.whenFull", "colour", "bad.json",
        ] {
            #expect(result.stderr.contains(expected), "\(expected) in \(result.stderr)")
        }
    }

    @Test("run with a clip that is not a clip exits 2 naming the file")
    func badClip() throws {
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "garbage\n".write(toFile: dir + "/broken.y4m", atomically: true, encoding: .utf8)
        try
            #"{"camera": {"id": "c1"}, "source": {"type": "clip", "path": "\#(dir)/broken.y4m"}, "spool": {"dir": "\#(dir)/spool"}}"#
            .write(toFile: dir + "/c.json", atomically: true, encoding: .utf8)
        let result = try ProcessRunner.run(Self.agent, ["run", "--config", dir + "/c.json"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("broken.y4m"))
    }
}
