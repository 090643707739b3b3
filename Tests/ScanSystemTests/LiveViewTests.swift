import Foundation
import ScanCore
import ScanNATS
import ScanSynth
import ScanTestSupport
import ScanTestTiming
import Testing

/// The live page of a camera (`scanadmin serve`, `/cameras/<site>/<camera>/live`) watched in
/// headless Chromium while a real agent reads a rendered clip of labels at any angle over the real
/// nats-server: the agent sends pictures only while the page's lease runs.
@Suite("live view in a browser", .timed, .enabled(if: TestEnvironment.natsEnabled && TestEnvironment.postgresEnabled))
struct LiveViewTests {
    typealias H = AgentRunHarness

    /// Messages on `subject` in `seconds`.
    static func messages(on subscription: NATSSubscription, seconds: Double) -> [NATSMessage] {
        var got: [NATSMessage] = []
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let message = try? subscription.next(timeoutMilliseconds: 100) { got.append(message) }
        }
        return got
    }

    @Test(
        "no picture is sent before a page watches; on the page the picture changes, each read code's box and value lie on its label; pictures stop once the page's server is gone",
        arguments: [UInt64(7), 31])
    func watchACamera(seed: UInt64) throws {
        let natsURL = try TestEnvironment.requireNATS()
        let python = TestEnvironment.repoRoot + "/.cache/venv/bin/python"
        try #require(
            FileManager.default.isExecutableFile(atPath: python), "run scripts/install-deps.sh (make test does)")
        try #require(ProcessRunner.which("chromium") != nil, "chromium is installed by scripts/install-deps.sh")
        let rig = try H.Rig(natsURL: natsURL, database: "st_live")
        defer { rig.cleanUp() }
        let (prefix, subjects, migrated, dir) = (rig.prefix, rig.subjects, rig.migrated, rig.dir)
        let bus = try NATSConnection(url: natsURL)

        // Boxes grouped into parcels, and a region of interest inside the frame: both drawn too.
        let (renderer, agent) = try H.anyAngleAgent(
            in: dir, frames: 900, seed: seed, natsURL: natsURL, prefix: prefix,
            extra:
                #", "grouping": {"enabled": true}, "decoder": {"regionOfInterest": {"x": 0.05, "y": 0.05, "width": 0.9, "height": 0.9}}"#
        )
        rig.running.append(agent)
        let previews = try bus.subscribe(subject: try subjects.agent(.preview, site: "dc1", camera: "cam-01"))
        try #require(
            H.eventually { (try? H.command(bus, prefix: prefix, "status"))?["framesProcessed"]?.intValue ?? 0 > 10 },
            "the agent reads its clip")

        // Nobody watches: the agent draws nothing and sends nothing.
        #expect(Self.messages(on: previews, seconds: 1.5).isEmpty, "no preview without a lease")

        let (serve, url) = try DashboardSecurityTests.serve(
            ["--listen", "127.0.0.1:0", "--nats", natsURL, "--prefix", prefix], dsn: migrated.dsn, dir: dir)
        rig.running.append(serve)
        let output = TestEnvironment.repoRoot + "/.build/test-output/live-view-\(seed)"
        let browsed = try ProcessRunner.run(
            python,
            [
                TestEnvironment.repoRoot + "/scripts/live_view_browser.py", "--url", url + "cameras/dc1/cam-01/live",
                "--samples", "6", "--out", output,
            ])
        try #require(browsed.status == 0, "\(browsed.stderr)")
        let page = try JSONValue.parse(Array(browsed.stdoutText.utf8))
        guard case .array(let samples)? = page["samples"] else { throw TestFailure(browsed.stdoutText) }

        // The picture changes in place, and what is drawn over it is that picture's.
        let frames = samples.compactMap { $0["frame"]?.intValue }
        #expect(frames.count == 6 && Set(frames).count == 6 && frames == frames.sorted(), "\(frames)")
        var readMarks = 0
        let expected = renderer.expectedCodes()
        for sample in samples {
            let frame = try #require(sample["frame"]?.intValue)
            #expect(sample["state"] == .string("live"))
            #expect(sample["image"]?["frame"]?.intValue == frame, "the picture shown is the marks' frame")
            #expect(sample["image"]?["loaded"] == .bool(true))
            #expect(sample["image"]?["width"]?.intValue == 640 && sample["image"]?["height"]?.intValue == 360)
            #expect(sample["width"]?.intValue == 1280 && sample["overlay"]?["viewBox"] == .string("0 0 1280 720"))
            guard case .array(let marks)? = sample["marks"] else { continue }
            #expect(sample["rows"]?.intValue == marks.count, "one table row a mark")
            for mark in marks where mark["state"] == .string("read") {
                readMarks += 1
                let value = try #require(mark["value"]?.stringValue)
                let trackId = try #require(mark["trackId"]?.stringValue)
                #expect(mark["label"]?.stringValue?.contains(value) == true)
                let number = trackId.split(separator: "-").last.map(String.init) ?? trackId
                #expect(mark["label"]?.stringValue?.hasPrefix("#\(number) ") == true, "\(mark)")
                let labels = expected.filter { value.contains($0.value) || $0.value.contains(value) }
                try #require(!labels.isEmpty, "\(value) is on no label of the clip")
                guard case .array(let corners)? = mark["box"] else { continue }
                let c = corners.compactMap(\.doubleValue)
                let (x, y) = ((c[0] + c[2]) / 2, (c[1] + c[3]) / 2)
                let placed = labels.contains { label in
                    let drawn = renderer.labelBox(item: label.item, label: label.label, frame: frame)
                    return x >= Double(drawn.minX - 12) && x <= Double(drawn.maxX + 12)
                        && y >= Double(drawn.minY - 12) && y <= Double(drawn.maxY + 12)
                }
                #expect(placed, "\(value)'s box \(c) lies on its label in frame \(frame)")
            }
        }
        #expect(readMarks >= 1, "a code read is drawn: \(browsed.stdoutText)")
        // Each parcel drawn is around codes drawn in its picture; the region is the config's.
        var outlined = 0
        for sample in samples {
            guard case .array(let parcels)? = sample["parcels"], case .array(let marks)? = sample["marks"] else {
                continue
            }
            let centres = marks.compactMap { mark -> (Double, Double)? in
                guard case .array(let corners)? = mark["box"] else { return nil }
                let c = corners.compactMap(\.doubleValue)
                return c.count == 4 ? ((c[0] + c[2]) / 2, (c[1] + c[3]) / 2) : nil
            }
            for parcel in parcels {
                guard case .array(let corners)? = parcel["box"] else { continue }
                let b = corners.compactMap(\.doubleValue)
                outlined += 1
                #expect(
                    centres.contains { $0.0 >= b[0] && $0.0 <= b[2] && $0.1 >= b[1] && $0.1 <= b[3] },
                    "parcel \(parcel) is around a code drawn in frame \(sample["frame"] ?? .null)")
            }
            guard case .array(let regions)? = sample["region"], case .array(let region)? = regions.first else {
                Issue.record("no region drawn: \(sample)")
                continue
            }
            let r = region.compactMap(\.doubleValue)
            #expect(
                zip(r, [64.0, 36, 1216, 684]).allSatisfy { abs($0 - $1) <= 2 }, "the region is the config's: \(r)")
        }
        #expect(outlined >= 1, "parcels are outlined: \(browsed.stdoutText)")

        // The viewer leaves (its server stops renewing): within the lease's 5 s the pictures stop,
        // while the agent still reads its clip.
        let sent = Self.messages(on: previews, seconds: 0.5)
        #expect(!sent.isEmpty, "pictures while the page's lease runs")
        // What the agent sends is what docs/schema/preview.schema.json says.
        if let message = sent.last {
            try Data(message.bytes).write(to: URL(fileURLWithPath: dir + "/preview.json"))
            let checked = try ProcessRunner.run(
                python,
                [
                    "-c",
                    "import json, sys, jsonschema; jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))",
                    TestEnvironment.repoRoot + "/docs/schema/preview.schema.json", dir + "/preview.json",
                ])
            #expect(checked.status == 0, "\(checked.stderr)")
        }
        serve.terminate()
        serve.waitUntilExit()
        let stopped = H.eventually(seconds: 12) { Self.messages(on: previews, seconds: 1.5).isEmpty }
        #expect(stopped, "no preview once no lease runs")
        #expect(agent.isRunning, "the agent was still reading when the pictures stopped")
    }
}

/// The live page of a GigE Vision camera, in GenICamTests' suite: its cameras take 127.0.0.1 one
/// at a time.
extension GenICamTests {
    @Test(
        "a GigE Vision camera's live page: the picture changes, its codes are the clip's, and the exposure and gain shown are those the camera took",
        .enabled(if: TestEnvironment.natsEnabled && TestEnvironment.postgresEnabled), arguments: [UInt64(12)])
    func watchAGigECamera(seed: UInt64) throws {
        let natsURL = try TestEnvironment.requireNATS()
        let python = TestEnvironment.repoRoot + "/.cache/venv/bin/python"
        try #require(ProcessRunner.which("chromium") != nil, "chromium is installed by scripts/install-deps.sh")
        let rig = try H.Rig(natsURL: natsURL, database: "st_livegv")
        defer { rig.cleanUp() }
        let (prefix, migrated, dir) = (rig.prefix, rig.migrated, rig.dir)
        let clip = try H.flowClip(frames: 300, seed: seed)
        let onLabels = Set(try CameraHarness.replayValues(clip))
        let fake = try Self.fakeCamera(clip, address: "127.0.0.1", serial: "GVLIVE", fps: 15, dir: dir)
        defer { CameraHarness.stop(fake) }
        let agent = try H.start(
            config: try H.config(
                in: dir,
                source:
                    #"{"type": "genicam", "camera": "127.0.0.1", "controls": {"exposureMicroseconds": 800, "gainDecibels": 3}}"#,
                natsURL: natsURL, prefix: prefix),
            log: dir + "/agent.log")
        rig.running.append(agent)
        let (serve, url) = try DashboardSecurityTests.serve(
            ["--listen", "127.0.0.1:0", "--nats", natsURL, "--prefix", prefix], dsn: migrated.dsn, dir: dir)
        rig.running.append(serve)
        let browsed = try ProcessRunner.run(
            python,
            [
                TestEnvironment.repoRoot + "/scripts/live_view_browser.py", "--url", url + "cameras/dc1/cam-01/live",
                "--samples", "4", "--timeout", "120", "--out",
                TestEnvironment.repoRoot + "/.build/test-output/live-view-gige",
            ])
        try #require(browsed.status == 0, "\(browsed.stderr)")
        let page = try JSONValue.parse(Array(browsed.stdoutText.utf8))
        guard case .array(let samples)? = page["samples"] else { throw TestFailure(browsed.stdoutText) }
        let frames = samples.compactMap { $0["frame"]?.intValue }
        #expect(frames.count == 4 && Set(frames).count == 4 && frames == frames.sorted(), "\(frames)")
        var values: [String] = []
        for sample in samples {
            #expect(sample["image"]?["loaded"] == .bool(true) && sample["image"]?["frame"] == sample["frame"])
            #expect(sample["exposure"] == .string("800") && sample["gain"] == .string("3"), "\(sample)")
            guard case .array(let marks)? = sample["marks"] else { continue }
            values += marks.filter { $0["state"] == .string("read") }.compactMap { $0["value"]?.stringValue }
        }
        #expect(values.allSatisfy(onLabels.contains), "\(values) are on the clip's labels \(onLabels)")
    }
}
