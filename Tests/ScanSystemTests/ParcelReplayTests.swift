import Foundation
import ScanCore
import ScanSynth
import ScanTestSupport
import ScanTestTiming
import Testing

/// `scan-agent replay` with `grouping.enabled` on the rendered parcel scene (`scan-synth
/// parcels`): boxes in two rows, back to back, one to three codes each, two identical boxes, one
/// with a torn SSCC, one that nothing on can be read.
@Suite("parcels on rendered scenes", .timed)
struct ParcelReplayTests {
    @Test(
        "one box, one parcel: no parcel holds codes of two boxes or part of a box, every sighting and no-read is in exactly one parcel, the torn SSCC makes its box incomplete; each parcel has one decision, divert exactly when it is incomplete or read by no code, and no other",
        arguments: [(UInt64(1), 7.0), (2, 7), (3, 5), (8, 7), (11, 10), (12, 12), (7, 14), (3, 10)])
    func parcels(seed: UInt64, speed: Double) throws {
        let (clip, expected) = try ReplayHarness.clip(
            of: Scenarios.parcels(seed: seed, speed: speed), name: "parcels-\(seed)")
        let dir = URL(fileURLWithPath: clip).deletingLastPathComponent().path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = dir + "/agent.json"
        try #"""
        {"camera": {"id": "cam-1", "site": "dc1", "lane": "L1"},
         "grouping": {"enabled": true, "maxGapPixels": 60, "require": ["GS1-128"]},
         "decision": {"enabled": true, "deadlineMs": 150}}
        """#.write(toFile: config, atomically: true, encoding: .utf8)
        let replay = try ReplayHarness.replay(clip, arguments: ["--config", config, "--sightings-only"])
        #expect(replay.result.status == 0, "\(replay.result.stderr)")
        let parcels = replay.events.filter { $0["type"] == .string("parcel") }
        var boxes: [Int: Set<String>] = [:]
        for code in expected { boxes[code.item, default: []].insert(code.value) }
        func values(_ parcel: JSONValue) -> [String] {
            guard case .array(let codes) = parcel["codes"] else { return [] }
            return codes.compactMap { $0["value"]?.stringValue }
        }
        for parcel in parcels where !values(parcel).isEmpty {
            #expect(
                boxes.values.contains { Set(values(parcel)).isSubset(of: $0) }, "codes of two boxes: \(values(parcel))")
        }
        let inParcels = parcels.flatMap { parcel -> [String] in
            guard case .array(let codes) = parcel["codes"] else { return [] }
            return codes.compactMap { $0["trackId"]?.stringValue }
        }
        let sightings = replay.sightings.compactMap { $0["trackId"]?.stringValue }
        let sightingsValues = Set(replay.sightings.compactMap { $0["value"]?.stringValue })
        #expect(inParcels.sorted() == sightings.sorted(), "each sighting in exactly one parcel")
        // Every box with a code read is exactly one parcel holding every code read on it: its
        // labels are never split into parcels of their own (the two identical boxes are two).
        let readable = boxes.values.filter { box in box.contains { sightingsValues.contains($0) } }
        let read = parcels.filter { !values($0).isEmpty }
        #expect(read.count == readable.count, "\(read.map(values)) for \(readable.count) boxes read")
        for box in readable {
            let whole = box.intersection(sightingsValues)
            #expect(read.contains { Set(values($0)) == whole }, "box \(box.sorted()) split: \(read.map(values))")
        }
        // The box whose SSCC is torn: its EAN-13 without the GS1-128.
        let torn = parcels.filter { values($0).contains("8712345678906") }
        #expect(torn.count == 1)
        #expect(torn.first?["missing"] == .array([.string("GS1-128")]))
        #expect(torn.first?["complete"] == .bool(false))
        // Every no-read is reported in exactly one parcel (its own when no parcel is beside it).
        let noReads = replay.events.filter { $0["type"] == .string("noread") }.compactMap { $0["eventId"]?.stringValue }
        let reported = parcels.flatMap { parcel -> [String] in
            guard case .array(let ids) = parcel["noReads"] else { return [] }
            return ids.compactMap(\.stringValue)
        }
        #expect(!noReads.isEmpty, "the unreadable box")
        // A no-read is counted in a parcel of codes only on the box it is on: here only the box
        // whose SSCC is torn has both.
        for parcel in parcels where !values(parcel).isEmpty && parcel["noReads"] != .array([]) {
            #expect(values(parcel).contains("8712345678906"), "a no-read in another box's parcel: \(values(parcel))")
        }
        #expect(reported.sorted() == noReads.sorted())
        #expect(
            parcels.filter { $0["noRead"] == .bool(true) }.allSatisfy { parcel in
                guard case .array(let ids) = parcel["noReads"] else { return false }
                return !ids.isEmpty
            })

        // One decision per parcel, naming it: divert with missing-required for an incomplete
        // parcel, with no-read for a parcel no code was read on, pass for the others.
        let decisions = replay.events.filter { $0["type"] == .string("decision") }
        #expect(decisions.count == parcels.count)
        for parcel in parcels {
            let id = parcel["parcelId"]?.stringValue ?? ""
            let mine = decisions.filter { $0["parcelId"]?.stringValue == id }
            try #require(mine.count == 1, "decisions of \(id): \(mine.count)")
            let decision = mine[0]
            var reasons: [JSONValue] = []
            if parcel["noRead"] == .bool(true) { reasons.append(.string("no-read")) }
            if parcel["missing"] != .array([]) { reasons.append(.string("missing-required")) }
            #expect(decision["reasons"] == .array(reasons), "\(id)")
            #expect(decision["action"] == .string(reasons.isEmpty ? "pass" : "divert"), "\(id)")
            #expect(decision["closedAt"] == parcel["time"] && decision["lane"] == .string("L1"))
        }
        // No false divert: only the torn box and the unreadable one.
        #expect(decisions.filter { $0["action"] == .string("divert") }.count == 2, "\(decisions)")
        // The unreadable box lacks its required code too.
        #expect(
            decisions.contains {
                $0["reasons"] == .array([.string("no-read"), .string("missing-required")])
                    && $0["action"] == .string("divert")
            }, "the unreadable box is diverted")
        #expect(
            decisions.contains { decision in
                guard case .array(let codes) = decision["codes"] else { return false }
                return decision["reasons"] == .array([.string("missing-required")])
                    && codes.contains { $0["value"] == .string("8712345678906") }
            }, "the box whose SSCC is torn is diverted")
    }
}
