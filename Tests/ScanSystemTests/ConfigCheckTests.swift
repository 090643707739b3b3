import Foundation
import ScanAgentConfig
import ScanTestSupport
import ScanTestTiming
import Testing

/// `scan-agent config check` and `config show`: a config checked as `run` reads it, or shown with
/// its defaults, without a camera or a server.
@Suite("scan-agent config check and show", .timed)
struct ConfigCheckTests {
    /// The agent configs in docs/examples and docker/ (JSON files with a camera and no sites).
    static func exampleConfigs() throws -> [String] {
        var found: [String] = []
        for folder in ["/docs/examples", "/docker"] {
            let path = TestEnvironment.repoRoot + folder
            for name in try FileManager.default.contentsOfDirectory(atPath: path).sorted() where name.hasSuffix(".json")
            {
                let text = try String(contentsOfFile: path + "/" + name, encoding: .utf8)
                if text.contains("\"camera\"") && !text.contains("\"sites\"") { found.append(path + "/" + name) }
            }
        }
        return found
    }

    @Test("config show prints every setting with its default, and what it prints reads back to the same config")
    func showRoundTrips() throws {
        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let camera = dir + "/camera.json"
        // A GenICam camera with controls, a session policy and grouping: settings of every kind.
        try #"""
        {"camera": {"id": "cam-9", "site": "dc2", "lane": "L1"},
         "source": {"type": "genicam", "camera": "Aravis-Fake-GV01",
                    "controls": {"exposureMicroseconds": 800, "gainDecibels": 6.5, "trigger": {"line": "Line1", "edge": "falling"},
                                 "binning": {"horizontal": 2}, "features": {"ReverseX": true}}},
         "decoder": {"symbologies": ["EAN-13", "DataMatrix"], "threads": 2},
         "session": {"start": "command", "stopAfterCodes": 3, "stopAfterSeconds": 2.5},
         "grouping": {"enabled": true, "require": ["GS1-128"]},
         "decision": {"enabled": true, "beltSpeed": 1.8, "divertDistance": 3, "divertOn": ["no-read"]},
         "nats": {"url": "nats://a:4222,nats://b:4222", "tls": {"ca": "/etc/ca.pem"}},
         "heartbeatSeconds": 0.5}
        """#.write(toFile: camera, atomically: true, encoding: .utf8)
        var checked = 0
        for file in try Self.exampleConfigs() + [camera] {
            // The effective config: SCANTRACK_NATS over the file's nats.url, as run takes it.
            let shown = try ProcessRunner.run(
                ReplayHarness.agent, ["config", "show", file], environment: ["SCANTRACK_NATS": "nats://10.0.0.9:4222"])
            #expect(shown.status == 0, "\(file): \(shown.stderr)")
            var expected = try AgentConfig.parse(
                Array(try String(contentsOfFile: file, encoding: .utf8).utf8), file: file)
            expected.nats.url = "nats://10.0.0.9:4222"
            let again = try AgentConfig.parse(shown.stdout, file: "shown")
            #expect(again == expected, "\(file):\n\(shown.stdoutText)")
            // Defaults the file does not set are there, with their values.
            let text = try String(contentsOfFile: file, encoding: .utf8)
            for key in [#""minDecodes": 2"#, #""whenFull": "dropOldest""#, #""sweepFrames": 8"#, #""prefix": "#]
            where !text.contains(key.prefix { $0 != ":" }) {
                #expect(shown.stdoutText.contains(key), "\(file): \(key)")
            }
            checked += 1
        }
        #expect(checked >= 4)
        let camText = try ProcessRunner.run(ReplayHarness.agent, ["config", "show", camera]).stdoutText
        #expect(camText.contains(#""edge": "falling""#) && camText.contains(#""stopAfterSeconds": 2.5"#), "\(camText)")

        // A password in an RTSP URL is never printed; a bad file exits 2 as check does.
        let secret = dir + "/rtsp.json"
        try #"{"camera": {"id": "c"}, "source": {"type": "rtsp", "url": "rtsp://u:hunter2@cam/s"}}"#
            .write(toFile: secret, atomically: true, encoding: .utf8)
        let redacted = try ProcessRunner.run(ReplayHarness.agent, ["config", "show", secret])
        #expect(redacted.status == 0 && redacted.stdoutText.contains("rtsp://u:***@cam/s"), "\(redacted.stderr)")
        #expect(!redacted.stdoutText.contains("hunter2"))
        let bad = dir + "/bad.json"
        try #"{"camera": {"id": "c"}, "decoder": {"density": 99}}"#.write(
            toFile: bad, atomically: true, encoding: .utf8)
        let refused = try ProcessRunner.run(ReplayHarness.agent, ["config", "show", bad])
        #expect(refused.status == 2 && refused.stdout.isEmpty && refused.stderr.contains("decoder.density"))
    }

    @Test("every agent config in docs/examples and docker/ passes, saying what it sets up")
    func examples() throws {
        let files = try Self.exampleConfigs()
        for file in files {
            let result = try ProcessRunner.run(ReplayHarness.agent, ["config", "check", file])
            #expect(result.status == 0, "\(file): \(result.stderr)")
            #expect(result.stdoutText.contains(": ok\ncamera "), "\(file): \(result.stdoutText)")
        }
        #expect(files.count >= 3)
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
