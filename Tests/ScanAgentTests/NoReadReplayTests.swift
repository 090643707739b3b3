import Foundation
import ScanCore
import ScanPNG
import ScanSynth
import ScanTestSupport
import Testing

/// Labels the camera sees but cannot read, on rendered scenes: `scan-agent replay --images`.
@Suite("no-reads on rendered scenes")
struct NoReadReplayTests {
    @Test(
        "torn labels among readable ones on a slatted belt: one noread each with a PNG, readable ones counted exactly")
    func tornLabels() throws {
        let scene = Scenarios.torn()
        let renderer = try SceneRenderer(scene: scene)
        let folder = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let clip = folder + "/torn.y4m"
        try renderer.writeClip(to: clip)
        let images = folder + "/images"
        let replay = try ReplayHarness.replay(clip, arguments: ["--images", images, "--sightings-only"])
        #expect(replay.result.status == 0, "\(replay.result.stderr)")

        let expected = renderer.expectedCodes()
        #expect(ReplayHarness.compare(replay.sightings, with: expected).isEmpty)
        #expect(replay.sightings.count == expected.count)
        let torn = renderer.expectedNoReads()
        #expect(torn.count == 3)
        let noReads = try replay.events.filter { $0["type"] == .string("noread") }.map {
            try NoReadEvent.parse($0)
        }
        #expect(noReads.count == torn.count, "\(noReads.map(\.lastBox))")
        for noRead in noReads {
            #expect(noRead.family == "linear")
            #expect(noRead.frames >= 8)
            let name = try #require(noRead.image)
            let file = try Data(contentsOf: URL(fileURLWithPath: images + "/" + name))
            #expect(Array(file) == noRead.imagePNG, "the event carries the file's bytes")
            let picture = try PNGImage.decode(Array(file))
            #expect(picture.width >= 100 && picture.height >= 40, "the region with its margin")
        }
        // Each torn label is one no-read: the boxes enter 340 px (42 frames) apart.
        let entries = noReads.map(\.firstFrame).sorted()
        #expect(zip(entries, entries.dropFirst()).allSatisfy { $1 - $0 > 30 }, "\(entries)")
        #expect(replay.result.stderr.contains("\(torn.count) no-reads"))
    }

    @Test("no-reads off in the config: regions are not followed, no noread")
    func disabled() throws {
        let folder = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let renderer = try SceneRenderer(scene: Scenarios.torn())
        let clip = folder + "/torn.y4m"
        try renderer.writeClip(to: clip)
        let config = folder + "/agent.json"
        try Data(#"{"camera": {"id": "cam-t"}, "noread": {"enabled": false}}"#.utf8).write(
            to: URL(fileURLWithPath: config))
        let replay = try ReplayHarness.replay(clip, arguments: ["--config", config, "--sightings-only"])
        #expect(replay.result.status == 0, "\(replay.result.stderr)")
        #expect(!replay.events.contains { $0["type"] == .string("noread") })
        #expect(replay.sightings.count == renderer.expectedCodes().count)
    }
}
