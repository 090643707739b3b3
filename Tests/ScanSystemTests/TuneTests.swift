import Foundation
import ScanCore
import ScanSynth
import ScanTestSupport
import ScanTestTiming
import Testing
import ScanAgentConfig

/// `scan-agent tune` on rendered clips whose belt speed and module size are known.
@Suite("scan-agent tune", .timed)
struct TuneTests {
    @Test(
        "the suggestion names the symbologies present and the exposure that keeps blur under half a module, from the measured speed and module size; the written config counts the clip exactly",
        arguments: [
            (8.0, 2, SynthSymbology.ean13, ["400638133393", "590123412345"], UInt64(1)),
            (12.0, 3, SynthSymbology.ean13, ["400638133393", "978020137962", "590123412345"], UInt64(7)),
            (5.0, 2, SynthSymbology.code128, ["LPN700007", "LPN700046"], UInt64(3)),
        ])
    func suggestion(_ speed: Double, _ module: Int, _ symbology: SynthSymbology, _ values: [String], _ seed: UInt64)
        throws
    {
        let (clip, expected) = try ReplayHarness.clip(
            of: ReplayHarness.tuneScene(speed: speed, module: module, symbology: symbology, values: values, seed: seed),
            name: "tune")
        let written = URL(fileURLWithPath: clip).deletingLastPathComponent().path + "/tuned.json"
        let result = try ProcessRunner.run(
            ReplayHarness.agent, ["tune", clip, "--write", written, "--format", "json"])
        try #require(result.status == 0, "\(result.stderr)")
        let report = try JSONValue.parse(result.stdoutText)
        let expectedSymbologies = Array(Set(expected.map(\.symbology.rawValue))).sorted()
        #expect(report["symbologies"] == .array(expectedSymbologies.map { .string($0) }), "\(report)")
        let measuredModule = report["modulePixels"]?.doubleValue ?? 0
        let measuredSpeed = report["pixelsPerFrame"]?.doubleValue ?? 0
        #expect(abs(measuredModule - Double(module)) <= Double(module) * 0.15, "module \(measuredModule) for \(module)")
        #expect(abs(measuredSpeed - speed) <= speed * 0.1, "speed \(measuredSpeed) for \(speed)")
        // blur in modules = speed × exposure ÷ module size; half a module at 30 frames/s:
        let bound = 0.5 * Double(module) / speed / 30 * 1_000_000
        let suggested = report["longestExposureMicroseconds"]?.doubleValue ?? 0
        #expect(abs(suggested - bound) <= bound * 0.2, "exposure \(suggested) µs for \(bound) µs")

        // The written config is a valid agent config, and counts the clip exactly.
        let config = try AgentConfig.parse(Array(try Data(contentsOf: URL(fileURLWithPath: written))), file: written)
        #expect(config.decoder.symbologies.map(\.rawValue).sorted() == expectedSymbologies)
        let replay = try ReplayHarness.replay(clip, arguments: ["--config", written, "--sightings-only"])
        let problems = ReplayHarness.compare(replay.sightings, with: expected)
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test(
        "tune counts what replay counts: three identical EAN-13s, the middle one blurred and half covered for most of its way",
        arguments: [2, 5, 9] as [UInt64])
    func countsAsReplay(seed: UInt64) throws {
        var scene = ReplayHarness.tuneScene(
            speed: 8, module: 2, symbology: .ean13, values: Array(repeating: "400638133393", count: 3), seed: seed)
        scene.exposure = 0.25
        scene.noise = 10
        // An arm over the left half of the middle label from the frame it enters until near the end of its way.
        scene.occluders = [SynthOccluder(x: 10, y: 10, width: 110, height: 90, followsItem: 1, frames: 0..<150)]
        let (clip, expected) = try ReplayHarness.clip(of: scene, name: "tune-count-\(seed)")
        defer { try? FileManager.default.removeItem(atPath: (clip as NSString).deletingLastPathComponent) }
        let tuned = try ProcessRunner.run(ReplayHarness.agent, ["tune", clip, "--format", "json"])
        try #require(tuned.status == 0, "\(tuned.stderr)")
        let codes = try JSONValue.parse(tuned.stdoutText)["codes"]?.doubleValue
        let replay = try ReplayHarness.replay(clip, arguments: ["--sightings-only"])
        #expect(replay.sightings.count == expected.count, "replay: \(replay.sightings.count) of \(expected.count)")
        #expect(codes == Double(replay.sightings.count), "tune \(codes ?? -1), replay \(replay.sightings.count)")
    }

    @Test("a clip with no code in it: exit 1 and says so; an unreadable one: exit 2")
    func nothing() throws {
        let dir = try ReplayHarness.temporaryDirectory()
        let empty = SynthScene(frameCount: 10, items: [])
        try SceneRenderer(scene: empty).writeClip(to: dir + "/empty.y4m")
        let result = try ProcessRunner.run(ReplayHarness.agent, ["tune", dir + "/empty.y4m"])
        #expect(result.status == 1 && result.stderr.contains("no code was read"), "\(result.stderr)")
        try "not a clip".write(toFile: dir + "/bad.y4m", atomically: true, encoding: .utf8)
        #expect(try ProcessRunner.run(ReplayHarness.agent, ["tune", dir + "/bad.y4m"]).status == 2)
    }
}
