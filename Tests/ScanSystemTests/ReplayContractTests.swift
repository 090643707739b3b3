import Foundation
import ScanCore
import ScanSynth
import ScanTestSupport
import ScanTestTiming
import Testing
import ScanMedia

/// What `scan-agent replay` promises (docs/integration.md: commands and event JSON).
@Suite("replay contract", .timed)
struct ReplayContractTests {
    @Test("sightings carry every contract field with the right types; IDs are unique")
    func sightingFields() throws {
        let (clip, _) = try ReplayHarness.clip(of: Scenarios.twoCodes(chroma: .c420), name: "fields")
        let replay = try ReplayHarness.replay(clip, arguments: ["--start", "2026-11-21T08:00:00Z"])
        #expect(replay.result.status == 0)
        #expect(!replay.result.stderr.isEmpty, "diagnostics go to stderr")
        let sightings = replay.sightings
        #expect(sightings.count == 4)
        for sighting in sightings {
            for key in [
                "type", "eventId", "site", "camera", "time", "trackId", "symbology", "value", "status", "firstSeen",
                "lastSeen",
            ] {
                #expect(sighting[key]?.stringValue != nil, "\(key) must be a string")
            }
            for key in ["firstFrame", "lastFrame", "frames", "decodes"] {
                #expect(sighting[key]?.intValue != nil, "\(key) must be a whole number")
            }
            #expect(sighting["status"] == .string("accepted"))
            #expect(Symbology(rawValue: sighting["symbology"]?.stringValue ?? "") != nil)
            for key in ["time", "firstSeen", "lastSeen"] {
                let text = sighting[key]?.stringValue ?? ""
                #expect(Timestamp(rfc3339: text)?.description == text, "\(key) is RFC 3339 UTC with milliseconds")
            }
            guard case .array(let first)? = sighting["box"]?["first"], case .array(let last)? = sighting["box"]?["last"]
            else {
                Issue.record("box.first/box.last missing")
                continue
            }
            #expect(first.count == 4 && last.count == 4)
        }
        let eventIds = replay.events.compactMap { $0["eventId"]?.stringValue }
        #expect(Set(eventIds).count == eventIds.count, "event ids are unique")
    }

    @Test(
        "--progress shows frames of the total, frames/s and time left on stderr, and changes no event; off when stderr is no terminal"
    )
    func progress() throws {
        let clip = try AgentRunHarness.flowClip(frames: 240, seed: 31)
        let fixed = ["--start", "2026-11-21T08:00:00Z", "--run-id", "progress"]
        let shown = try ProcessRunner.run(ReplayHarness.agent, ["replay", clip, "--progress"] + fixed)
        let quiet = try ProcessRunner.run(ReplayHarness.agent, ["replay", clip] + fixed)
        #expect(shown.status == 0 && quiet.status == 0, "\(shown.stderr)")
        // At most twice a second, and where it ended, however fast the clip went.
        #expect(shown.stderr.contains("\r") && shown.stderr.contains(" of 240 frames ("), "\(shown.stderr)")
        #expect(shown.stderr.contains("240 of 240 frames (100 %), "), "\(shown.stderr)")
        #expect(shown.stderr.contains("frames/s, ") && shown.stderr.contains(", 0 s left"), "\(shown.stderr)")
        #expect(!quiet.stderr.contains("\r"), "\(quiet.stderr)")
        #expect(shown.stdout == quiet.stdout, "the events are the same")
        #expect(!shown.stdout.isEmpty)
    }

    @Test("frame times follow the clip's frame rate from --start")
    func frameTimes() throws {
        let (clip, _) = try ReplayHarness.clip(of: Scenarios.covered(), name: "times")
        let start = try #require(Timestamp(rfc3339: "2026-11-21T23:59:58.500Z"))
        let sighting = try #require(
            try ReplayHarness.replay(clip, arguments: ["--start", start.description]).sightings.first)
        let firstFrame = try #require(sighting["firstFrame"]?.intValue)
        let lastFrame = try #require(sighting["lastFrame"]?.intValue)
        #expect(
            sighting["firstSeen"]?.stringValue == start.adding(milliseconds: Int64(firstFrame) * 1000 / 30).description)
        #expect(
            sighting["lastSeen"]?.stringValue == start.adding(milliseconds: Int64(lastFrame) * 1000 / 30).description)
    }

    @Test("track IDs differ between two runs of the same clip (unique across restarts)")
    func uniqueAcrossRuns() throws {
        let (clip, _) = try ReplayHarness.clip(of: Scenarios.covered(), name: "runs")
        let one = try ReplayHarness.replay(clip).sightings.first?["trackId"]?.stringValue
        let two = try ReplayHarness.replay(clip).sightings.first?["trackId"]?.stringValue
        #expect(one != nil && one != two)
    }

    @Test("a truncated clip: events of the frames before it, then an error naming file and frame, exit 1")
    func truncated() throws {
        let (clip, _) = try ReplayHarness.clip(of: Scenarios.covered(), name: "cut")
        let data = try Data(contentsOf: URL(fileURLWithPath: clip))
        let header = Y4MHeader(width: 640, height: 400, chroma: .mono)
        let frameBytes = header.frameBytes + 6
        // Keep 90 whole frames and half of the 91st.
        let cut = header.line.utf8.count + 90 * frameBytes + frameBytes / 2
        try data.prefix(cut).write(to: URL(fileURLWithPath: clip))
        let replay = try ReplayHarness.replay(clip)
        #expect(replay.result.status == 1)
        #expect(replay.result.stderr.contains(clip))
        #expect(replay.result.stderr.contains("frame 90"))
        #expect(replay.sightings.count == 1, "the label passed before the damage is still reported")
    }

    @Test("an unreadable clip or a bad config exits 2, naming the input")
    func badInput() throws {
        let directory = try ReplayHarness.temporaryDirectory()
        let notAClip = directory + "/photo.y4m"
        try Data("P5\n1 1\n255\n\u{0}".utf8).write(to: URL(fileURLWithPath: notAClip))
        let bad = try ReplayHarness.replay(notAClip)
        #expect(bad.result.status == 2)
        #expect(bad.result.stderr.contains(notAClip) && bad.result.stderr.contains("YUV4MPEG2"))
        #expect(bad.events.isEmpty)

        let missing = try ReplayHarness.replay(directory + "/nope.y4m")
        #expect(missing.result.status == 2)
        #expect(missing.result.stderr.contains("nope.y4m"))

        let config = directory + "/agent.json"
        try Data(#"{"camera": {"id": "c1"}, "decoder": {"density": 0, "symbologies": ["EAN-13", "EAN-99"]}}"#.utf8)
            .write(to: URL(fileURLWithPath: config))
        let (clip, _) = try ReplayHarness.clip(of: Scenarios.covered(), name: "cfg")
        let configured = try ReplayHarness.replay(clip, arguments: ["--config", config])
        #expect(configured.result.status == 2)
        #expect(configured.result.stderr.contains("decoder.density"))
        #expect(configured.result.stderr.contains("decoder.symbologies[1]"))
    }

    @Test("the config's camera, site and lane appear in every event")
    func cameraFromConfig() throws {
        let directory = try ReplayHarness.temporaryDirectory()
        let config = directory + "/agent.json"
        try Data(#"{"camera": {"id": "cam-07", "site": "dc1", "lane": "L3"}}"#.utf8).write(
            to: URL(fileURLWithPath: config))
        let (clip, _) = try ReplayHarness.clip(of: Scenarios.covered(), name: "cam")
        let replay = try ReplayHarness.replay(clip, arguments: ["--config", config])
        #expect(!replay.events.isEmpty)
        for event in replay.events {
            #expect(event["camera"] == .string("cam-07") && event["site"] == .string("dc1"))
        }
        #expect(replay.sightings.first?["lane"] == .string("L3"))
        #expect(replay.sightings.first?["trackId"]?.stringValue?.hasPrefix("cam-07-") == true)
    }
}
