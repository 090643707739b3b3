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

    /// A no-read of cam-1 a person resolved, naming parcel pass `passId`.
    static func coding(
        _ noRead: String, passId: String,
        code: CodedEvent.Code? = CodedEvent.Code(
            symbology: "CODE-128", value: "00340123450000000017", gs1: true)
    ) -> CodedEvent {
        CodedEvent(
            noReadId: noRead, site: "dc1", lane: "L1", camera: "cam-1", outcome: code == nil ? .noLabel : .keyed,
            code: code, keyedBy: "maria", keyedAt: t0.adding(milliseconds: 90_000), noReadFirstSeen: t0,
            itemId: nil, parcelPassId: passId)
    }

    /// A parcel pass of both cameras' parcels of a box nobody read, which missed its GS1-128.
    static func unreadPass(closed: Bool) -> ParcelPass {
        var pass = ParcelPass(passId: "pp-1", site: "dc1", lane: "L1")
        for (camera, offset) in [("cam-1", Int64(0)), ("cam-2", Int64(1_500))] where closed || camera == "cam-1" {
            pass.members.append(
                LaneParcel(
                    eventId: "\(camera)-box.parcel", parcelId: "\(camera)-box", camera: camera,
                    firstSeen: t0.adding(milliseconds: offset), lastSeen: t0.adding(milliseconds: offset + 300),
                    codes: [], missing: ["GS1-128"]))
        }
        pass.closed = closed
        pass.revision = closed ? 1 : 0
        return pass
    }

    @Test(
        "a keyed no-read gives its closed parcel pass revision 2 holding the code marked keyed, once; without a symbology it is a coding only; a pass gone takes it without one"
    )
    func codingsGoToTheirParcelPasses() throws {
        var snapshot = RoundSnapshot(now: Self.t0.adding(milliseconds: 100_000), topology: Self.topology)
        snapshot.parcelPasses = [Self.unreadPass(closed: true)]
        let keyed = Self.coding("n1", passId: "pp-1")
        let free = Self.coding("n2", passId: "pp-1", code: CodedEvent.Code(symbology: nil, value: "LP-7781"))
        let gone = Self.coding("n3", passId: "pp-dropped")
        snapshot.codings = [keyed, free, gone]
        let changes = RoundPlan.plan(snapshot) { "new" }
        #expect(changes.codingsApplied == [keyed, free, gone])
        #expect(changes.counts.codingsApplied == 2)
        #expect(changes.decisions.isEmpty, "the decision made as it closed stands")
        let pass = try #require(changes.parcelPasses.first?.pass)
        #expect(changes.parcelPasses.count == 1 && pass.revision == 3, "one revision per coding")
        #expect(pass.codings.map(\.noReadId) == ["n1", "n2"])
        let event = pass.event(camerasExpected: 2)
        #expect(
            event.codes == [
                ParcelCode(
                    symbology: "CODE-128", value: "00340123450000000017", valueEncoding: nil, itemId: nil,
                    keyedFor: "n1")
            ], "the keyed code naming a symbology, marked with its no-read")
        #expect(event.missing.isEmpty && event.complete && !event.noRead, "the keyed SSCC is its GS1-128")
        let parsed = try ParcelPassEvent.parse(try JSONValue.parse(event.json))
        #expect(parsed == event)
        #expect(parsed.codings.map(\.code) == [keyed.code, free.code])

        // Given already (the round that gave it lost its marking): not twice.
        var again = snapshot
        again.parcelPasses = [pass]
        again.codings = [keyed]
        let repeated = RoundPlan.plan(again) { "new" }
        #expect(repeated.parcelPasses.isEmpty && repeated.counts.codingsApplied == 0)
        #expect(repeated.codingsApplied == [keyed])
    }

    @Test("a coding for a parcel pass still open joins it without a revision and keeps the lane from calling it quiet")
    func codingForAnOpenPass() throws {
        var snapshot = RoundSnapshot(now: Self.t0.adding(milliseconds: 100_000), topology: Self.topology)
        snapshot.parcelPasses = [Self.unreadPass(closed: false)]
        snapshot.parcelPassesUpdatedAt = ["pp-1": Self.t0]
        snapshot.codings = [Self.coding("n1", passId: "pp-1", code: nil)]
        let changes = RoundPlan.plan(snapshot) { "new" }
        let pass = try #require(changes.parcelPasses.first?.pass)
        #expect(!pass.closed && pass.revision == 0 && pass.codings.map(\.outcome) == [.noLabel])
        #expect(pass.codes.isEmpty && pass.missing == ["GS1-128"], "a no-label adds no code")
        // The next round, nothing joining: quiet since the store changed it, it closes with it.
        snapshot.parcelPasses = [pass]
        snapshot.codings = []
        let next = RoundPlan.plan(snapshot) { "new" }
        #expect(next.parcelPasses.map(\.pass.revision) == [1])
        #expect(next.parcelPasses.first?.pass.codings.count == 1)
    }
}
