import Foundation
import Logging
import ScanCore
import ScanEvents
import ScanPostgres
import ScanReconciliation
import ScanTestSupport
import ScanTestTiming
import ScanTesting
import Testing

@testable import ScanAggregator

/// No-reads resolved by a person (video coding): stored once by `NoReadCodingStore` (what
/// `scanadmin noreads resolve` calls), published once by the aggregator's outbox as a `coded`
/// result on the lane's subject, against the real PostgreSQL and nats-server.
@Suite(
    "no-reads resolved by a person", .timed,
    .enabled(if: TestEnvironment.natsEnabled && TestEnvironment.postgresEnabled))
struct NoReadCodingTests {
    typealias W = IngestTests

    @Test(
        "a keyed code and a no-label go out once each on coded.<site>.<lane>, naming the item and parcel pass; no lane, twice, unknown: refused"
    )
    func codedResults() throws {
        let world = try W.world()
        defer { world.drop() }
        try SiteStore(connection: world.database).load(
            try Topology.parse(Array(ReconcileTests.topology.utf8), file: "t.json"))
        let prefix = world.settings.prefix
        let base = ReconcileTests.base
        func publish(_ family: String, _ camera: String, _ bytes: [UInt8], _ id: String) throws {
            _ = try world.jetStream.publish(
                subject: "\(prefix).v1.\(family).dc1.\(camera)", bytes: bytes, messageID: id)
        }
        // One box: cam-01 and cam-03 read its EAN-13, cam-02 sees its label but cannot read it (a
        // no-read on cam-02's parcel of the box).
        // The lane's cameras are 1.5 s apart (cam-02 1.5 s after cam-01, cam-03 1.5 s after cam-02).
        let seen = base.adding(milliseconds: 1_500)
        for (n, camera, time) in [(1, "cam-01", base), (3, "cam-03", base.adding(milliseconds: 3_000))] {
            try publish(
                "sighting", camera, W.sighting(n, value: "4006381333931", camera: camera, firstSeen: time), "s\(n)")
            try publish(
                "parcel", camera,
                SampleEvents.parcel(
                    "\(camera)-box", camera: camera, firstSeen: time,
                    codes: [(track: "\(camera)-run-\(n)", value: "4006381333931", status: "accepted")]),
                "p\(n)")
        }
        try publish(
            "noread", "cam-02", ReconcileTests.noRead("nr-box", camera: "cam-02", at: seen.adding(milliseconds: 60)),
            "nr-box")
        try publish(
            "parcel", "cam-02",
            SampleEvents.parcel("cam-02-box", camera: "cam-02", firstSeen: seen, codes: [], noReads: ["nr-box"]), "p2")
        // Later, a label nobody read (no parcel), and one at the pack station (on no lane).
        try publish(
            "noread", "cam-02",
            ReconcileTests.noRead("nr-unread", camera: "cam-02", at: base.adding(milliseconds: 30_000)),
            "nr-unread")
        try publish("noread", "cam-10", ReconcileTests.noRead("nr-station", camera: "cam-10", at: base), "nr-station")
        // An item further on moves the lane past all of it.
        try publish(
            "sighting", "cam-01",
            W.sighting(9, value: "5012345678900", camera: "cam-01", firstSeen: base.adding(milliseconds: 90_000)), "s9")

        let reconciler = try Reconciler(settings: world.settings, logger: Logger(label: "test"))
        try ReconcileTests.settle(world, [reconciler]) {
            try W.count(world.database, "SELECT count(*) FROM noreads WHERE settled") == 3
                && W.count(world.database, "SELECT count(*) FROM parcels WHERE NOT merged") == 0
                && W.count(world.database, "SELECT count(*) FROM parcel_passes WHERE closed_at IS NOT NULL") >= 1
        }
        let items = try world.database.query("SELECT item_id FROM item_passes WHERE value = '4006381333931'").rows
        try #require(items.count == 1, "cam-01 and cam-03 read one item")
        let itemId = try #require(items[0][0])
        let passId = try #require(
            try world.database.query(
                "SELECT pass_id FROM parcel_passes WHERE members @> '[{\"parcelId\": \"cam-02-box\"}]'"
            ).rows.first?[0] ?? nil)

        let store = NoReadCodingStore(connection: world.database)
        let code = try KeyedCode.check("(00)340123450000000017", symbology: "GS1-128", referenceYear: 2026)
        let keyed = try store.resolve(id: "nr-box", .init(outcome: .keyed, code: code, by: "maria <b>"))
        #expect(keyed.lane == "L1" && keyed.camera == "cam-02" && keyed.outcome == .keyed)
        #expect(keyed.itemId == itemId, "the item pass cam-01 and cam-03 read")
        #expect(keyed.parcelPassId == passId, "the parcel pass holding cam-02's parcel of the box")
        #expect(keyed.code?.value == "00340123450000000017" && keyed.code?.gs1 == true)
        #expect(keyed.code?.gs1Elements == [GS1ElementStrings.Element(ai: "00", value: "340123450000000017")])
        let unlabelled = try store.resolve(id: "nr-unread", .init(outcome: .noLabel, code: nil, by: "maria <b>"))
        #expect(unlabelled.itemId == nil && unlabelled.parcelPassId == nil && unlabelled.code == nil)

        #expect(throws: NoReadCodingStore.ResolveError.noLane("nr-station", camera: "cam-10")) {
            try store.resolve(id: "nr-station", .init(outcome: .notAParcel, code: nil, by: "maria"))
        }
        #expect {
            try store.resolve(id: "nr-box", .init(outcome: .noLabel, code: nil, by: "joe"))
        } throws: { error in
            guard case .alreadyResolved("nr-box", "keyed", "maria <b>", _)? = error as? NoReadCodingStore.ResolveError
            else { return false }
            return true
        }
        let hostile = "x'; DROP TABLE noread_codings; --"
        #expect(throws: NoReadCodingStore.ResolveError.noSuchNoRead(hostile)) {
            try store.resolve(id: hostile, .init(outcome: .noLabel, code: nil, by: "joe"))
        }
        #expect(try W.count(world.database, "SELECT count(*) FROM noread_codings") == 2)
        #expect(
            try world.database.query("SELECT DISTINCT db_role = current_user FROM noread_codings").rows == [["t"]],
            "the login that stored it, kept by the database")

        try ReconcileTests.settle(world, [reconciler]) {
            try W.count(world.database, "SELECT count(*) FROM noread_codings WHERE published") == 2
        }
        // Rounds after it publish nothing again.
        for _ in 0..<2 { try reconciler.runOnce() }
        let events = try StreamReader.events(
            world.jetStream, stream: world.settings.subjects.resultsStream, subject: "\(prefix).v1.coded.>")
        #expect(events.map(\.subject) == ["\(prefix).v1.coded.dc1.L1", "\(prefix).v1.coded.dc1.L1"])
        #expect(events.map(\.msgId) == ["nr-box.coded", "nr-unread.coded"])
        #expect(try events.map { try CodedEvent.parse($0.event) } == [keyed, unlabelled])
        // The box's parcel pass went out again, now holding the keyed SSCC marked keyed.
        let revisions = try StreamReader.events(
            world.jetStream, stream: world.settings.subjects.resultsStream, subject: "\(prefix).v1.parcelpass.>"
        ).map { try ParcelPassEvent.parse($0.event) }.filter { $0.passId == passId }
        #expect(revisions.map(\.revision) == [1, 2])
        #expect(revisions.last?.codings == [ParcelPassEvent.Coding(keyed)])
        #expect(
            revisions.last?.codes.map(\.keyedFor) == [nil, "nr-box"],
            "the EAN-13 the cameras read, then the keyed SSCC")

        // What a WMS reads, checked against docs/schema/coded.schema.json.
        let python = TestEnvironment.repoRoot + "/.cache/venv/bin/python"
        try #require(
            FileManager.default.isExecutableFile(atPath: python), "run scripts/install-deps.sh (make test does)")
        let checked = try ProcessRunner.run(
            python,
            [
                TestEnvironment.repoRoot + "/scripts/wms_consumer.py", "--results", "--nats", world.settings.natsURL,
                "--prefix", prefix, "--idle", "1",
            ])
        let summary = try JSONValue.parse(checked.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(summary["coded"]?.intValue == 2, "\(checked.stdoutText) \(checked.stderr)")
        #expect(summary["parcelPasses"]?.intValue == 2, "\(checked.stdoutText)")
        #expect(summary["problems"] == .array([]), "\(checked.stdoutText)")
    }
}
