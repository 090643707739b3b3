import Foundation
import ScanCore
import ScanNATS
import ScanTestSupport
import ScanTestTiming
import Testing
import ScanAgentConfig
import ScanEvents

/// RTSP cameras against GStreamer's RTSP server (Debian's gst-rtsp-server through
/// scripts/rtsp_server.py) serving rendered clips encoded with x264, x265 or JPEG, on loopback.
@Suite("RTSP cameras", .timed)
struct RTSPTests {
    typealias H = AgentRunHarness
    typealias C = CameraHarness
    static let script = TestEnvironment.repoRoot + "/scripts/rtsp_server.py"

    /// `clip` encoded with `codec`, then `tailSeconds` of an empty belt (every track ends).
    static func encode(_ clip: String, codec: String, tailSeconds: Double, dir: String, name: String = "clip") throws
        -> String
    {
        let out = dir + "/\(name).\(codec).mkv"
        let result = try ProcessRunner.run(
            script, ["encode", clip, out, "--codec", codec, "--tail-seconds", "\(tailSeconds)"])
        guard result.status == 0 else { throw TestFailure("encoding \(clip) failed: \(result.stderr)") }
        return out
    }

    /// The RTSP server serving `file` (on `port`, 0: a free one), and its URL; `extra`: more of
    /// rtsp_server.py's options (an account, TLS).
    static func server(_ file: String, port: Int = 0, dir: String, name: String, extra: [String] = []) throws
        -> (Process, String)
    {
        let out = dir + "/rtsp-\(name).out"
        let process = try ProcessRunner.start(
            script, ["serve", file, "--port", "\(port)"] + extra, environment: ProcessInfo.processInfo.environment,
            log: dir + "/rtsp-\(name).log", stdoutFile: out)
        var url = ""
        let up = Polling.until(seconds: 120) {
            let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("rtsp server: ") }) else {
                return false
            }
            url = String(line.dropFirst("rtsp server: ".count))
            return true
        }
        guard up else {
            process.terminate()
            throw TestFailure(
                "the RTSP server did not start: \((try? String(contentsOfFile: dir + "/rtsp-\(name).log", encoding: .utf8)) ?? "")"
            )
        }
        return (process, url)
    }

    /// The values the agent saw that the replay did not (phantoms) and those it missed.
    static func difference(_ seen: [String], _ replay: [String]) -> (phantoms: [String], missed: [String]) {
        var remaining = replay
        var phantoms: [String] = []
        for value in seen {
            if let index = remaining.firstIndex(of: value) {
                remaining.remove(at: index)
            } else {
                phantoms.append(value)
            }
        }
        return (phantoms, remaining)
    }

    @Test(
        "a rendered conveyor clip streamed over RTSP reaches a running agent: its sightings are the replay's, within what lossy encoding takes (no phantom, at most one code missed)",
        .enabled(if: TestEnvironment.natsEnabled),
        arguments: [("h264", UInt64(12)), ("h265", 13), ("mjpeg", 14), ("h264", 15)])
    func clipOverRTSP(codec: String, seed: UInt64) throws {
        let natsURL = try TestEnvironment.requireNATS()
        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let frames = 120
        let clip = try H.flowClip(frames: frames, seed: seed)
        let expected = try C.replayValues(clip)
        #expect(!expected.isEmpty)
        let encoded = try Self.encode(clip, codec: codec, tailSeconds: 30, dir: dir)
        let (server, url) = try Self.server(encoded, dir: dir, name: codec)
        defer { C.stop(server) }
        let (prefix, jetStream, heartbeats) = try C.bus(natsURL)
        defer { try? jetStream.deleteStream(ContractSubjects(prefix: prefix).agentStream) }
        let config = try H.config(
            in: dir, source: #"{"type": "rtsp", "url": "\#(url)"}"#, natsURL: natsURL, prefix: prefix)
        let agent = try H.start(config: config, log: dir + "/agent.log")
        // The clip at 30 frames/s, then the empty belt until every track has ended.
        var statuses: [AgentStatus] = []
        try C.waitForFrames(heartbeats, atLeast: frames + 90, into: &statuses)
        agent.terminate()
        #expect(H.waitForExit(agent, seconds: 120))
        let log = (try? String(contentsOfFile: dir + "/agent.log", encoding: .utf8)) ?? ""
        #expect(agent.terminationStatus == 0, "\(log)")
        #expect(
            log.contains("camera streaming")
                && log.contains("codec=\(codec == "mjpeg" ? "mjpeg" : codec == "h265" ? "hevc" : "h264")"), "\(log)")
        let (values, ids) = try C.sightings(jetStream, prefix: prefix)
        #expect(Set(ids).count == ids.count, "no event twice")
        let (phantoms, missed) = Self.difference(values, expected)
        // The difference lossy encoding made, for the log of `make test`.
        print("RTSP \(codec) seed \(seed): \(values.count) sightings, replay \(expected.count), missed \(missed)")
        #expect(phantoms.isEmpty, "\(codec): sightings the replay does not have: \(phantoms)")
        #expect(missed.count <= 1, "\(codec): missed \(missed) of \(expected.count)")
        statuses += try C.heartbeats(heartbeats)
        #expect(statuses.contains { $0.sourceState == "streaming" }, "\(statuses.map(\.sourceState))")
        #expect(statuses.map(\.sourceIncompleteFrames).max() == 0, "TCP on loopback loses nothing")
        #expect((statuses.map(\.framesIn).max() ?? 0) >= frames, "every frame arrived")
    }

    @Test(
        "the RTSP camera stopped and started again mid-run: reconnecting in the heartbeat, opened again, both clips' sightings each once, and the password in its URL shown nowhere",
        .enabled(if: TestEnvironment.natsEnabled))
    func reconnect() throws {
        let natsURL = try TestEnvironment.requireNATS()
        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try H.flowClip(frames: 60, seed: 33)
        let second = try H.flowClip(frames: 60, seed: 34)
        let expected = (try C.replayValues(first) + C.replayValues(second)).sorted()
        let firstStream = try Self.encode(first, codec: "h264", tailSeconds: 30, dir: dir, name: "first")
        let secondStream = try Self.encode(second, codec: "h264", tailSeconds: 30, dir: dir, name: "second")
        var (server, url) = try Self.server(firstStream, dir: dir, name: "first")
        let port = Int(url.split(separator: ":").last?.split(separator: "/").first ?? "") ?? 0
        let secret = "s3cret-\(UInt32.random(in: 0...UInt32.max))"
        let withPassword = url.replacingOccurrences(of: "rtsp://", with: "rtsp://operator:\(secret)@")
        let (prefix, jetStream, heartbeats) = try C.bus(natsURL)
        defer { try? jetStream.deleteStream(ContractSubjects(prefix: prefix).agentStream) }
        let config = try H.config(
            in: dir, source: #"{"type": "rtsp", "url": "\#(withPassword)"}"#, natsURL: natsURL, prefix: prefix,
            extra: #", "tracking": {"maxMissedFrames": 5}"#)
        // The release build (what users run): reconnects are timing- and lifetime-sensitive.
        let agent = try H.start(config: config, log: dir + "/agent.log", binary: H.releaseAgent)
        var statuses: [AgentStatus] = []
        try C.waitForFrames(heartbeats, atLeast: 60 + 60, into: &statuses)
        let shown = statuses.map(\.framesIn).max() ?? 0
        // The cable pulled: the camera is gone until the agent's heartbeat says it is reconnecting,
        // then back (a reboot), streaming the second clip.
        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
        #expect(
            try C.waitForState(heartbeats, "reconnecting", into: &statuses), "\(statuses.last.map(\.sourceState) ?? "")"
        )
        (server, _) = try Self.server(secondStream, port: port, dir: dir, name: "second")
        defer { C.stop(server) }
        try C.waitForFrames(heartbeats, atLeast: shown + 60 + 180, into: &statuses)
        agent.terminate()
        #expect(H.waitForExit(agent, seconds: 120))
        let log = (try? String(contentsOfFile: dir + "/agent.log", encoding: .utf8)) ?? ""
        #expect(agent.terminationStatus == 0, "\(log)")
        #expect(log.contains("camera back"), "\(log)")
        #expect(log.contains("operator:***@"), "the URL is logged without its password")
        #expect(!log.contains(secret), "the password is never logged")

        statuses += try C.heartbeats(heartbeats)
        let states = statuses.map(\.sourceState)
        #expect(states.contains("reconnecting"), "the gap is in the heartbeat: \(states)")
        #expect(statuses.map(\.sourceReconnects).max() == 1, "\(states)")
        // The heartbeat says why, without the password; streaming again, no error.
        let why = statuses.compactMap(\.sourceError)
        #expect(why.contains { $0.contains("operator:***@") } && !why.contains { $0.contains(secret) }, "\(why)")
        #expect(statuses.last?.sourceState != "streaming" || statuses.last?.sourceError == nil)
        let (values, ids) = try C.sightings(jetStream, prefix: prefix)
        #expect(Set(ids).count == ids.count, "no event twice")
        let (phantoms, missed) = Self.difference(values, expected)
        #expect(phantoms.isEmpty && missed.count <= 1, "RTSP \(values) replays \(expected)")
    }

    @Test(
        "scan-agent tune --camera records what an RTSP camera sees and measures it: symbologies, speed and module size of the rendered belt, and a config reading that camera",
        arguments: [UInt64(1), 2])
    func tuneFromCamera(seed: UInt64) throws {
        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let speed = 8.0
        let module = 3
        let (clip, expected) = try ReplayHarness.clip(
            of: ReplayHarness.tuneScene(
                speed: speed, module: module, symbology: .ean13, values: ["400638133393", "590123412345"], seed: seed),
            name: "tune-rtsp")
        let encoded = try Self.encode(clip, codec: "h264", tailSeconds: 10, dir: dir)
        let (server, url) = try Self.server(encoded, dir: dir, name: "tune")
        defer { C.stop(server) }
        let recording = dir + "/recorded.y4m"
        let written = dir + "/camera.json"
        let result = try ProcessRunner.run(
            TestEnvironment.productsDirectory + "/scan-agent",
            [
                "tune", "--camera", url, "--seconds", "5", "--record", recording, "--write", written, "--format",
                "json",
            ])
        try #require(result.status == 0, "\(result.stderr)")
        let report = try JSONValue.parse(result.stdoutText)
        #expect(report["symbologies"] == .array([.string("EAN-13")]), "\(report)")
        let measuredSpeed = report["pixelsPerFrame"]?.doubleValue ?? 0
        let measuredModule = report["modulePixels"]?.doubleValue ?? 0
        #expect(abs(measuredSpeed - speed) <= speed * 0.1, "speed \(measuredSpeed) for \(speed)")
        #expect(abs(measuredModule - Double(module)) <= Double(module) * 0.15, "module \(measuredModule)")
        let frames = report["frames"]?.doubleValue ?? 0
        #expect(frames >= 5 * 30 * 0.8, "the recording holds what the camera sent in 5 s: \(frames)")
        let header = String(
            decoding: (FileManager.default.contents(atPath: recording) ?? Data()).prefix(40), as: UTF8.self)
        #expect(header.hasPrefix("YUV4MPEG2 W640 H400 "), "\(header)")
        let config = try AgentConfig.parse(Array(try Data(contentsOf: URL(fileURLWithPath: written))), file: written)
        #expect(config.source.kind == .rtsp && config.source.url?.url == url, "the config reads the camera")
        #expect(expected.count == 2)
    }

    @Test("scan-agent cameras describes an RTSP stream (codec, size, rate) and says why one cannot be opened")
    func describe() throws {
        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let clip = try H.flowClip(frames: 30, seed: 5)
        let encoded = try Self.encode(clip, codec: "h264", tailSeconds: 10, dir: dir)
        let (server, url) = try Self.server(encoded, dir: dir, name: "describe")
        defer { C.stop(server) }
        let shown = try ProcessRunner.run(
            TestEnvironment.productsDirectory + "/scan-agent", ["cameras", url, "--format", "json"])
        #expect(shown.status == 0, "\(shown.stderr)")
        let document = try JSONValue.parse(shown.stdoutText)
        #expect(document["codec"] == .string("h264") && document["width"] == .number(640), "\(shown.stdoutText)")
        #expect(document["fps"] == .number(30), "\(shown.stdoutText)")
        let missing = try ProcessRunner.run(
            TestEnvironment.productsDirectory + "/scan-agent",
            ["cameras", url.replacingOccurrences(of: "/clip", with: "/nothing-here")])
        #expect(missing.status == 1 && missing.stderr.contains("cannot open"), "\(missing.stderr)")
        let notRTSP = try ProcessRunner.run(
            TestEnvironment.productsDirectory + "/scan-agent", ["cameras", "rtspx://user:pw@host/x"])
        #expect(notRTSP.status == 1 && !notRTSP.stderr.contains("pw"), "\(notRTSP.stderr)")
    }
}
