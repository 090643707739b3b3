import ScanAgentConfig
import ScanCore
import ScanEvents
import ScanReconciliation
import ScanTestTiming
import Testing

/// Parcel passes, pure: how a camera's parcel finds its pass, and what a pass says of its codes.
@Suite("parcel passes", .timed)
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

    @Test(
        "two boxes side by side at one moment: a parcel joins the pass of the box whose code it shares, never one its camera is in, and with byTime off never by time alone"
    )
    func sideBySide() {
        let lane = Topology.Lane(
            id: "L1",
            cameras: [
                Topology.LaneCamera(id: "top", offsetMilliseconds: 0),
                Topology.LaneCamera(id: "side", offsetMilliseconds: 0),
            ])
        // The side camera's parcel of box B came first; the top camera's parcel of box A (another
        // row, the same moment) holds a code the side camera read on A: not B's pass.
        let boxB = Self.pass([Self.parcel("side", at: 1_000, codes: [("B", "item-b")])])
        let topA = Self.parcel("top", at: 1_010, codes: [("A", "item-a")])
        #expect(ParcelMerging.place(topA, lane: lane, site: "dc1", passes: [boxB], byTime: false) == nil)
        #expect(ParcelMerging.place(topA, lane: lane, site: "dc1", passes: [boxB]) == 0, "by time, as before")
        // Its pass made, the side camera's parcel of A joins it by the shared code, not B's by time.
        let boxA = Self.pass([topA])
        #expect(
            ParcelMerging.place(
                Self.parcel("side", at: 1_005, codes: [("A", "item-a")]), lane: lane, site: "dc1",
                passes: [boxB, boxA],
                byTime: false) == 1)
        // A pass already holding a top parcel is never joined by another top parcel, shared code or
        // not (two identical boxes: the code's item passes may be one); of two that share it, the
        // nearer in time.
        let identical = [
            Self.pass([Self.parcel("side", at: 1_000, codes: [("C", "item-c")])]),
            Self.pass([Self.parcel("top", at: 1_600, codes: [("C", "item-c")])]),
            Self.pass([Self.parcel("side", at: 1_700, codes: [("C", "item-c")])]),
        ]
        #expect(
            ParcelMerging.place(
                Self.parcel("top", at: 1_650, codes: [("C", "item-c")]), lane: lane, site: "dc1", passes: identical)
                == 2)
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

    static let orders: [String: [OrderLine]] = [
        "ORD-7": [OrderLine(line: 1, code: "A", expected: 1), OrderLine(line: 2, code: "B", expected: 1)]
    ]

    /// The aggregator's decision for a pass of the two-camera lane: the top camera's parcel closed
    /// at 400 ms, the side camera's at `sideClosed`.
    static func decide(
        _ codes: [(String, String?)], missing: [String] = [], rejected: Bool = false, sideClosed: Int64 = 1_400,
        rules: Topology.LaneDecision, at now: Int64 = 1_500
    ) -> DecisionEvent {
        var top = Self.parcel("top", at: 0, codes: [], missing: missing)
        top.closedAt = Timestamp(milliseconds: 400)
        var side = Self.parcel("side", at: 1_000, codes: codes, missing: missing)
        side.closedAt = Timestamp(milliseconds: sideClosed)
        side.rejected = rejected
        return Self.pass([top, side]).decision(lane: Self.lane, rules: rules, at: Timestamp(milliseconds: now)) {
            Self.orders[$0]
        }
    }

    @Test(
        "the aggregator's decision: every reason found, divert only on the lane's divertOn, deadline from the last camera"
    )
    func decision() {
        let rules = Topology.LaneDecision(deadlineMilliseconds: 300, beltSpeed: 2, divertDistance: 3)
        let good = Self.decide([("A", "item-a")], rules: rules)
        #expect(good.action == .pass && good.reasons.isEmpty && good.decidedBy == "aggregator" && !good.late)
        #expect(good.camera == "side" && good.parcelId == "p" && good.eventId == "p.decision")
        #expect(good.closedAt == Timestamp(milliseconds: 1_400) && good.deadline == Timestamp(milliseconds: 1_700))
        #expect(good.divertAt == Timestamp(milliseconds: 1_200 + 1_500), "lastSeen + 3 m at 2 m/s")
        #expect(good.codes.map(\.value) == ["A"])

        let unread = Self.decide([], missing: ["GS1-128"], rules: rules)
        #expect(unread.action == .divert && unread.reasons == [.noRead, .missingRequired])
        #expect(Self.decide([("A", "item-a")], rejected: true, rules: rules).reasons == [.rejectedCode])
        // A reason the lane does not divert on is still reported, on a pass.
        var lenient = rules
        lenient.divertOn = [.noRead]
        let reported = Self.decide([("A", "item-a")], missing: ["GS1-128"], rules: lenient)
        #expect(reported.action == .pass && reported.reasons == [.missingRequired])
        // Made after its deadline: late, and still made.
        #expect(Self.decide([("A", "item-a")], rules: rules, at: 1_701).late)
        #expect(!Self.decide([("A", "item-a")], rules: rules, at: 1_700).late)
    }

    @Test("against orders: the first code naming a known order is its order; short, over and unknown orders divert")
    func decisionAgainstOrders() {
        var rules = Topology.LaneDecision()
        rules.checkOrders = true
        #expect(Self.decide([("ORD-7", nil), ("A", "a"), ("B", "b")], rules: rules).reasons.isEmpty)
        #expect(Self.decide([("A", "a"), ("ORD-7", nil), ("B", "b")], rules: rules).action == .pass, "any position")
        #expect(Self.decide([("ORD-7", nil), ("A", "a")], rules: rules).reasons == [.shortPack])
        #expect(Self.decide([("ORD-7", nil), ("A", "a"), ("B", "b"), ("C", "c")], rules: rules).reasons == [.overPack])
        #expect(
            Self.decide([("ORD-7", nil), ("A", "a"), ("C", "c")], rules: rules).reasons == [.shortPack, .overPack])
        let unknown = Self.decide([("ORD-8", nil), ("A", "a")], rules: rules)
        #expect(unknown.action == .divert && unknown.reasons == [.unknownOrder])
        // A no-read parcel is a no-read, not also an unknown order; without checkOrders, no order reason.
        #expect(Self.decide([], rules: rules).reasons == [.noRead])
        #expect(Self.decide([("ORD-8", nil)], rules: Topology.LaneDecision()).reasons.isEmpty)
    }

    @Test("a lane's decision object: read with every problem by path, and stored and read back unchanged")
    func laneDecisionConfig() throws {
        let good = #"""
            {"sites": [{"id": "dc1", "lanes": [{"id": "L1", "cameras": [{"id": "top"}, {"id": "side", "travelSeconds": 1}],
              "decision": {"deadlineSeconds": 0.8, "divertOn": ["no-read", "short-pack"], "checkOrders": true,
                           "beltSpeed": 1.5, "divertDistance": 4}}]}]}
            """#
        let topology = try Topology.parse(Array(good.utf8), file: "t.json")
        let decision = try #require(topology.lane(site: "dc1", id: "L1")?.decision)
        #expect(
            decision
                == Topology.LaneDecision(
                    deadlineMilliseconds: 800, divertOn: [.noRead, .shortPack], checkOrders: true, beltSpeed: 1.5,
                    divertDistance: 4))
        #expect(Topology.LaneDecision(stored: decision.json) == decision)
        #expect(topology.lane(site: "dc1", id: "L1").map { $0.decision != nil } == true)
        let bad = #"""
            {"sites": [{"id": "dc1", "lanes": [{"id": "L1", "cameras": [{"id": "top"}],
              "decision": {"deadlineSeconds": 0, "divertOn": ["no-read", "jam\u001b[2J"], "checkOrder": true}}]}]}
            """#
        do {
            _ = try Topology.parse(Array(bad.utf8), file: "t.json")
            Issue.record("a bad decision object was accepted")
        } catch {
            let paths = error.issues.map(\.path)
            #expect(paths.contains("sites[0].lanes[0].decision.deadlineSeconds"), "\(paths)")
            #expect(paths.contains("sites[0].lanes[0].decision.divertOn[1]"), "\(paths)")
            #expect(error.description.contains("checkOrder"), "\(error)")
            #expect(!error.description.contains("\u{1B}"), "a control character from the file is escaped")
        }
    }

    @Test("a measurement joins the pass that was at its device then, nearest within the window, one a pass")
    func measurementPlace() {
        var lane = Self.lane
        lane.measureOffsetMilliseconds = 2_000  // the dimensioner, 2 s past the top camera
        var first = Self.pass([Self.parcel("top", at: 0, codes: [("A", "a")])])
        first.passId = "first"
        var second = Self.pass([Self.parcel("top", at: 600, codes: [("B", "b")])])
        second.passId = "second"
        func measure(at ms: Int64, lane laneId: String = "L1") -> MeasureEvent {
            MeasureEvent(
                eventId: "m\(ms)", site: "dc1", lane: laneId, device: "dim-1", time: Timestamp(milliseconds: ms),
                length: 400)
        }
        #expect(ParcelMerging.place(measure(at: 2_100), lane: lane, passes: [first, second]) == 0)
        #expect(ParcelMerging.place(measure(at: 2_500), lane: lane, passes: [first, second]) == 1)
        #expect(
            ParcelMerging.place(measure(at: 4_000), lane: lane, passes: [first, second]) == nil, "outside the window")
        #expect(ParcelMerging.place(measure(at: 2_100, lane: "L2"), lane: lane, passes: [first, second]) == nil)
        first.measurement = measure(at: 2_000)
        #expect(ParcelMerging.place(measure(at: 2_100), lane: lane, passes: [first, second]) == 1, "one a pass")
        #expect(first.event(camerasExpected: 2).measurement?.length == 400)
    }
}
