import Foundation
import ScanCore
import ScanPostgres
import ScanServices
import ScanTestSupport
import ScanTestTiming
import Testing
import ScanEvents
import ScanReconciliation

/// `scanadmin report`, `topology` and `orders` against a real PostgreSQL with seeded data.
@Suite("scanadmin report, topology and orders", .timed, .enabled(if: TestEnvironment.postgresEnabled))
struct ReportCommandTests {
    static var scanadmin: String { TestEnvironment.productsDirectory + "/scanadmin" }

    struct Seeded {
        var database: PGConnection
        var environment: [String: String]
        var drop: () -> Void

        func run(_ arguments: [String]) throws -> ProcessResult {
            try ProcessRunner.run(ReportCommandTests.scanadmin, arguments, environment: environment)
        }
    }

    static func database() throws -> Seeded {
        let migrated = try MigratedDatabase(prefix: "st_report")
        return Seeded(
            database: migrated.connection,
            environment: [
                "SCANTRACK_PG": migrated.dsn, "SCANTRACK_MIGRATIONS": TestEnvironment.repoRoot + "/migrations",
                "SCANTRACK_CONFIG": "",
            ],
            drop: migrated.drop)
    }

    static let topology = #"""
        {"version": 1, "sites": [{"id": "dc1", "timeZone": "Europe/Zurich",
          "lanes": [{"id": "L1", "cameras": [{"id": "cam-01"}, {"id": "cam-02", "travelSeconds": 1.5}]}],
          "stations": [{"id": "pack-01", "cameras": ["cam-10"]}]}]}
        """#

    static func sighting(
        _ db: PGConnection, _ id: String, camera: String, at time: String, value: String, rule: String? = nil
    ) throws {
        try db.query(
            """
            INSERT INTO sightings (event_id, site, camera, track_id, symbology, value, status, rule_id, lane, first_seen, last_seen,
                                   first_frame, last_frame, frames, decodes, event_time, body)
            VALUES ($1, 'dc1', $2, $1, 'EAN-13', $3, $4, $5, $6, $7, $7, 0, 9, 10, 8, $7, '{}')
            """,
            [
                .text(id), .text(camera), .text(value), .text(rule == nil ? "accepted" : "rejected"),
                .optionalText(rule),
                camera == "cam-10" ? .null : .text("L1"), .text(time),
            ])
    }

    static func pass(_ db: PGConnection, _ id: String, at time: String, seen: Int) throws {
        try db.query(
            """
            INSERT INTO item_passes (item_id, site, lane, symbology, value, first_seen, last_seen, cameras_expected, cameras_seen,
                                     revision, published_revision, closed_at)
            VALUES ($1, 'dc1', 'L1', 'EAN-13', '4006381333931', $2, $2, 2, $3, 1, 1, now())
            """, [.text(id), .text(time), .int(seen)])
    }

    static func pack(_ db: PGConnection, _ id: String, at time: String, verdict: String) throws {
        try db.query(
            """
            INSERT INTO pack_records (session_id, site, station, camera, order_id, verdict, started_at, completed_at, items)
            VALUES ($1, 'dc1', 'pack-01', 'cam-10', 'ORD-1', $2, $3, $3, 2)
            """, [.text(id), .text(verdict), .text(time)])
    }

    static func heartbeat(_ db: PGConnection, _ id: String, at time: String, dropped: Int) throws {
        try db.query(
            """
            INSERT INTO heartbeats (event_id, site, camera, run_id, time, frames_dropped, body)
            VALUES ($1, 'dc1', 'cam-01', 'r1', $2, $3, '{}')
            """, [.text(id), .text(time), .int(dropped)])
    }

    /// The night of the autumn DST change in Zurich: 22:00 CEST to 06:00 CET, nine hours.
    static func seedNight(_ db: PGConnection) throws {
        try SiteStore(connection: db).load(try Topology.parse(Array(topology.utf8), file: "t.json"))
        try sighting(db, "late-1", camera: "cam-01", at: "2026-10-24T19:59:59.999Z", value: "E")  // 21:59 CEST: late
        try sighting(db, "n1", camera: "cam-01", at: "2026-10-24T20:30:00.000Z", value: "A")  // 22:30 CEST
        try sighting(db, "n2", camera: "cam-01", at: "2026-10-25T00:30:00.000Z", value: "A")  // 02:30 CEST
        try sighting(db, "n3", camera: "cam-02", at: "2026-10-25T01:30:00.000Z", value: "B")  // 02:30 CET again
        try sighting(db, "n4", camera: "cam-02", at: "2026-10-25T04:59:00.000Z", value: "C", rule: "unwanted-C")
        try sighting(
            db, "n5", camera: "cam-10", at: "2026-10-25T03:00:00.000Z", value: "A'; DROP TABLE sightings; --",
            rule: "no-quotes")
        try sighting(db, "early-1", camera: "cam-01", at: "2026-10-25T05:00:00.000Z", value: "D")  // 06:00 CET: early
        try pass(db, "p1", at: "2026-10-24T20:30:00.000Z", seen: 2)
        try pass(db, "p2", at: "2026-10-25T00:30:00.000Z", seen: 1)
        try pass(db, "p3", at: "2026-10-25T05:30:00.000Z", seen: 2)
        try pack(db, "s1", at: "2026-10-24T21:00:00.000Z", verdict: "complete")
        try pack(db, "s2", at: "2026-10-24T22:00:00.000Z", verdict: "short")
        try pack(db, "s3", at: "2026-10-25T02:00:00.000Z", verdict: "unknown-order")
        try pack(db, "s4", at: "2026-10-25T06:00:00.000Z", verdict: "over")
        try heartbeat(db, "h1", at: "2026-10-24T20:10:00.000Z", dropped: 3)
        try heartbeat(db, "h2", at: "2026-10-24T20:10:05.000Z", dropped: 4)
        try heartbeat(db, "h3", at: "2026-10-24T20:20:05.000Z", dropped: 10)
    }

    @Test(
        "a night shift across the DST change: every figure as the test inserted it, in json, csv and an 80-column table"
    )
    func nightShift() throws {
        let seeded = try Self.database()
        defer { seeded.drop() }
        try Self.seedNight(seeded.database)
        let result = try seeded.run(["report", "--shift", "2026-10-24/night", "--format", "json"])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try JSONValue.parse(result.stdoutText)
        #expect(report["timeZone"] == .string("Europe/Zurich"))
        guard case .array(let shifts)? = report["shifts"], let night = shifts.first else {
            Issue.record("no shifts in \(result.stdoutText)")
            return
        }
        #expect(shifts.count == 1)
        #expect(night["start"] == .string("2026-10-24T22:00:00+02:00"))
        #expect(night["end"] == .string("2026-10-25T06:00:00+01:00"))
        #expect(night["sightings"]?.intValue == 5)
        #expect(night["accepted"]?.intValue == 3)
        #expect(night["rejected"]?.intValue == 2)
        #expect(night["uniqueCodes"]?.intValue == 2)
        #expect(night["itemPasses"]?.intValue == 2)
        #expect(night["partialPasses"]?.intValue == 1)
        #expect(night["packs"]?["complete"]?.intValue == 1)
        #expect(night["packs"]?["short"]?.intValue == 1)
        #expect(night["packs"]?["unknownOrder"]?.intValue == 1)
        #expect(night["packs"]?["over"]?.intValue == 0)
        #expect(
            night["topRejectRules"]
                == .array([
                    .object([("rule", .string("no-quotes")), ("count", .number(1))]),
                    .object([("rule", .string("unwanted-C")), ("count", .number(1))]),
                ]))
        guard case .array(let cameras)? = night["cameras"] else {
            Issue.record("missing in the report")
            return
        }
        #expect(cameras.map { $0["camera"]?.stringValue ?? "" } == ["cam-01", "cam-02", "cam-10"])
        #expect(cameras[1]["accepted"]?.intValue == 1 && cameras[1]["rejected"]?.intValue == 1)
        guard case .array(let hourly)? = night["hourly"] else {
            Issue.record("missing in the report")
            return
        }
        // Both 02:30s (CEST, then CET an hour later) fall in the local hour 02:00.
        #expect(hourly.map { $0["hour"]?.stringValue ?? "" } == ["2026-10-24 22:00", "2026-10-25 02:00"])
        #expect(hourly.map { $0["sightings"]?.intValue ?? -1 } == [1, 2])
        guard case .array(let health)? = night["health"], let camera = health.first else {
            Issue.record("missing in the report")
            return
        }
        #expect(camera["heartbeats"]?.intValue == 3)
        #expect(camera["maxGapSeconds"]?.intValue == 600)
        #expect(camera["framesDropped"]?.intValue == 7)

        // The same figures in CSV, under the same names.
        let csv = try seeded.run(["report", "--shift", "2026-10-24/night", "--format", "csv"])
        #expect(csv.status == 0)
        let rows = csv.stdoutText.split(separator: "\n").map {
            $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
        #expect(rows.first == ["shift", "start", "end", "section", "key", "figure", "value"])
        func figure(_ section: String, _ key: String, _ name: String) -> String? {
            rows.first { $0.count == 7 && $0[3] == section && $0[4] == key && $0[5] == name }?[6]
        }
        #expect(figure("totals", "", "sightings") == "5")
        #expect(figure("totals", "", "partialPasses") == "1")
        #expect(figure("packs", "", "unknownOrder") == "1")
        #expect(figure("cameras", "cam-02", "rejected") == "1")
        #expect(figure("health", "cam-01", "framesDropped") == "7")

        let table = try seeded.run(["report", "--shift", "2026-10-24/night"])
        #expect(table.status == 0)
        #expect(table.stdoutText.contains("Shift 2026-10-24/night"))
        #expect(table.stdoutText.contains("(1 seen by only some cameras of their lane)"))
        for line in table.stdoutText.split(separator: "\n") { #expect(line.count <= 80, "\(line)") }
    }

    /// A no-read of `camera` first seen at `time`, with a small picture.
    static func noRead(_ db: PGConnection, _ id: String, camera: String, at time: String, reason: String? = nil)
        throws
    {
        let png = Base64.encode([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(id.utf8))
        let json = """
            {"type": "noread", "eventId": "\(id)", "site": "dc1", "camera": "\(camera)", "time": "\(time)",
             "trackId": "\(id)", "firstSeen": "\(time)", "lastSeen": "\(time)", "firstFrame": 1, "lastFrame": 9,
             "frames": 9, "box": {"first": [[0, 0], [10, 10]], "last": [[40, 0], [50, 10]]}, "family": "linear",
             "image": "\(id).png", "imagePng": "\(png)"\(reason.map { #", "reason": "\#($0)""# } ?? "")}
            """
        try EventStore(connection: db).insertNoReads([try NoReadEvent.parse(try JSONValue.parse(json))])
    }

    @Test("no-reads: read rates per camera and lane in the report; noreads list and show write the picture")
    func noReads() throws {
        let seeded = try Self.database()
        defer { seeded.drop() }
        try Self.seedNight(seeded.database)
        try Self.noRead(seeded.database, "nr-1", camera: "cam-01", at: "2026-10-24T21:00:00.000Z", reason: "too-small")
        try Self.noRead(seeded.database, "nr-2", camera: "cam-01", at: "2026-10-25T01:00:00.000Z", reason: "too-small")
        try Self.noRead(seeded.database, "nr-3", camera: "cam-02", at: "2026-10-25T02:00:00.000Z")
        try Self.noRead(seeded.database, "nr-late", camera: "cam-02", at: "2026-10-25T06:00:00.000Z")  // early shift
        // Stored twice (a redelivery): still one.
        try Self.noRead(seeded.database, "nr-3", camera: "cam-02", at: "2026-10-25T02:00:00.000Z")

        let result = try seeded.run(["report", "--shift", "2026-10-24/night", "--format", "json"])
        #expect(result.status == 0, "\(result.stderr)")
        guard case .array(let shifts)? = try JSONValue.parse(result.stdoutText)["shifts"], let night = shifts.first
        else {
            Issue.record("no shifts in \(result.stdoutText)")
            return
        }
        #expect(night["noReads"]?.intValue == 3)
        #expect(night["readRate"]?.doubleValue == 0.625)  // 5 sightings, 3 no-reads
        guard case .array(let cameras)? = night["cameras"], case .array(let lanes)? = night["lanes"] else {
            Issue.record("cameras or lanes missing in \(result.stdoutText)")
            return
        }
        let cam01 = try #require(cameras.first { $0["camera"] == .string("cam-01") })
        #expect(cam01["sightings"]?.intValue == 2 && cam01["noReads"]?.intValue == 2)
        #expect(cam01["readRate"]?.doubleValue == 0.5)
        // Why, per camera: a reason the agent gave, `unknown` from an agent older than the field.
        #expect(cam01["noReadReasons"] == .object([("too-small", .number(2))]))
        let cam02 = try #require(cameras.first { $0["camera"] == .string("cam-02") })
        #expect(cam02["noReadReasons"] == .object([("unknown", .number(1))]))
        let cam10 = try #require(cameras.first { $0["camera"] == .string("cam-10") })
        #expect(cam10["noReads"]?.intValue == 0 && cam10["readRate"]?.doubleValue == 1)
        // Lane L1: cam-01 and cam-02, four sightings and three no-reads.
        #expect(lanes.count == 1)
        #expect(lanes.first?["lane"] == .string("L1") && lanes.first?["sightings"]?.intValue == 4)
        #expect(lanes.first?["noReads"]?.intValue == 3)
        #expect(lanes.first?["readRate"]?.doubleValue == 0.5714)
        #expect(lanes.first?["itemPasses"]?.intValue == 2 && lanes.first?["rejected"]?.intValue == 1)
        let table = try seeded.run(["report", "--shift", "2026-10-24/night"])
        #expect(table.stdoutText.contains("No-reads         3  read rate 62.5%"), "\(table.stdoutText)")
        #expect(table.stdoutText.contains("No-reads by reason\n  cam-01: too-small 2\n  cam-02: unknown 1\n"))
        let csv = try seeded.run(["report", "--shift", "2026-10-24/night", "--format", "csv"])
        #expect(csv.stdoutText.contains("cameras,cam-01,noReads.too-small,2"), "\(csv.stdoutText)")
        for line in table.stdoutText.split(separator: "\n") { #expect(line.count <= 80, "\(line)") }

        let listed = try seeded.run(["noreads", "--shift", "2026-10-24/night", "--format", "json"])
        #expect(listed.status == 0, "\(listed.stderr)")
        guard case .array(let rows) = try JSONValue.parse(listed.stdoutText) else {
            Issue.record("not a list: \(listed.stdoutText)")
            return
        }
        #expect(rows.map { $0["id"]?.stringValue ?? "" } == ["nr-1", "nr-2", "nr-3"])
        #expect(rows.first?["lane"] == .string("L1") && rows.first?["family"] == .string("linear"))
        let onlyCam02 = try seeded.run(["noreads", "list", "--shift", "2026-10-24/night", "--camera", "cam-02"])
        #expect(onlyCam02.stdoutText.contains("1 no-read(s)"), "\(onlyCam02.stdoutText)")

        let out = NSTemporaryDirectory() + TestEnvironment.uniqueName("noread") + ".png"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let shown = try seeded.run(["noreads", "show", "nr-2", "--out", out])
        #expect(shown.status == 0, "\(shown.stderr)")
        let written = try Data(contentsOf: URL(fileURLWithPath: out))
        #expect(Array(written) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array("nr-2".utf8))
        let missing = try seeded.run(["noreads", "show", "x'; DROP TABLE noreads; --", "--out", out])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("no no-read with id 'x'; DROP TABLE noreads; --'"), "\(missing.stderr)")
        #expect(try seeded.database.query("SELECT count(*) FROM noreads").rows.first?[0] == "4")
    }

    @Test(
        "noreads resolve: a keyed code checked by its symbology (a typo refused, exit 64), once per no-read; the report counts keyed reads apart"
    )
    func resolveNoReads() throws {
        let seeded = try Self.database()
        defer { seeded.drop() }
        try Self.seedNight(seeded.database)
        try Self.noRead(seeded.database, "nr-1", camera: "cam-01", at: "2026-10-24T21:00:00.000Z")
        try Self.noRead(seeded.database, "nr-2", camera: "cam-01", at: "2026-10-25T01:00:00.000Z")
        try Self.noRead(seeded.database, "nr-3", camera: "cam-02", at: "2026-10-25T02:00:00.000Z")

        let typo = try seeded.run(["noreads", "resolve", "nr-1", "--code", "4006381333932"])
        #expect(typo.status == 64, "\(typo.stdoutText)")
        #expect(typo.stderr.contains("should be 1"), "\(typo.stderr)")
        for arguments in [
            ["nr-1"], ["nr-1", "--code", "4006381333931", "--no-label"],
            ["nr-1", "--no-label", "--symbology", "EAN-13"],
            ["nr-1", "--no-label", "--by", "x\u{1B}[2J"],
            ["nr-1", "--code", "(00)340123450000000018", "--symbology", "GS1-128"],
        ] {
            let refused = try seeded.run(["noreads", "resolve"] + arguments)
            #expect(refused.status == 64, "\(arguments): \(refused.stdoutText)")
            #expect(!refused.stderr.contains("\u{1B}"), "escaped: \(refused.stderr)")
        }
        #expect(try seeded.database.query("SELECT count(*) FROM noread_codings").rows.first?[0] == "0")

        let keyed = try seeded.run(["noreads", "resolve", "nr-1", "--code", "4006381333931", "--by", "maria"])
        #expect(keyed.status == 0, "\(keyed.stderr)")
        #expect(keyed.stdoutText.contains("keyed a code '4006381333931' by maria"), "\(keyed.stdoutText)")
        let gs1 = try seeded.run([
            "noreads", "resolve", "nr-2", "--code", "(00)340123450000000017", "--symbology", "GS1-128", "--by", "maria",
        ])
        #expect(gs1.status == 0, "\(gs1.stderr)")
        let open = try seeded.run([
            "noreads", "list", "--shift", "2026-10-24/night", "--unresolved", "--format", "json",
        ])
        #expect(open.status == 0, "\(open.stderr)")
        guard case .array(let openRows) = try JSONValue.parse(open.stdoutText) else {
            Issue.record("not a list: \(open.stdoutText)")
            return
        }
        #expect(openRows.map { $0["id"] } == [.string("nr-3")])
        let none = try seeded.run(["noreads", "resolve", "nr-3", "--not-a-parcel", "--by", "joe"])
        #expect(none.status == 0, "\(none.stderr)")
        let again = try seeded.run(["noreads", "resolve", "nr-1", "--no-label", "--by", "joe"])
        #expect(again.status == 1)
        #expect(again.stderr.contains("already resolved (keyed) by 'maria'"), "\(again.stderr)")
        let hostile = try seeded.run(["noreads", "resolve", "x'; DROP TABLE noread_codings; --", "--no-label"])
        #expect(hostile.status == 1 && hostile.stderr.contains("no no-read with id"), "\(hostile.stderr)")
        let rows = try seeded.database.query(
            "SELECT noread_id, outcome, code, symbology, gs1, keyed_by FROM noread_codings ORDER BY noread_id"
        ).rows
        #expect(
            rows == [
                ["nr-1", "keyed", "4006381333931", nil, "f", "maria"],
                ["nr-2", "keyed", "00340123450000000017", "CODE-128", "t", "maria"],
                ["nr-3", "not-a-parcel", nil, nil, "f", "joe"],
            ])

        let listed = try seeded.run(["noreads", "--shift", "2026-10-24/night", "--format", "json"])
        guard case .array(let listedRows) = try JSONValue.parse(listed.stdoutText), let first = listedRows.first else {
            Issue.record("not a list: \(listed.stdoutText)")
            return
        }
        #expect(first["resolved"] == .string("keyed") && first["keyedCode"] == .string("4006381333931"))

        // The report: cam-01 saw 4 labels (2 sightings, 2 no-reads), a person keyed 2 of them.
        let report = try seeded.run(["report", "--shift", "2026-10-24/night", "--format", "json"])
        #expect(report.status == 0, "\(report.stderr)")
        let cameras = try ReportOutput.cameras(report.stdoutText)
        let cam01 = try #require(cameras.first { $0["camera"] == .string("cam-01") })
        #expect(cam01["keyed"]?.intValue == 2 && cam01["resolved"]?.intValue == 2)
        #expect(cam01["keyedRate"]?.doubleValue == 0.5)
        #expect((cam01["medianSecondsToResolve"]?.intValue ?? -1) > 0)
        let cam02 = try #require(cameras.first { $0["camera"] == .string("cam-02") })
        #expect(cam02["keyed"]?.intValue == 0 && cam02["resolved"]?.intValue == 1)
        let table = try seeded.run(["report", "--shift", "2026-10-24/night"])
        #expect(
            table.stdoutText.contains("No-reads resolved by a person\n  cam-01: 2 resolved, 2 keyed (50.0% of labels)"),
            "\(table.stdoutText)")
        for line in table.stdoutText.split(separator: "\n") { #expect(line.count <= 80, "\(line)") }
    }

    static func deadLetter(_ db: PGConnection, subject: String, reason: String, detail: String, at time: String) throws
    {
        _ = try db.query(
            "INSERT INTO dead_letters (subject, reason, detail, payload, received_at) VALUES ($1, $2, $3, $4, $5::timestamptz)",
            [.text(subject), .text(reason), .text(detail), .bytes(Array("{}".utf8)), .text(time)])
    }

    @Test(
        "dead letters: listed and counted by camera and reason (escaped, SQL metacharacters inert), and the report warns of the camera"
    )
    func deadLetters() throws {
        let seeded = try Self.database()
        defer { seeded.drop() }
        try Self.seedNight(seeded.database)
        for (index, time) in ["2026-10-24T21:00:00.000Z", "2026-10-25T01:00:00.000Z", "2026-10-25T02:00:00.000Z"]
            .enumerated()
        {
            try Self.deadLetter(
                seeded.database, subject: "scantrack.v1.sighting.dc1.cam-02", reason: "lane-mismatch",
                detail: "lane 'L9' is not cam-02's lane (L1) #\(index)", at: time)
        }
        try Self.deadLetter(
            seeded.database, subject: "scantrack.v1.order.dc1", reason: "bad-value",
            detail: "orderId '<script>\u{1B}[31m'; DROP TABLE dead_letters; --", at: "2026-10-24T22:00:00.000Z")
        try Self.deadLetter(  // the early shift's: not this one's
            seeded.database, subject: "scantrack.v1.sighting.dc1.cam-01", reason: "invalid-json", detail: "x",
            at: "2026-10-25T06:00:00.000Z")

        let listed = try seeded.run(["deadletters", "--shift", "2026-10-24/night", "--format", "json"])
        #expect(listed.status == 0, "\(listed.stderr)")
        guard case .array(let rows) = try JSONValue.parse(listed.stdoutText) else {
            Issue.record("not a list: \(listed.stdoutText)")
            return
        }
        #expect(
            rows.map { $0["reason"]?.stringValue ?? "" } == [
                "lane-mismatch", "bad-value", "lane-mismatch", "lane-mismatch",
            ])
        #expect(rows.first?["camera"] == .string("cam-02") && rows.first?["site"] == .string("dc1"))
        #expect(rows[1]["camera"] == .null && rows[1]["site"] == .null, "an order subject names no camera")
        #expect(rows[1]["detail"]?.stringValue?.contains("\u{1B}[31m") == true, "JSON keeps the value exact")
        #expect(rows.first?["bytes"]?.intValue == 2)

        let table = try seeded.run(["deadletters", "list", "--shift", "2026-10-24/night"])
        #expect(!table.stdoutText.contains("\u{1B}"), "a terminal gets control characters escaped")
        #expect(table.stdoutText.contains("4 dead letter(s)"), "\(table.stdoutText)")
        let onlyCam02 = try seeded.run([
            "deadletters", "list", "--shift", "2026-10-24/night", "--camera", "cam-02", "--reason", "lane-mismatch",
        ])
        #expect(onlyCam02.stdoutText.contains("3 dead letter(s)"), "\(onlyCam02.stdoutText)")
        let stranger = try seeded.run([
            "deadletters", "list", "--shift", "2026-10-24/night", "--camera", "x'; DROP TABLE dead_letters; --",
        ])
        #expect(stranger.status == 0 && stranger.stdoutText.contains("0 dead letter(s)"), "\(stranger.stderr)")

        let counted = try seeded.run(["deadletters", "counts", "--shift", "2026-10-24/night", "--format", "json"])
        guard case .array(let counts) = try JSONValue.parse(counted.stdoutText) else {
            Issue.record("not a list: \(counted.stdoutText)")
            return
        }
        #expect(counts.count == 2)
        #expect(counts.first?["camera"] == .string("cam-02") && counts.first?["count"]?.intValue == 3)
        #expect(counts.first?["latestDetail"] == .string("lane 'L9' is not cam-02's lane (L1) #2"))

        let report = try seeded.run(["report", "--shift", "2026-10-24/night", "--format", "json"])
        guard case .array(let shifts)? = try JSONValue.parse(report.stdoutText)["shifts"],
            case .array(let dead)? = shifts.first?["deadLetters"]
        else {
            Issue.record("no deadLetters in \(report.stdoutText)")
            return
        }
        #expect(dead.first?["camera"] == .string("cam-02") && dead.first?["reason"] == .string("lane-mismatch"))
        #expect(dead.first?["count"]?.intValue == 3)
        let text = try seeded.run(["report", "--shift", "2026-10-24/night"]).stdoutText
        #expect(text.contains("WARNING          3 message(s) of camera cam-02 dead-lettered: lane-mismatch"), "\(text)")
        #expect(!text.contains("\u{1B}"))
        for line in text.split(separator: "\n") { #expect(line.count <= 80, "\(line)") }
        let onlyCam01 = try seeded.run(["report", "--shift", "2026-10-24/night", "--camera", "cam-01"]).stdoutText
        #expect(!onlyCam01.contains("WARNING"), "\(onlyCam01)")
        #expect(try seeded.database.query("SELECT count(*) FROM dead_letters").rows.first?[0] == "5")
    }

    /// `["a", "b"]` as `"a", "b"`.
    static func quoted(_ values: [String]) -> String { values.map { "\"" + $0 + "\"" }.joined(separator: ", ") }

    @Test(
        "parcels (the parcel passes) and decisions: counted in the shift they end in, by lane and camera; codes a parcel; reasons in the contract's order"
    )
    func parcelsAndDecisions() throws {
        let seeded = try Self.database()
        defer { seeded.drop() }
        try Self.seedNight(seeded.database)
        let store = EventStore(connection: seeded.database)
        func parcel(_ id: String, camera: String = "cam-01", lastSeen: String, codes: [String], missing: [String] = [])
            throws -> (record: ParcelEvent, body: String)
        {
            let list = codes.enumerated().map { index, value in
                #"{"trackId": "\#(id)-\#(index)", "symbology": "EAN-13", "value": "\#(value)", "status": "accepted"}"#
            }.joined(separator: ", ")
            let body = #"""
                {"type": "parcel", "eventId": "\#(id).parcel", "site": "dc1", "camera": "\#(camera)", "time": "\#(lastSeen)",
                 "parcelId": "\#(id)", "lane": "L1", "firstSeen": "\#(lastSeen)", "lastSeen": "\#(lastSeen)",
                 "outline": [[0, 0], [9, 0], [9, 9], [0, 9]], "codes": [\#(list)],
                 "missing": [\#(Self.quoted(missing))], "noReads": []}
                """#
            return (try ParcelEvent.parse(try JSONValue.parse(Array(body.utf8))), body)
        }
        func decision(_ id: String, camera: String = "cam-01", at time: String, reasons: [String], late: Bool = false)
            throws -> (record: DecisionEvent, body: String)
        {
            let body = #"""
                {"type": "decision", "eventId": "\#(id).decision", "site": "dc1", "camera": "\#(camera)", "time": "\#(time)",
                 "lane": "L1", "parcelId": "\#(id)", "action": "\#(reasons.isEmpty ? "pass" : "divert")",
                 "reasons": [\#(Self.quoted(reasons))], "codes": [],
                 "lastSeen": "\#(time)", "closedAt": "\#(time)", "deadline": "\#(time)", "late": \#(late),
                 "decidedBy": "agent"}
                """#
            return (try DecisionEvent.parse(try JSONValue.parse(Array(body.utf8))), body)
        }
        // The night shift: three parcels of cam-01 (two codes, one code missing the SSCC, none read)
        // and one of cam-02; one parcel of the early shift.
        let parcels = [
            try parcel("p1", lastSeen: "2026-10-24T21:00:00.000Z", codes: ["4006381333931", "LPN-1"]),
            try parcel("p2", lastSeen: "2026-10-25T01:00:00.000Z", codes: ["5901234123457"], missing: ["GS1-128"]),
            try parcel("p3", lastSeen: "2026-10-25T02:00:00.000Z", codes: [], missing: ["GS1-128"]),
            try parcel(
                "p4", camera: "cam-02", lastSeen: "2026-10-25T03:00:00.000Z", codes: ["x'; DROP TABLE parcels; --"]),
            try parcel("p5", lastSeen: "2026-10-25T06:00:00.000Z", codes: ["4006381333931"]),
        ]
        _ = try store.insertParcels(parcels)
        // Their parcel passes, as reconciliation makes them: p1 seen by cam-02 as well (its codes
        // counted once); a pass still open is not counted.
        func member(_ event: ParcelEvent, camera: String) -> LaneParcel {
            LaneParcel(
                eventId: event.eventId + camera, parcelId: event.parcelId, camera: camera, firstSeen: event.firstSeen,
                lastSeen: event.lastSeen,
                codes: event.codes.map {
                    ParcelCode(symbology: $0.symbology, value: $0.value, valueEncoding: nil, itemId: "item-" + $0.value)
                }, missing: event.missing)
        }
        var passes = parcels.map { event, _ in
            var pass = ParcelPass(passId: "pass-" + event.parcelId, site: "dc1", lane: "L1")
            pass.members =
                [member(event, camera: event.camera)]
                + (event.parcelId == "p1" ? [member(event, camera: "cam-02")] : [])
            pass.closed = true
            pass.revision = 1
            return ParcelPassRow(pass: pass, camerasExpected: 2)
        }
        passes[1].pass.closed = false  // p2's pass is still open: not counted yet
        passes[1].pass.revision = 0
        try ParcelPassStore(connection: seeded.database).saveParcelPasses(passes)
        passes[1].pass.closed = true  // and now closed
        passes[1].pass.revision = 1
        try ParcelPassStore(connection: seeded.database).saveParcelPasses([passes[1]])
        _ = try store.insertDecisions([
            try decision("p1", at: "2026-10-24T21:00:00.100Z", reasons: []),
            try decision("p2", at: "2026-10-25T01:00:00.100Z", reasons: ["missing-required"], late: true),
            try decision("p3", at: "2026-10-25T02:00:00.100Z", reasons: ["no-read", "missing-required"]),
            try decision("p4", camera: "cam-02", at: "2026-10-25T03:00:00.100Z", reasons: []),
            try decision("p5", at: "2026-10-25T06:00:00.100Z", reasons: ["rejected-code"]),
        ])
        let result = try seeded.run(["report", "--shift", "2026-10-24/night", "--format", "json"])
        #expect(result.status == 0, "\(result.stderr)")
        guard case .array(let shifts)? = try JSONValue.parse(result.stdoutText)["shifts"], let night = shifts.first
        else {
            Issue.record("no shifts in \(result.stdoutText)")
            return
        }
        let figures = try #require(night["parcels"])
        #expect(figures["parcels"]?.intValue == 4 && figures["complete"]?.intValue == 2)
        #expect(figures["incomplete"]?.intValue == 1 && figures["noRead"]?.intValue == 1)
        #expect(figures["codes"]?.intValue == 4 && figures["codesPerParcel"]?.doubleValue == 1.33)
        let decisions = try #require(night["decisions"])
        #expect(
            decisions["pass"]?.intValue == 2 && decisions["divert"]?.intValue == 2 && decisions["late"]?.intValue == 1)
        #expect(
            decisions["reasons"]
                == .object([("no-read", .number(1)), ("missing-required", .number(2))]))
        // One camera of the lane: cam-02's parcel and decision only.
        let cam02 = try seeded.run(["report", "--shift", "2026-10-24/night", "--camera", "cam-02", "--format", "json"])
        guard case .array(let only)? = try JSONValue.parse(cam02.stdoutText)["shifts"] else {
            Issue.record("no shifts in \(cam02.stdoutText)")
            return
        }
        #expect(only.first?["parcels"]?["parcels"]?.intValue == 2, "p4's pass and p1's, which cam-02 saw too")
        #expect(only.first?["decisions"]?["pass"]?.intValue == 1)
        let table = try seeded.run(["report", "--shift", "2026-10-24/night"])
        #expect(
            table.stdoutText.contains("Parcels          4  complete 2  incomplete 1  no-read 1  codes a parcel 1.33"),
            "\(table.stdoutText)")
        #expect(
            table.stdoutText.contains(
                "Decisions        pass 2  divert 2  late 1  (no-read 1, missing-required 2)"), "\(table.stdoutText)")
        let csv = try seeded.run(["report", "--shift", "2026-10-24/night", "--format", "csv"])
        #expect(csv.stdoutText.contains(",decisions,missing-required,count,2"), "\(csv.stdoutText)")
    }

    @Test(
        "with no --pg, SCANTRACK_PG or config file, libpq's own variables connect (as psql's do); with none of them the error names them"
    )
    func libpqVariables() throws {
        let seeded = try Self.database()
        defer { seeded.drop() }
        try Self.seedNight(seeded.database)
        // The test database's connection string as libpq's variables (the later of a repeated key wins, as in libpq).
        let names = [
            "host": "PGHOST", "port": "PGPORT", "user": "PGUSER", "dbname": "PGDATABASE", "sslmode": "PGSSLMODE",
            "sslrootcert": "PGSSLROOTCERT", "password": "PGPASSWORD",
        ]
        var environment = [
            "SCANTRACK_CONFIG": "", "HOME": "/nonexistent",
            "SCANTRACK_MIGRATIONS": seeded.environment["SCANTRACK_MIGRATIONS"] ?? "",
        ]
        for pair in (seeded.environment["SCANTRACK_PG"] ?? "").split(separator: " ") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2, let name = names[parts[0]] { environment[name] = parts[1] }
        }
        /// scanadmin with the test process's own SCANTRACK_PG and the machine's PG* unset.
        func scanadmin(_ arguments: [String], _ environment: [String: String]) throws -> ProcessResult {
            let unset = (["SCANTRACK_PG"] + SettingResolver.libpqVariables).flatMap { ["-u", $0] }
            let set = environment.map { "\($0.key)=\($0.value)" }.sorted()
            return try ProcessRunner.run("/usr/bin/env", unset + set + [Self.scanadmin] + arguments)
        }
        try #require(environment["PGDATABASE"] != nil && environment["PGHOST"] != nil)
        let report = try scanadmin(["report", "--shift", "2026-10-24/night", "--format", "json"], environment)
        #expect(report.status == 0, "\(report.stderr)")
        #expect(report.stdoutText.contains("\"itemPasses\":2"), "\(report.stdoutText)")
        let none = try scanadmin(["report", "--shift", "today"], ["SCANTRACK_CONFIG": "", "HOME": "/nonexistent"])
        #expect(none.status == 64 && none.stderr.contains("PGHOST"), "\(none.stderr)")
    }

    @Test("today, filters and a custom range select the right shifts and rows")
    func selections() throws {
        let seeded = try Self.database()
        defer { seeded.drop() }
        try Self.seedNight(seeded.database)
        // 07:30 local on the 25th: today's early shift only (the night started the day before).
        let today = try seeded.run(["report", "--shift", "today", "--now", "2026-10-25T06:30:00Z", "--format", "json"])
        #expect(today.status == 0, "\(today.stderr)")
        let shifts = try JSONValue.parse(today.stdoutText)["shifts"]
        guard case .array(let list)? = shifts else {
            Issue.record("missing in the report")
            return
        }
        #expect(list.map { $0["name"]?.stringValue ?? "" } == ["early"])
        #expect(list.first?["sightings"]?.intValue == 1)
        #expect(list.first?["packs"]?["over"]?.intValue == 1)

        let lane = try seeded.run(["report", "--shift", "2026-10-24/night", "--lane", "L1", "--format", "json"])
        #expect(
            try JSONValue.parse(lane.stdoutText)["shifts"].flatMap {
                if case .array(let s) = $0 { s.first } else { nil }
            }?["sightings"]?.intValue == 4)
        let camera = try seeded.run(["report", "--shift", "2026-10-24/night", "--camera", "cam-02", "--format", "json"])
        let cameraShift = try JSONValue.parse(camera.stdoutText)["shifts"].flatMap {
            if case .array(let s) = $0 { s.first } else { nil }
        }
        #expect(cameraShift?["sightings"]?.intValue == 2)
        #expect(cameraShift?["packs"]?["total"]?.intValue == 0)

        let range = try seeded.run(["report", "--from", "2026-10-24", "--to", "2026-10-26", "--format", "json"])
        let whole = try JSONValue.parse(range.stdoutText)["shifts"].flatMap {
            if case .array(let s) = $0 { s.first } else { nil }
        }
        #expect(whole?["sightings"]?.intValue == 7)
        #expect(whole?["itemPasses"]?.intValue == 3)
    }

    @Test("bad input: an unknown shift, half a range, a bad time, a bad --shifts; each exits 64 naming it")
    func badInput() throws {
        let seeded = try Self.database()
        defer { seeded.drop() }
        for (arguments, named) in [
            (["report", "--shift", "lunch"], "lunch"), (["report", "--from", "2026-10-24"], "--to"),
            (["report", "--from", "yesterday-ish", "--to", "2026-10-25"], "yesterday-ish"),
            (["report", "--shifts", "early=6-14"], "early=6-14"),
            (["report", "--shift", "today", "--from", "2026-10-24", "--to", "2026-10-25"], "--shift"),
        ] {
            let result = try seeded.run(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.contains(named), "\(arguments): \(result.stderr)")
        }
        // A shift that is in no plan is a usage error with report's usage, before and without a
        // database (it printed scanadmin's usage, or "no PostgreSQL connection" first).
        for command in [["report"], ["noreads", "list"]] {
            let unreachable = try ProcessRunner.run(
                TestEnvironment.productsDirectory + "/scanadmin",
                command + ["--shift", "nonsense", "--pg", "postgresql://127.0.0.1:1/none"])
            #expect(unreachable.status == 64, "\(command): \(unreachable.stderr)")
            #expect(unreachable.stderr.contains("nonsense"), "\(unreachable.stderr)")
            #expect(unreachable.stderr.contains("scanadmin \(command.joined(separator: " "))"), "\(unreachable.stderr)")
        }
    }

    @Test("topology load and show; a bad topology file exits 2 naming the path, and loads nothing")
    func topologyCommands() throws {
        let seeded = try Self.database()
        defer { seeded.drop() }
        let dir = try ReplayHarnessDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // The lane also has the aggregator decide, against the orders, diverting no-reads only.
        let decided = Self.topology.replacingOccurrences(
            of: #""cameras": [{"id": "cam-01"}"#,
            with: #""decision": {"checkOrders": true, "divertOn": ["no-read"]}, "cameras": [{"id": "cam-01"}"#)
        try decided.write(toFile: dir + "/t.json", atomically: true, encoding: .utf8)
        let load = try seeded.run(["topology", "load", dir + "/t.json"])
        #expect(load.status == 0, "\(load.stderr)")
        #expect(load.stdoutText.contains("1 site(s), 1 lane(s), 2 lane camera(s)"))
        let show = try seeded.run(["topology", "show", "--format", "csv"])
        #expect(
            show.stdoutText.contains(
                "dc1,Europe/Zurich,lane,L1,1,cam-02,1.50,1.00,\"deadline 1.50 s, orders, divert on no-read\""),
            "\(show.stdoutText)")
        #expect(show.stdoutText.contains("dc1,Europe/Zurich,station,pack-01,,cam-10,,,"))
        try #"{"sites": [{"id": "dc2", "lanes": [{"id": "L9", "cameras": []}]}]}"#.write(
            toFile: dir + "/bad.json", atomically: true, encoding: .utf8)
        let bad = try seeded.run(["topology", "load", dir + "/bad.json"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("bad.json") && bad.stderr.contains("sites[0].lanes[0].cameras"))
        let json = try seeded.run(["topology", "show", "--format", "json"])
        #expect(!json.stdoutText.contains("dc2"))
        let missing = try seeded.run(["topology", "load", dir + "/nope.json"])
        #expect(missing.status == 2 && missing.stderr.contains("nope.json"))
    }

    @Test("orders import: a bad row is named by line and nothing is imported; show lists lines and pack verdicts")
    func ordersCommands() throws {
        let seeded = try Self.database()
        defer { seeded.drop() }
        let dir = try ReplayHarnessDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "order_id,line,code,quantity\nORD-1,1,4006381333931,2\nORD-2,1,O'Brien;--,1\n".write(
            toFile: dir + "/o.csv", atomically: true, encoding: .utf8)
        try "order_id,line,code,quantity\nORD-3,1,400,1\nORD-3,2,401,many\n".write(
            toFile: dir + "/bad.csv", atomically: true, encoding: .utf8)
        let bad = try seeded.run(["orders", "import", dir + "/bad.csv"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("bad.csv") && bad.stderr.contains("line 3") && bad.stderr.contains("many"))
        #expect(try seeded.run(["orders", "show", "ORD-3"]).status == 1)
        let good = try seeded.run(["orders", "import", dir + "/o.csv"])
        #expect(good.status == 0, "\(good.stderr)")
        #expect(good.stdoutText.contains("imported 2 order(s), 2 line(s)"))
        let odd = try seeded.run(["orders", "show", "ORD-2", "--format", "json"])
        let rows = try JSONValue.parse(odd.stdoutText)
        guard case .array(let list) = rows, let row = list.first else {
            Issue.record("not a list: \(odd.stdoutText)")
            return
        }
        #expect(list.count == 1)
        #expect(row["code"] == .string("O'Brien;--"))
        #expect(row["line"] == .number(1) && row["expected"] == .number(1))
        #expect(row["verdict"] == .string("not packed"))
        try Self.pack(seeded.database, "s9", at: "2026-10-24T21:00:00.000Z", verdict: "short")
        try seeded.database.query(
            "INSERT INTO pack_lines (session_id, position, line, code, symbology, expected, counted, verdict) VALUES ('s9', 0, 1, '4006381333931', 'EAN-13', 2, 1, 'short')"
        )
        let shown = try seeded.run(["orders", "show", "ORD-1", "--format", "csv"])
        #expect(shown.stdoutText.contains("ORD-1,1,4006381333931,2,s9,pack-01,1,short,short"))
    }
}

/// A fresh temporary folder.
enum ReplayHarnessDirectory {
    static func make() throws -> String {
        let path = NSTemporaryDirectory() + "scantrack-" + TestEnvironment.uniqueName("t")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
