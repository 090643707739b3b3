import Foundation
import ScanCore
import ScanSynth
import ScanTestSupport
import ScanTestTiming
import Testing

/// A pack bench: items taken away and others put down at the same spot within a third of a
/// second are items of their own, each with its own sighting and its own rule decision.
@Suite("a different item is a different item; identical labels are two", .timed)
struct BenchSwapTests {
    static let rules = #"""
        {"version": 1, "defaultAction": "accept",
         "rules": [{"id": "order-codes", "action": "accept", "role": "order",
                    "match": {"symbologies": ["CODE-128"], "regex": "^ORD-[0-9]+$"}}]}
        """#

    @Test(
        "six items put down one after another at one spot, 3-9 frames apart, at any angle: six sightings in order, the order label's role on it alone, no no-read",
        arguments: [1, 2, 3] as [UInt64])
    func swaps(seed: UInt64) throws {
        // Before: a product put down where the order label was continued its track (a "misread"
        // outvoted, or outvoting it): 2-4 sightings for 6 items, products carrying the role.
        let (clip, expected) = try ReplayHarness.clip(of: Scenarios.bench(seed: seed), name: "bench-\(seed)")
        let folder = (clip as NSString).deletingLastPathComponent
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.rules.write(toFile: folder + "/rules.json", atomically: true, encoding: .utf8)
        let replay = try ReplayHarness.replay(clip, arguments: ["--rules", folder + "/rules.json", "--sightings-only"])
        #expect(replay.result.status == 0, "\(replay.result.stderr)")
        #expect(expected.count == 6 && expected.allSatisfy { !$0.partial })
        let sightings = replay.sightings.sorted {
            ($0["firstFrame"]?.intValue ?? 0) < ($1["firstFrame"]?.intValue ?? 0)
        }
        let values = sightings.compactMap { $0["value"]?.stringValue }
        let order = expected.sorted { $0.framesInView.lowerBound < $1.framesInView.lowerBound }
        #expect(values == order.map(\.value), "seed \(seed)")
        let roles = sightings.map { $0["role"]?.stringValue }
        #expect(roles == [.some("order")] + Array(repeating: nil, count: max(0, sightings.count - 1)), "\(roles)")
        #expect(!replay.events.contains { $0["type"] == .string("noread") }, "\(replay.result.stderr)")
        // Each item's sighting starts after it was put down.
        for (sighting, code) in zip(sightings, order) {
            let first = sighting["firstFrame"]?.intValue ?? -1
            #expect(
                code.framesInView.contains(first), "\(code.value): first read at \(first), in view \(code.framesInView)"
            )
        }
    }

    @Test(
        "two identical labels close behind each other on a box, turned across the belt (90°): two tracks, two sightings, no added/merged churn",
        arguments: [1, 2, 3] as [UInt64])
    func closeTwins(seed: UInt64) throws {
        // Before: a tracked region's read of the front label took in the rear one (zxing-cpp's
        // band joined to zbar's read of the other label, or zbar's parts pooled for the front
        // track): 7 sightings for 8 labels, 8-12 track.added.
        var scene = Scenarios.closeTwins(seed: seed)
        scene.turnLabels(within: 90...90, seed: seed)
        let (clip, expected) = try ReplayHarness.clip(of: scene, name: "twins-\(seed)")
        defer { try? FileManager.default.removeItem(atPath: (clip as NSString).deletingLastPathComponent) }
        let replay = try ReplayHarness.replay(clip)
        #expect(replay.result.status == 0, "\(replay.result.stderr)")
        #expect(expected.count == 8 && expected.allSatisfy { !$0.partial })
        #expect(ReplayHarness.compare(replay.sightings, with: expected).isEmpty, "seed \(seed)")
        let added = replay.events.filter { $0["type"] == .string("track.added") }
        let merged = replay.events.filter { $0["mergedInto"] != nil }
        #expect(added.count == 8 && merged.isEmpty, "\(added.count) added, \(merged.count) merged")
    }
}
