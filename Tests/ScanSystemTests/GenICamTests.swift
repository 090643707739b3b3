import Foundation
import ScanCore
import ScanGenICam
import ScanJPEG
import ScanNATS
import ScanTestSupport
import ScanTestTiming
import Testing
import ScanAgentConfig
import ScanEvents

/// GenICam cameras against Aravis's fake GigE Vision camera (real GVCP and GVSP over UDP on
/// loopback), showing rendered clips through `scan-fake-camera`.
@Suite("GenICam cameras over GigE Vision", .timed, .serialized)
struct GenICamTests {
    typealias H = AgentRunHarness

    /// A fake camera showing `clip` on `address` (`extra`: more of scan-fake-camera's options).
    /// GVCP's port is fixed, so the tests of this suite run one at a time.
    static func fakeCamera(
        _ clip: String, address: String, serial: String, fps: Double, dir: String, extra: [String] = []
    ) throws -> Process {
        let process = try ProcessRunner.start(
            TestEnvironment.productsDirectory + "/scan-fake-camera",
            [clip, "--address", address, "--serial", serial, "--fps", "\(fps)"] + extra,
            environment: ProcessInfo.processInfo.environment, log: dir + "/camera-\(serial).log",
            stdoutFile: dir + "/camera-\(serial).out")
        let up = Polling.until(seconds: 120) {
            ((try? String(contentsOfFile: dir + "/camera-\(serial).out", encoding: .utf8)) ?? "").contains(
                "fake camera:")
        }
        guard up else {
            process.terminate()
            throw TestFailure(
                "scan-fake-camera did not start: \((try? String(contentsOfFile: dir + "/camera-\(serial).log", encoding: .utf8)) ?? "")"
            )
        }
        return process
    }

    @Test(
        "controls are set and read back by GenICam name over GVCP; a value outside the camera's range is refused naming the key, the camera and the range, or clamped when asked"
    )
    func controls() throws {
        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let clip = try H.flowClip(frames: 30, seed: 3)
        let fake = try Self.fakeCamera(clip, address: "127.0.0.1", serial: "GVCTL", fps: 20, dir: dir)
        defer { CameraHarness.stop(fake) }
        let camera = try GenICamCamera(id: "127.0.0.1")
        #expect(camera.serial == "GVCTL")
        // What answered at the address is checked against source.expect after opening.
        try camera.check(ExpectedCamera(vendor: camera.vendor, model: camera.model, serial: "GVCTL"))
        let impostor = #expect(throws: GenICamError.self) {
            try camera.check(ExpectedCamera(vendor: camera.vendor, serial: "SN-REAL-7"))
        }
        #expect(
            impostor?.message.contains(#"serial "GVCTL" (source.expect.serial: "SN-REAL-7")"#) == true
                && impostor?.message.contains("vendor") == false,
            "\(String(describing: impostor))")
        var controls = CameraControls()
        controls.exposureMicroseconds = 2_000
        controls.gainDecibels = 3
        controls.frameRate = 12
        let (taken, warnings) = try camera.apply(controls)
        #expect(warnings.isEmpty)
        let values = Dictionary(uniqueKeysWithValues: taken.map { ($0.name, $0.value) })
        #expect(values["ExposureTime"] == "2000", "\(taken)")
        #expect(values["Gain"] == "3", "\(taken)")
        #expect(values["Width"] == "640" && values["Height"] == "360", "the clip's size: \(taken)")
        #expect(try camera.standard(.exposure) == 2_000)

        controls.gainDecibels = 40
        let refused = #expect(throws: GenICamError.self) { try camera.apply(controls) }
        #expect(refused?.input == "gainDecibels", "\(String(describing: refused))")
        #expect(
            refused?.message.contains("source.controls.gainDecibels: 40 is outside 127.0.0.1's Gain range 0…10")
                == true,
            "\(String(describing: refused))")
        controls.clampOutOfRange = true
        let (clamped, clampWarnings) = try camera.apply(controls)
        #expect(clampWarnings.count == 1 && clampWarnings[0].contains("set to 10"), "\(clampWarnings)")
        #expect(clamped.first { $0.name == "Gain" }?.value == "10")
        var focus = CameraControls()
        focus.focus = 10
        let noFocus = #expect(throws: GenICamError.self) { try camera.apply(focus) }
        #expect(noFocus?.message.contains("source.controls.focus: 127.0.0.1 has no FocusPos feature") == true)

        // The first command on a new line shows the same controls.
        let shown = try ProcessRunner.run(
            TestEnvironment.productsDirectory + "/scan-agent",
            ["cameras", "127.0.0.1", "--controls", "--format", "json"])
        #expect(shown.status == 0, "\(shown.stderr)")
        let document = try JSONValue.parse(shown.stdoutText)
        #expect(document["serial"] == .string("GVCTL"))
        guard case .array(let listed)? = document["controls"] else {
            Issue.record("no controls: \(shown.stdoutText)")
            return
        }
        #expect(
            listed.contains { $0["name"] == .string("ExposureTime") && $0["range"]?.stringValue?.contains("…") == true }
        )
        let missing = try ProcessRunner.run(
            TestEnvironment.productsDirectory + "/scan-agent", ["cameras", "127.0.0.99", "--controls"])
        #expect(missing.status == 1 && missing.stderr.contains("cannot open 127.0.0.99"), "\(missing.stderr)")
    }

    @Test(
        "a rendered conveyor clip shown by a GigE Vision camera reaches a running agent: its sightings are the replay's of the same clip",
        .enabled(if: TestEnvironment.natsEnabled), arguments: [UInt64(12), 22])
    func clipThroughCamera(seed: UInt64) throws {
        let natsURL = try TestEnvironment.requireNATS()
        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let frames = 150
        let clip = try H.flowClip(frames: frames, seed: seed)
        let expected = try CameraHarness.replayValues(clip)
        #expect(!expected.isEmpty)
        let fake = try Self.fakeCamera(clip, address: "127.0.0.1", serial: "GVRUN", fps: 15, dir: dir)
        defer { CameraHarness.stop(fake) }
        let (prefix, jetStream, heartbeats) = try CameraHarness.bus(natsURL)
        defer { try? jetStream.deleteStream(ContractSubjects(prefix: prefix).agentStream) }
        let config = try H.config(
            in: dir,
            source:
                // A queue of 4 s of frames: a loaded machine (CI's whole suite) that starves the agent
                // for a moment delays frames instead of dropping them, so the replay's count holds.
                #"{"type": "genicam", "camera": "127.0.0.1", "queueFrames": 60, "controls": {"exposureMicroseconds": 500, "frameRate": 15}}"#,
            natsURL: natsURL, prefix: prefix)
        let agent = try H.start(config: config, log: dir + "/agent.log")
        // Changed at run time through the command subject, answered with the values taken.
        let commands = try NATSConnection(url: natsURL)
        var changed = JSONValue.null
        #expect(
            H.eventually(seconds: 120) {
                changed =
                    (try? H.command(
                        commands, prefix: prefix, "set-controls", #"{"exposureMicroseconds": 1000, "gainDecibels": 4}"#))
                    ?? .null
                return changed["ok"] == .bool(true)
            }, "\(changed)")
        #expect(changed["controls"]?["ExposureTime"] == .string("1000") && changed["controls"]?["Gain"] == .string("4"))
        // A GenICam feature by name (a light's line source, a strobe's duration): set at once,
        // answered with the value the camera holds.
        let feature = try H.command(commands, prefix: prefix, "set-controls", #"{"features": {"GevSCPD": 100}}"#)
        #expect(feature["ok"] == .bool(true) && feature["controls"]?["GevSCPD"] == .string("100"), "\(feature)")
        let refused = try H.command(commands, prefix: prefix, "set-controls", #"{"gainDecibels": 40}"#)
        #expect(refused["ok"] == .bool(false))
        #expect(refused["error"]?.stringValue?.contains("gainDecibels: 40 is outside") == true, "\(refused)")
        let status = try H.command(commands, prefix: prefix, "status")
        #expect(status["source"]?["controls"]?["ExposureTime"] == .string("1000"), "\(status)")
        // What the camera sees, twice: each a picture of the latest frame, and the belt moved between.
        let first = try H.command(commands, prefix: prefix, "snapshot", #"{"maxWidth": 320}"#)
        Thread.sleep(forTimeInterval: 0.5)
        let second = try H.command(commands, prefix: prefix, "snapshot", #"{"maxWidth": 320}"#)
        #expect(first["ok"] == .bool(true) && second["ok"] == .bool(true), "\(first["error"] ?? .null)")
        #expect((second["frame"]?.intValue ?? 0) > (first["frame"]?.intValue ?? .max), "a later frame")
        #expect(first["jpeg"] != second["jpeg"], "the picture changed")
        for reply in [first, second] {
            let picture = try JPEGImage.decodeRGB(Base64.decode(reply["jpeg"]?.stringValue ?? "") ?? [])
            let (width, scale) = (reply["width"]?.intValue ?? 0, reply["scale"]?.intValue ?? 0)
            #expect(picture.width == width / max(1, scale) && picture.width <= 320 && scale >= 1, "\(width) / \(scale)")
        }
        // A viewer's lease (what the live page takes): pictures of later frames on the preview
        // subject, with the controls the camera holds.
        let previews = try commands.subscribe(
            subject: try ContractSubjects(prefix: prefix).agent(.preview, site: "dc1", camera: "cam-01"))
        let lease = try H.command(commands, prefix: prefix, "preview", #"{"seconds": 2, "maxWidth": 320, "rate": 5}"#)
        #expect(lease["ok"] == .bool(true), "\(lease)")
        let pictures = LiveViewTests.messages(on: previews, seconds: 1.5).compactMap { try? JSONValue.parse($0.bytes) }
        #expect(pictures.count >= 2, "\(pictures.count) pictures in 1.5 s at 5 a second")
        let pictured = pictures.compactMap { $0["frame"]?.intValue }
        #expect(pictured == pictured.sorted() && Set(pictured).count == pictured.count, "\(pictured)")
        #expect((pictured.first ?? 0) > (second["frame"]?.intValue ?? .max), "pictures of frames after the snapshots")
        #expect(
            pictures.allSatisfy { $0["controls"]?["ExposureTime"] == .string("1000") && $0["jpeg"] != nil },
            "\(pictures.first?["controls"] ?? .null)")
        // The clip's frames at 15 per second, then blank frames until every track has ended.
        var statuses: [AgentStatus] = []
        #expect(
            try CameraHarness.waitForFrames(heartbeats, atLeast: frames + 15, into: &statuses),
            "\(statuses.last.map { "\($0.framesIn)" } ?? "no heartbeat")")
        agent.terminate()
        #expect(H.waitForExit(agent, seconds: 120))
        let log = (try? String(contentsOfFile: dir + "/agent.log", encoding: .utf8)) ?? ""
        #expect(agent.terminationStatus == 0, "\(log)")
        #expect(log.contains("camera streaming") && log.contains("ExposureTime=500"), "\(log)")
        #expect(log.contains("camera controls changed"), "the change is logged")
        let values = try CameraHarness.sightings(jetStream, prefix: prefix).values
        let last = statuses.last
        #expect(
            values == expected,
            "camera \(values) replay \(expected); frames in \(last?.framesIn ?? 0), dropped \(last?.framesDropped ?? 0), incomplete \(last?.sourceIncompleteFrames ?? 0); \(log)"
        )
    }

    @Test(
        "software trigger: no frame until the trigger command, one frame a trigger; a region that does not fit the sensor is refused before the stream restarts, one that fits is answered with the values the camera took",
        .enabled(if: TestEnvironment.natsEnabled))
    func softwareTrigger() throws {
        let natsURL = try TestEnvironment.requireNATS()
        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let clip = try H.flowClip(frames: 30, seed: 8)
        let fake = try Self.fakeCamera(clip, address: "127.0.0.1", serial: "GVTRG", fps: 20, dir: dir)
        defer { CameraHarness.stop(fake) }
        let (prefix, jetStream, _) = try CameraHarness.bus(natsURL)
        defer { try? jetStream.deleteStream(ContractSubjects(prefix: prefix).agentStream) }
        let config = try H.config(
            in: dir, source: #"{"type": "genicam", "camera": "127.0.0.1", "controls": {"trigger": "software"}}"#,
            natsURL: natsURL, prefix: prefix)
        let agent = try H.start(config: config, log: dir + "/agent.log")
        defer {
            agent.terminate()
            _ = H.waitForExit(agent, seconds: 120)
        }
        let commands = try NATSConnection(url: natsURL)
        var status = JSONValue.null
        #expect(
            H.eventually(seconds: 120) {
                status = (try? H.command(commands, prefix: prefix, "status")) ?? .null
                return status["source"]?["state"] == .string("streaming")
            }, "\(status)")
        status = try H.command(commands, prefix: prefix, "status")
        #expect(status["framesIn"] == .number(0), "no frame without a trigger: \(status)")
        // Each trigger's frame waited for before the next: a free-running camera (15 frames a
        // second) would overshoot the count at once, and two triggers in one exposure would merge.
        for triggered in 1...3 {
            let fired = try H.command(commands, prefix: prefix, "trigger")
            #expect(fired["ok"] == .bool(true) && fired["triggered"] == .bool(true), "\(fired)")
            #expect(
                H.eventually(seconds: 120) {
                    status = (try? H.command(commands, prefix: prefix, "status")) ?? .null
                    return (status["framesIn"]?.intValue ?? 0) >= triggered
                }, "trigger \(triggered): \(status)")
            #expect(status["framesIn"] == .number(Double(triggered)), "one frame a trigger: \(status)")
        }
        let region = try H.command(
            commands, prefix: prefix, "set-controls", #"{"region": {"x": 0, "y": 0, "width": 60000, "height": 10}}"#)
        #expect(region["ok"] == .bool(false), "\(region)")
        #expect(region["error"]?.stringValue?.contains("region.width: 60000 from 0 does not fit") == true, "\(region)")
        // The camera kept streaming: a trigger still gives a frame. (Under a loaded machine the fake
        // camera can miss a heartbeat and be reopened: then it streams again within seconds.)
        #expect(
            H.eventually(seconds: 120) {
                status = (try? H.command(commands, prefix: prefix, "status")) ?? .null
                return status["source"]?["state"] == .string("streaming")
            }, "the camera kept streaming: \(status)")
        let fired = try H.command(commands, prefix: prefix, "trigger")
        #expect(fired["ok"] == .bool(true) && fired["triggered"] == .bool(true), "\(fired)")
        #expect(
            H.eventually(seconds: 120) {
                status = (try? H.command(commands, prefix: prefix, "status")) ?? .null
                return status["framesIn"] == .number(4)
            }, "a trigger after the refusal: \(status)")
        // A region that fits: answered once the stream restarted with it, with the values the
        // camera took (not the old ones), and streaming again.
        let width = try #require(status["source"]?["controls"]?["Width"]?.stringValue, "\(status)")
        let fitted = try H.command(
            commands, prefix: prefix, "set-controls",
            #"{"region": {"x": 0, "y": 16, "width": \#(width), "height": 96}}"#)
        #expect(fitted["ok"] == .bool(true), "\(fitted)")
        #expect(
            fitted["controls"]?["Height"] == .string("96") && fitted["controls"]?["OffsetY"] == .string("16"),
            "\(fitted)")
        #expect(
            H.eventually(seconds: 120) {
                status = (try? H.command(commands, prefix: prefix, "status")) ?? .null
                return status["source"]?["state"] == .string("streaming")
            }, "streaming with the new region: \(status)")
        #expect(status["source"]?["controls"]?["Height"] == .string("96"), "\(status)")
    }

    @Test(
        "the camera stopped and started again mid-run: the agent says reconnecting in its heartbeat, opens it again with its controls, and delivers both clips' sightings, each once",
        .enabled(if: TestEnvironment.natsEnabled))
    func reconnect() throws {
        let natsURL = try TestEnvironment.requireNATS()
        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try H.flowClip(frames: 60, seed: 31)
        let second = try H.flowClip(frames: 60, seed: 32)
        let expected = (try CameraHarness.replayValues(first) + CameraHarness.replayValues(second)).sorted()
        let (prefix, jetStream, heartbeats) = try CameraHarness.bus(natsURL)
        defer { try? jetStream.deleteStream(ContractSubjects(prefix: prefix).agentStream) }
        var camera = try Self.fakeCamera(first, address: "127.0.0.1", serial: "GVRE1", fps: 15, dir: dir)
        // Whichever camera runs when the test ends, however it ends (a camera left behind on
        // 127.0.0.1 would answer the next test's agent).
        defer { CameraHarness.stop(camera) }
        let config = try H.config(
            in: dir, source: #"{"type": "genicam", "camera": "127.0.0.1", "controls": {"gainDecibels": 2}}"#,
            natsURL: natsURL, prefix: prefix, extra: #", "tracking": {"maxMissedFrames": 5}"#)
        // The release build (what users run): reconnects are timing- and lifetime-sensitive.
        let agent = try H.start(config: config, log: dir + "/agent.log", binary: H.releaseAgent)
        defer { if agent.isRunning { agent.terminate() } }
        var statuses: [AgentStatus] = []
        try CameraHarness.waitForFrames(heartbeats, atLeast: 60 + 22, into: &statuses)
        let shown = statuses.map(\.framesIn).max() ?? 0
        // The cable pulled: the camera is gone until the agent's heartbeat says it is reconnecting,
        // then back (a reboot), showing the second clip.
        kill(camera.processIdentifier, SIGKILL)
        camera.waitUntilExit()
        #expect(
            try CameraHarness.waitForState(heartbeats, "reconnecting", into: &statuses),
            "\(statuses.last.map(\.sourceState) ?? "")")
        camera = try Self.fakeCamera(second, address: "127.0.0.1", serial: "GVRE2", fps: 15, dir: dir)
        try CameraHarness.waitForFrames(heartbeats, atLeast: shown + 60 + 45, into: &statuses)
        agent.terminate()
        #expect(H.waitForExit(agent, seconds: 120))
        let log = (try? String(contentsOfFile: dir + "/agent.log", encoding: .utf8)) ?? ""
        #expect(agent.terminationStatus == 0, "\(log)")
        #expect(log.contains("camera back"), "\(log)")

        statuses += try CameraHarness.heartbeats(heartbeats)
        let states = statuses.map(\.sourceState)
        #expect(states.contains("reconnecting"), "the gap is in the heartbeat: \(states)")
        #expect(statuses.map(\.sourceReconnects).max() == 1, "\(states)")
        #expect(
            statuses.contains { $0.sourceState == "reconnecting" && !($0.sourceError ?? "").isEmpty },
            "the heartbeat says why: \(statuses.map { $0.sourceError ?? "-" })")
        let gain = statuses.last { !$0.sourceControls.isEmpty }?.sourceControls.first { $0.name == "Gain" }?.value
        #expect(gain == "2", "the controls applied again and reported")
        let (values, ids) = try CameraHarness.sightings(jetStream, prefix: prefix)
        #expect(Set(ids).count == ids.count, "no event twice")
        #expect(values == expected, "camera \(values) replays \(expected)")
    }

    @Test(
        "GVSP packets lost on the way: incomplete frames are counted in the heartbeat and never decoded, and no sighting is of a code the clip does not hold",
        .enabled(if: TestEnvironment.natsEnabled), arguments: [UInt64(41), 42])
    func packetLoss(seed: UInt64) throws {
        let natsURL = try TestEnvironment.requireNATS()
        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let clip = try H.flowClip(frames: 90, seed: seed)
        let onLabels = Set(try CameraHarness.replayValues(clip))
        let camera = try Self.fakeCamera(
            clip, address: "127.0.0.1", serial: "GVLOSS", fps: 15, dir: dir, extra: ["--gvsp-lost-ratio", "5"])
        defer { CameraHarness.stop(camera) }
        let (prefix, jetStream, heartbeats) = try CameraHarness.bus(natsURL)
        defer { try? jetStream.deleteStream(ContractSubjects(prefix: prefix).agentStream) }
        let config = try H.config(
            in: dir, source: #"{"type": "genicam", "camera": "127.0.0.1"}"#, natsURL: natsURL, prefix: prefix)
        let agent = try H.start(config: config, log: dir + "/agent.log")
        var statuses: [AgentStatus] = []
        try CameraHarness.waitForFrames(heartbeats, atLeast: 61, into: &statuses)
        agent.terminate()
        #expect(H.waitForExit(agent, seconds: 120))
        statuses += try CameraHarness.heartbeats(heartbeats)
        let incomplete = statuses.map(\.sourceIncompleteFrames).max() ?? 0
        let framesIn = statuses.map(\.framesIn).max() ?? 0
        #expect(incomplete > 0, "packets were lost: some frames arrived incomplete")
        #expect(framesIn + incomplete > 60, "the camera sent its frames: \(framesIn) whole, \(incomplete) incomplete")
        let values = try CameraHarness.sightings(jetStream, prefix: prefix).values
        #expect(values.allSatisfy(onLabels.contains), "no phantom: \(values) against \(onLabels)")
    }

    @Test(
        "Aravis's in-process Fake interface: discovery lists its camera with vendor, model and serial, and it opens, streams whole Mono8 frames and takes controls"
    )
    func inProcessFake() throws {
        let fake = try #require(GenICamDevices.list(fake: true).first { $0.interface == "Fake" })
        #expect(!fake.id.isEmpty && fake.vendor == "Aravis" && !fake.serial.isEmpty, "\(fake)")
        let camera = try GenICamCamera(id: fake.id)
        var controls = CameraControls()
        controls.exposureMicroseconds = 1_000
        controls.frameRate = 20
        let (taken, _) = try camera.apply(controls)
        #expect(taken.contains { $0.name == "ExposureTime" && $0.value == "1000" }, "\(taken)")
        let stream = try GenICamStream(camera: camera, buffers: 4)
        var frames: [GenICamStream.Frame] = []
        for _ in 0..<40 where frames.count < 3 {
            if let frame = try stream.next(timeoutMicroseconds: 500_000) { frames.append(frame) }
        }
        #expect(frames.count == 3, "whole frames: \(frames.count), incomplete \(stream.incomplete)")
        let width = try camera.integer("Width")
        #expect(
            frames.allSatisfy {
                Int64($0.image.width) == width && $0.image.pixels.count == $0.image.width * $0.image.height
            })
        #expect(Set(frames.map(\.frameId)).count == frames.count, "each frame once")
        let stamps = frames.map(\.cameraTimestamp)
        #expect(stamps.allSatisfy { $0 > 0 } && stamps == stamps.sorted(), "exposure stamps kept: \(stamps)")
    }
}
