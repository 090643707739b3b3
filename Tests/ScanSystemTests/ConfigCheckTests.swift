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

    @Test(
        "config check --topology: a lane or station the topology gives the camera otherwise exits 2 naming both (the aggregator would dead-letter every event); a matching or unplaced camera passes and says so"
    )
    func topologyPlace() throws {
        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let topology = dir + "/topology.json"
        try #"""
        {"version": 1, "sites": [{"id": "dc1", "timeZone": "Europe/Zurich",
          "lanes": [{"id": "L1", "cameras": [{"id": "cam-01"}]}],
          "stations": [{"id": "pack-01", "cameras": ["cam-10"]}]}]}
        """#.write(toFile: topology, atomically: true, encoding: .utf8)
        func check(_ camera: String) throws -> ProcessResult {
            let file = dir + "/agent.json"
            try #"{"camera": \#(camera), "source": {"type": "clip", "path": "/x.y4m"}}"#
                .write(toFile: file, atomically: true, encoding: .utf8)
            return try ProcessRunner.run(ReplayHarness.agent, ["config", "check", file, "--topology", topology])
        }
        let right = try check(#"{"id": "cam-01", "site": "dc1", "lane": "L1"}"#)
        #expect(right.status == 0, "\(right.stderr)")
        #expect(right.stdoutText.contains("topology  \(topology): ok, lane L1"), "\(right.stdoutText)")
        let wrongLane = try check(#"{"id": "cam-01", "site": "dc1", "lane": "L2"}"#)
        #expect(wrongLane.status == 2)
        #expect(
            wrongLane.stderr.contains("camera.lane")
                && wrongLane.stderr.contains("the event names lane 'L2' but camera 'cam-01' is on lane 'L1'")
                && wrongLane.stderr.contains("lane-mismatch"), "\(wrongLane.stderr)")
        let wrongStation = try check(#"{"id": "cam-01", "site": "dc1", "station": "pack-01"}"#)
        #expect(wrongStation.status == 2 && wrongStation.stderr.contains("station-mismatch"), "\(wrongStation.stderr)")
        let station = try check(#"{"id": "cam-10", "site": "dc1", "station": "pack-01"}"#)
        #expect(station.status == 0 && station.stdoutText.contains("ok, station pack-01"), "\(station.stdoutText)")
        let unplaced = try check(#"{"id": "cam-77", "site": "dc1"}"#)
        #expect(unplaced.status == 0 && unplaced.stdoutText.contains("is on no lane or station"))
        let otherSite = try check(#"{"id": "cam-01", "site": "dc9", "lane": "L2"}"#)
        #expect(otherSite.status == 0 && otherSite.stdoutText.contains("no site 'dc9'"))
        let broken = dir + "/broken.json"
        try #"{"version": 1, "sites": [{"id": "dc 1", "lanes": 3}]}"#.write(
            toFile: broken, atomically: true, encoding: .utf8)
        let file = dir + "/agent.json"
        let bad = try ProcessRunner.run(ReplayHarness.agent, ["config", "check", file, "--topology", broken])
        #expect(bad.status == 2 && bad.stderr.contains(broken), "\(bad.stderr)")
    }

    @Test(
        "every agent config in docs/examples fits docs/examples/topology.json: none would have its events dead-lettered"
    )
    func examplesFitTheExampleTopology() throws {
        let examples = TestEnvironment.repoRoot + "/docs/examples"
        let configs = try Self.exampleConfigs().filter { $0.hasPrefix(examples + "/") }
        #expect(configs.count >= 4)
        for config in configs {
            let result = try ProcessRunner.run(
                ReplayHarness.agent, ["config", "check", config, "--topology", examples + "/topology.json"])
            #expect(result.status == 0, "\(config): \(result.stderr)")
            #expect(result.stdoutText.contains("topology.json: ok, "), "\(config): \(result.stdoutText)")
        }
    }
}
