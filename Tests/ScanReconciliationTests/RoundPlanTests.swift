import ScanCore
import ScanEvents
import ScanReconciliation
import ScanTestTiming
import ScanTesting
import Testing

/// A reconciliation round as a pure function: snapshots built by hand, the changes checked, no
/// store and no clock.
@Suite("reconciliation round plan", .timed)
struct RoundPlanTests {
    /// dc1's lane L1 (`SampleTopology.laneL1`, margin 4.5 s) and pack station pack-1 (cam-9).
    static let topology = SampleTopology.laneL1(stations: [Topology.Station(id: "pack-1", cameras: ["cam-9"])])
    static let t0 = Timestamp(milliseconds: 1_795_800_000_000)

    static func sighting(_ track: String, camera: String, at offset: Int64, accepted: Bool = true)
        -> UnreconciledSighting
    {
        UnreconciledSighting(
            eventId: track + ".sighting", site: "dc1", camera: camera, trackId: track, symbology: "EAN-13",
            value: "4006381333931", valueEncoding: "text", accepted: accepted,
            firstSeen: t0.adding(milliseconds: offset),
            lastSeen: t0.adding(milliseconds: offset + 200))
    }

    /// An open pass of one cam-1 sighting at t0, last changed by the store at `updatedAt`.
    static func openPass(updatedAt: Timestamp, now: Timestamp) -> RoundSnapshot {
        var snapshot = RoundSnapshot(now: now, topology: topology)
        var pass = ItemPass(
            itemId: "item-1", site: "dc1", lane: "L1", symbology: "EAN-13", value: "4006381333931",
            valueEncoding: "text")
        pass.members = [PassMember(eventId: "a.sighting", camera: "cam-1", trackId: "a", firstSeen: t0, lastSeen: t0)]
        snapshot.candidatePasses = [pass]
        snapshot.passesUpdatedAt = ["item-1": updatedAt]
        return snapshot
    }

    @Test("a quiet lane closes by the snapshot's clock: the store's now against when the store last changed the pass")
    func quietLaneByTheStoresClock() {
        let now = Self.t0.adding(milliseconds: 60_000)
        let quiet = RoundPlan.plan(Self.openPass(updatedAt: now.adding(milliseconds: -4_501), now: now)) { "new" }
        #expect(quiet.passes.map(\.pass.closed) == [true])
        #expect(quiet.passes.first?.missing == ["cam-2"])
        #expect(quiet.counts.passesClosed == 1)
        let recent = RoundPlan.plan(Self.openPass(updatedAt: now.adding(milliseconds: -4_499), now: now)) { "new" }
        #expect(recent.passes.isEmpty)
        #expect(recent.isEmpty)
    }

    @Test("a parcel whose code's sighting is placed in the same round gets that pass's item id, and waits for none")
    func parcelSeesThisRoundsPasses() throws {
        var snapshot = RoundSnapshot(now: Self.t0.adding(milliseconds: 1_000), topology: Self.topology)
        snapshot.sightings = [Self.sighting("a", camera: "cam-1", at: 0)]
        let parcel = LaneParcel(
            eventId: "p.parcel", parcelId: "p", camera: "cam-1", firstSeen: Self.t0,
            lastSeen: Self.t0.adding(milliseconds: 200),
            codes: [ParcelCode(symbology: "EAN-13", value: "4006381333931", valueEncoding: nil, itemId: nil)],
            missing: [])
        snapshot.parcels = [UnmergedParcel(site: "dc1", parcel: parcel, trackIds: ["a"], received: snapshot.now)]
        // The snapshot was read before the round placed the sighting: not reconciled yet.
        snapshot.sightingStates = ["a": SightingState(reconciled: false, accepted: true, itemId: nil)]
        var ids = 0
        let changes = RoundPlan.plan(snapshot) {
            ids += 1
            return "id-\(ids)"
        }
        #expect(changes.members.map(\.itemId) == ["id-1"])
        #expect(changes.parcelsMerged == ["p.parcel"])
        let merged = try #require(changes.parcelPasses.first?.pass)
        #expect(merged.passId == "id-2")
        #expect(merged.members.first?.codes.first?.itemId == "id-1")
    }

    @Test("sessions: each taken once; one whose pack record exists, or a second of the same session, makes none")
    func sessionsTakenOnce() throws {
        func session(_ id: String, eventId: String) throws -> CompletedSession {
            let body = #"""
                {"type": "session.completed", "eventId": "\#(eventId)", "site": "dc1", "camera": "cam-9",
                 "time": "\#(Self.t0)", "sessionId": "\#(id)", "reason": "command", "startedAt": "\#(Self.t0)",
                 "trigger": "command", "orderId": "ORD-1", "station": "pack-1",
                 "codes": [{"value": "111", "symbology": "EAN-13", "trackIds": ["t"], "count": 1}]}
                """#
            let event = try SessionEvent.parse(try JSONValue.parse(Array(body.utf8)))
            return CompletedSession(eventId: eventId, site: "dc1", camera: "cam-9", event: event)
        }
        var snapshot = RoundSnapshot(now: Self.t0, topology: Self.topology)
        snapshot.sessions = [
            try session("s1", eventId: "s1.a"), try session("s1", eventId: "s1.b"), try session("s2", eventId: "s2.a"),
        ]
        snapshot.packedSessions = ["s2"]
        snapshot.orders = [
            OrderKey(site: "", orderId: "ORD-1"): StoredOrder(lines: [OrderLine(line: 1, code: "111", expected: 1)])
        ]
        let changes = RoundPlan.plan(snapshot) { "new" }
        #expect(changes.sessionsTaken.map(\.eventId) == ["s1.a", "s1.b", "s2.a"])
        #expect(changes.packs.map(\.sessionId) == ["s1"])
        #expect(changes.packs.first?.result.verdict == .complete)
        // A cancelled order of the site stands over the one for every site: unknown.
        snapshot.packedSessions = []
        snapshot.orders[OrderKey(site: "dc1", orderId: "ORD-1")] = StoredOrder(cancelled: true, lines: [])
        #expect(RoundPlan.plan(snapshot) { "new" }.packs.map(\.result.verdict) == [.unknownOrder, .unknownOrder])
    }

    @Test(
        "the windows a store reads: one per lane around its no-reads, and the parcel passes around the waiting parcels")
    func readWindows() {
        let noReads = [
            UnsettledNoRead(
                eventId: "n1", site: "dc1", camera: "cam-2", firstSeen: Self.t0.adding(milliseconds: 1_500),
                received: Self.t0),
            UnsettledNoRead(
                eventId: "n2", site: "dc1", camera: "cam-1", firstSeen: Self.t0.adding(milliseconds: 10_000),
                received: Self.t0),
            UnsettledNoRead(eventId: "n3", site: "dc1", camera: "cam-9", firstSeen: Self.t0, received: Self.t0),
        ]
        // Due by the lane's watermark: n1 (1.5 s at cam-2, 0 at the lane's start) and n2 (10 s).
        let watermarks = [LaneKey(site: "dc1", lane: "L1"): Self.t0.adding(milliseconds: 20_000)]
        let windows = RoundSnapshot.noReadWindows(
            noReads, topology: Self.topology, watermarks: watermarks, now: Self.t0)
        #expect(
            windows == [
                LaneWindow(
                    lane: LaneKey(site: "dc1", lane: "L1"), from: Self.t0.adding(milliseconds: -4_500),
                    to: Self.t0.adding(milliseconds: 14_500))
            ])
        // Not due (the watermark not past n2 by the margin, stored just now): n1's window only.
        let early = RoundSnapshot.noReadWindows(
            noReads, topology: Self.topology,
            watermarks: [LaneKey(site: "dc1", lane: "L1"): Self.t0.adding(milliseconds: 10_000)], now: Self.t0)
        #expect(early.map(\.to) == [Self.t0.adding(milliseconds: 4_500)])
        let now = Self.t0.adding(milliseconds: 99_000)
        let none = RoundSnapshot.parcelPassWindow(parcels: [], measurements: [], topology: Self.topology, now: now)
        #expect(none.from == now && none.to == now)
    }
}
