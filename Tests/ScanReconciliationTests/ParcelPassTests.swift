import ScanCore
import ScanReconciliation
import Testing

/// Parcel passes, pure: how a camera's parcel finds its pass, and what a pass says of its codes.
@Suite("parcel passes")
struct ParcelPassTests {
    static let lane = Topology.Lane(
        id: "L1",
        cameras: [
            Topology.LaneCamera(id: "top", offsetMilliseconds: 0),
            Topology.LaneCamera(id: "side", offsetMilliseconds: 1_000),
        ])

    static func parcel(_ camera: String, at ms: Int64, codes: [(String, String?)], missing: [String] = []) -> LaneParcel
    {
        LaneParcel(
            eventId: "\(camera)-\(ms)", parcelId: "\(camera)-\(ms)", camera: camera,
            firstSeen: Timestamp(milliseconds: ms),
            lastSeen: Timestamp(milliseconds: ms + 200),
            codes: codes.map { ParcelCode(symbology: "EAN-13", value: $0.0, valueEncoding: nil, itemId: $0.1) },
            missing: missing)
    }

    static func pass(_ members: [LaneParcel]) -> ParcelPass {
        var pass = ParcelPass(passId: "p", site: "dc1", lane: "L1")
        pass.members = members
        return pass
    }

    @Test("a shared item pass wins over time; else the nearest pass without this camera within the window; else none")
    func place() {
        let early = Self.pass([Self.parcel("top", at: 0, codes: [("A", "item-a")])])
        let close = Self.pass([Self.parcel("top", at: 400, codes: [("B", "item-b")])])
        let passes = [early, close]
        // The side camera's parcel 1.4 s later holds A: the early pass, though the other is nearer in time.
        #expect(
            ParcelMerging.place(
                Self.parcel("side", at: 1_400, codes: [("A", "item-a")]), lane: Self.lane, site: "dc1", passes: passes)
                == 0)
        // No shared code: the nearest in time (400 + 1000 offset).
        #expect(
            ParcelMerging.place(Self.parcel("side", at: 1_380, codes: []), lane: Self.lane, site: "dc1", passes: passes)
                == 1)
        // Another top parcel never joins a pass holding a top parcel; outside the window, none.
        #expect(
            ParcelMerging.place(Self.parcel("top", at: 410, codes: []), lane: Self.lane, site: "dc1", passes: passes)
                == nil)
        #expect(
            ParcelMerging.place(Self.parcel("side", at: 5_000, codes: []), lane: Self.lane, site: "dc1", passes: passes)
                == nil)
        #expect(
            ParcelMerging.place(
                Self.parcel("side", at: 1_400, codes: [("A", "item-a")]), lane: Self.lane, site: "dc2", passes: passes)
                == nil)
    }

    @Test("codes: the union, a code two cameras read once; missing: only what no camera read; no-read and complete")
    func codes() {
        let pass = Self.pass([
            Self.parcel("top", at: 0, codes: [("A", "item-a"), ("X", nil)], missing: ["GS1-128"]),
            Self.parcel("side", at: 1_000, codes: [("A", "item-a"), ("B", "item-b"), ("X", nil)], missing: []),
        ])
        #expect(pass.codes.map(\.value) == ["A", "X", "B"])
        #expect(pass.missing.isEmpty && pass.complete && !pass.noRead && pass.cameras == ["side", "top"])
        let unread = Self.pass([
            Self.parcel("top", at: 0, codes: [], missing: ["GS1-128"]),
            Self.parcel("side", at: 1_000, codes: [], missing: ["GS1-128"]),
        ])
        #expect(unread.noRead && !unread.complete && unread.missing == ["GS1-128"])
        #expect(
            ParcelMerging.isDue(unread, lane: Self.lane, watermark: Timestamp(milliseconds: 0)),
            "every camera sent its parcel")
        let alone = Self.pass([Self.parcel("top", at: 0, codes: [])])
        #expect(!ParcelMerging.isDue(alone, lane: Self.lane, watermark: Timestamp(milliseconds: 3_000)))
        #expect(
            ParcelMerging.isDue(alone, lane: Self.lane, watermark: Timestamp(milliseconds: 1_000 + 1_000 + 2_000 + 1)))
    }
}
