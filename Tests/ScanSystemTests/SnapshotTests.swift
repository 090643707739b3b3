import Foundation
import ScanCore
import ScanJPEG
import ScanNATS
import ScanSynth
import ScanTestSupport
import ScanTestTiming
import Testing

/// `scanadmin agent snapshot`: a running agent's latest frame with its tracked codes drawn on it,
/// asked over the real nats-server while the agent reads a rendered clip of labels at any angle.
@Suite("agent snapshot", .timed, .enabled(if: TestEnvironment.natsEnabled))
struct SnapshotTests {
    typealias H = AgentRunHarness

    @Test(
        "the picture is the camera's frame, scaled to --max-width, and each code read is boxed in green where the clip drew its label, with its value",
        arguments: [UInt64(3), 29])
    func snapshotOfARunningAgent(seed: UInt64) throws {
        let natsURL = try TestEnvironment.requireNATS()
        let prefix = TestEnvironment.uniqueName("st")
        let subjects = ContractSubjects(prefix: prefix)
        let jetStream = try NATSConnection(url: natsURL).jetStream()
        let dir = try ReplayHarness.temporaryDirectory()
        let (renderer, agent) = try H.anyAngleAgent(
            in: dir, frames: 450, seed: seed, natsURL: natsURL, prefix: prefix)
        defer { H.cleanUp([agent], jetStream: jetStream, subjects: subjects, dir: dir) }

        // Asked until a frame with a code read in it comes (the agent needs a few frames to confirm).
        let out = dir + "/snapshot.jpg"
        var reply = JSONValue.null
        var marks: [JSONValue] = []
        let answered = try H.eventually(seconds: 30) {
            let asked = try ProcessRunner.run(
                TestEnvironment.productsDirectory + "/scanadmin",
                [
                    "agent", "snapshot", "--camera", "cam-01", "--site", "dc1", "--prefix", prefix, "--out", out,
                    "--max-width", "640",
                ], environment: ["SCANTRACK_NATS": natsURL, "SCANTRACK_CONFIG": ""])
            guard asked.status == 0 else { return false }
            reply = try JSONValue.parse(Array(asked.stdoutText.utf8))
            guard case .array(let listed)? = reply["marks"] else { return false }
            marks = listed
            return listed.contains { $0["state"] == .string("read") }
        }
        try #require(answered, "no snapshot with a code read: \(reply)")
        // Kept beside the build for a person to look at.
        let kept = TestEnvironment.repoRoot + "/.build/test-output/snapshot-\(seed).jpg"
        try? FileManager.default.createDirectory(
            atPath: TestEnvironment.repoRoot + "/.build/test-output", withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: kept)
        try? FileManager.default.copyItem(atPath: out, toPath: kept)
        let frame = try #require(reply["frame"]?.intValue)
        #expect(reply["width"]?.intValue == 1280 && reply["height"]?.intValue == 720 && reply["scale"]?.intValue == 2)

        // The picture: the frame itself, halved, where no box is drawn.
        let picture = try JPEGImage.decodeRGB(Array(try Data(contentsOf: URL(fileURLWithPath: out))))
        #expect(picture.width == 640 && picture.height == 360)
        let rendered = renderer.render(frame: frame)
        var boxes: [Box] = []
        for mark in marks {
            guard case .array(let corners)? = mark["box"], corners.count == 4 else { continue }
            let c = corners.compactMap(\.intValue)
            boxes.append(Box(minX: c[0], minY: c[1], maxX: c[2], maxY: c[3]))
        }
        var difference = 0
        var compared = 0
        for y in stride(from: 1, to: 359, by: 3) {
            for x in stride(from: 1, to: 639, by: 3) {
                let near = boxes.contains { box in
                    x * 2 >= box.minX - 8 && x * 2 <= box.maxX + 8 && y * 2 >= box.minY - 8 && y * 2 <= box.maxY + 8
                }
                guard !near else { continue }
                let source =
                    (Int(rendered.pixels[y * 2 * 1280 + x * 2]) + Int(rendered.pixels[y * 2 * 1280 + x * 2 + 1])
                        + Int(rendered.pixels[(y * 2 + 1) * 1280 + x * 2])
                        + Int(rendered.pixels[(y * 2 + 1) * 1280 + x * 2 + 1]))
                    / 4
                difference += abs(Int(picture.pixel(x: x, y: y).green) - source)
                compared += 1
            }
        }
        #expect(compared > 10_000 && difference / max(1, compared) < 10, "the frame, within JPEG's error")

        // Each code read: a value of the clip's labels, boxed where that label lies in the frame,
        // the box's edge green in the picture.
        let expected = renderer.expectedCodes()
        for mark in marks where mark["state"] == .string("read") {
            let value = try #require(mark["value"]?.stringValue)
            let labels = expected.filter { value.contains($0.value) || $0.value.contains(value) }
            try #require(!labels.isEmpty, "\(value) is on no label of the clip")
            guard case .array(let corners)? = mark["box"] else { continue }
            let c = corners.compactMap(\.intValue)
            let box = Box(minX: c[0], minY: c[1], maxX: c[2], maxY: c[3])
            let (centreX, centreY) = ((box.minX + box.maxX) / 2, (box.minY + box.maxY) / 2)
            let placed = labels.contains { label in
                let drawn = renderer.labelBox(item: label.item, label: label.label, frame: frame)
                return centreX >= drawn.minX - 12 && centreX <= drawn.maxX + 12 && centreY >= drawn.minY - 12
                    && centreY <= drawn.maxY + 12
            }
            #expect(placed, "\(value)'s box \(box) lies on its label in frame \(frame)")
            // Along the box's longer side, away from its corners: the line is green (JPEG halves the
            // colour's resolution, so the pixel beside the edge counts too).
            let (left, right, top, bottom) = (box.minX / 2, box.maxX / 2, box.minY / 2, box.maxY / 2)
            let across = right - left >= bottom - top
            let samples =
                across ? Array((left + 2)...max(left + 2, right - 2)) : Array((top + 2)...max(top + 2, bottom - 2))
            var green = 0
            for at in samples {
                let line = (-1...1).map { offset in
                    across
                        ? (x: min(639, max(0, at)), y: min(359, max(0, top + offset)))
                        : (x: min(639, max(0, left + offset)), y: min(359, max(0, at)))
                }
                if line.contains(where: { point in
                    let pixel = picture.pixel(x: point.x, y: point.y)
                    return Int(pixel.green) > Int(pixel.red) + 30 && Int(pixel.green) > Int(pixel.blue) + 30
                }) {
                    green += 1
                }
            }
            #expect(green * 4 >= samples.count * 3, "\(value)'s box is drawn in green: \(green) of \(samples.count)")
        }

        // Bad requests are refused, naming what is wrong.
        let wide = try ProcessRunner.run(
            TestEnvironment.productsDirectory + "/scanadmin",
            [
                "agent", "snapshot", "--camera", "cam-01", "--site", "dc1", "--prefix", prefix, "--out", out,
                "--max-width", "99",
            ], environment: ["SCANTRACK_NATS": natsURL, "SCANTRACK_CONFIG": ""])
        #expect(wide.status == 64 && wide.stderr.contains("--max-width"))
    }
}
