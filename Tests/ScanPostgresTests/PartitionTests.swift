import Foundation
import ScanCore
import ScanTestSupport
import ScanTestTiming
import Testing

@testable import ScanPostgres
import ScanReconciliation

/// Day partitions, retention and rollups (migration 0007) against the real PostgreSQL.
@Suite("partitions, retention and rollups", .timed, .enabled(if: TestEnvironment.postgresEnabled))
struct PartitionTests {
    static let topology = #"""
        {"version": 1, "sites": [{"id": "dc1", "timeZone": "Europe/Zurich",
          "lanes": [{"id": "L1", "windowSeconds": 0.4, "graceSeconds": 1,
                     "cameras": [{"id": "cam-01"}, {"id": "cam-02", "travelSeconds": 1.5}]},
                    {"id": "L2", "windowSeconds": 0.4, "graceSeconds": 1, "cameras": [{"id": "cam-03"}]}],
          "stations": [{"id": "pack-01", "cameras": ["cam-10"]}]}]}
        """#

    static func count(_ db: PGConnection, _ sql: String) throws -> Int {
        Int(try db.query(sql).rows.first?[0] ?? "") ?? -1
    }

    /// A fingerprint of every row of a table (its text form, in a fixed order).
    /// The table's rows in `columns` (all of them: nil), hashed in key order. A later migration
    /// may add columns: the rows before it are compared in the columns they had.
    static func fingerprint(_ db: PGConnection, _ table: String, key: String, columns: [String]? = nil) throws
        -> String
    {
        let row = columns.map { "row(" + $0.map { "t.\($0)" }.joined(separator: ", ") + ")::text" } ?? "t::text"
        return try db.query(
            "SELECT count(*) || ':' || coalesce(md5(string_agg(\(row), '|' ORDER BY \(key))), '') FROM \(table) t"
        )
        .rows.first?[0] ?? ""
    }

    /// The table's columns, in order.
    static func columns(_ db: PGConnection, _ table: String) throws -> [String] {
        try db.query(
            "SELECT column_name FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position",
            [.text(table)]
        ).rows.compactMap { $0[0] }
    }

    /// Fills sightings (some with an explicit lane the topology does not give their camera),
    /// no-reads, heartbeats (with silences and a second agent run) and item passes over 30 hours
    /// from `start`; `days` spreads them further back, one batch a day.
    static func fill(_ db: PGConnection, start: String, hours: Int = 30) throws {
        try db.execute(
            """
            INSERT INTO sightings (event_id, site, camera, track_id, symbology, value, status, rule_id, lane, first_seen,
                                   last_seen, first_frame, last_frame, frames, decodes, event_time, body)
            SELECT 's-' || c || '-' || i, 'dc1', 'cam-0' || c, 't' || i, 'EAN-13', 'code-' || (i % 700),
                   CASE WHEN i % 23 = 0 THEN 'rejected' ELSE 'accepted' END,
                   CASE WHEN i % 23 = 0 AND i % 46 <> 0 THEN 'rule-' || (i % 3) END,
                   CASE WHEN i % 5 = 0 AND c = 3 THEN 'L9' END,
                   at, at + interval '1 s', i, i + 9, 10, 8, at + interval '2 s', '{}'
            FROM generate_series(1, 4) c, generate_series(0, \(hours * 3600 / 37)) i,
                 LATERAL (SELECT '\(start)'::timestamptz + i * interval '37 s' + c * interval '700 ms' AS at) x;
            INSERT INTO noreads (event_id, site, camera, lane, track_id, family, first_seen, last_seen, frames, body)
            SELECT 'n-' || c || '-' || i, 'dc1', 'cam-0' || c, NULL, 'n' || i, 'linear', at, at + interval '1 s', 9, '{}'
            FROM generate_series(1, 4) c, generate_series(0, \(hours * 3600 / 211)) i,
                 LATERAL (SELECT '\(start)'::timestamptz + i * interval '211 s' + c * interval '3 s' AS at) x;
            INSERT INTO heartbeats (event_id, site, camera, run_id, time, frames_dropped, body)
            SELECT 'h-' || c || '-' || i, 'dc1', 'cam-0' || c, CASE WHEN i < 3000 THEN 'run-a' ELSE 'run-b' END,
                   '\(start)'::timestamptz + i * interval '20 s' + c * interval '1 s',
                   CASE WHEN i < 3000 THEN i / 10 ELSE (i - 3000) / 7 END, '{}'
            FROM generate_series(1, 4) c, generate_series(0, \(hours * 180)) i WHERE i % 200 NOT BETWEEN 50 AND 60;
            INSERT INTO item_passes (item_id, site, lane, symbology, value, first_seen, last_seen, cameras_expected,
                                     cameras_seen, revision, published_revision, closed_at)
            SELECT 'p-' || l || '-' || i, 'dc1', l, 'EAN-13', 'code-' || i, at, at + interval '2 s', 2,
                   CASE WHEN i % 9 = 0 THEN 1 ELSE 2 END, 1, 1, at + interval '5 s'
            FROM unnest(ARRAY['L1', 'L2']) l, generate_series(0, \(hours * 3600 / 70)) i,
                 LATERAL (SELECT '\(start)'::timestamptz + i * interval '70 s' AS at) x;
            -- Late sightings move passes and add cameras; a pass is removed.
            UPDATE item_passes SET first_seen = first_seen + interval '20 min' WHERE item_id LIKE 'p-L1-%0';
            UPDATE item_passes SET cameras_seen = 2 WHERE cameras_seen = 1 AND item_id LIKE '%7';
            DELETE FROM item_passes WHERE item_id = 'p-L2-3';
            INSERT INTO item_sightings (event_id, item_id, camera, track_id, first_seen, last_seen)
            SELECT 'is-' || item_id, item_id, CASE WHEN lane = 'L1' THEN 'cam-02' ELSE 'cam-03' END, 't', first_seen, last_seen
            FROM item_passes;
            -- A redelivery: stored sightings again (skipped), and a few new ones.
            INSERT INTO sightings SELECT * FROM sightings WHERE event_id LIKE 's-1-%' AND first_seen < '\(start)'::timestamptz + interval '1 hour'
            ON CONFLICT DO NOTHING;
            INSERT INTO sightings (event_id, site, camera, track_id, symbology, value, status, first_seen, last_seen,
                                   first_frame, last_frame, frames, decodes, event_time, body)
            SELECT 'late-' || i, 'dc1', 'cam-02', 'late' || i, 'QR', 'late ' || i || ''' OR 1=1; --', 'accepted',
                   '\(start)'::timestamptz + i * interval '13 min', '\(start)'::timestamptz + i * interval '13 min', 1, 2, 2, 2,
                   now(), '{}'
            FROM generate_series(1, 12) i
            ON CONFLICT DO NOTHING;
            """)
    }

    static func utcDay(_ db: PGConnection, offset: Int) throws -> String {
        try db.query("SELECT to_char((now() AT TIME ZONE 'UTC')::date + \(offset), 'YYYY-MM-DD')").rows.first?[0] ?? ""
    }

    @Test(
        "reports summed from the rollups equal the same reports summed from the stored rows, for any period and filter")
    func rollupsEqualRows() throws {
        let database = try MigratedDatabase(prefix: "st_rollups")
        defer { database.drop() }
        let db = database.connection
        try SiteStore(connection: db).load(try Topology.parse(Array(Self.topology.utf8), file: "t.json"))
        let start = try Self.utcDay(db, offset: -1) + " 00:00:00+00"
        try Self.fill(db, start: start)
        let base = Timestamp(
            milliseconds: Int64(
                try Self.count(db, "SELECT (extract(epoch FROM '\(start)'::timestamptz) * 1000)::bigint")))
        func at(_ hours: Double) -> Timestamp { base.adding(milliseconds: Int64(hours * 3_600_000)) }
        let periods: [(Timestamp, Timestamp)] = [
            (at(6 + 7.0 / 60 + 13.5 / 3600), at(13 + 52.0 / 60 + 1.0 / 3600)),  // ragged ends
            (at(0), at(48)),  // everything
            (at(3), at(3 + 10.0 / 60)),  // shorter than a quarter hour: all from rows
            (at(0.25), at(8.25)),  // whole quarter hours
            (at(22), at(30)),  // across midnight UTC (two partitions)
        ]
        var compared = 0
        for (from, to) in periods {
            for (site, lane, camera) in [
                (nil, nil, nil), ("dc1", nil, nil), ("dc1", "L1", nil), (nil, "L9", nil), (nil, nil, "cam-03"),
                (nil, "L2", "cam-03"), ("elsewhere", nil, nil),
            ] as [(String?, String?, String?)] {
                for zone in ["Europe/Zurich", "Asia/Kathmandu"] {
                    var scope = ReportStore.Scope(
                        start: from, end: to, site: site, lane: lane, camera: camera, timeZone: zone)
                    let fromRollups = try ReportStore(connection: db).figures(scope)
                    scope.useRollups = false
                    let fromRows = try ReportStore(connection: db).figures(scope)
                    #expect(
                        fromRollups == fromRows,
                        "\(from)–\(to) site \(site ?? "-") lane \(lane ?? "-") camera \(camera ?? "-") \(zone)")
                    compared += 1
                }
            }
        }
        #expect(compared == 70)
        // The comparison is not of empty reports: the whole period holds every kind of figure.
        let all = try ReportStore(connection: db).figures(
            ReportStore.Scope(start: at(0), end: at(48), site: nil, lane: nil, camera: nil, timeZone: "UTC"))
        #expect(all.sightings == (try Self.count(db, "SELECT count(*) FROM sightings")))
        #expect(all.noReads == (try Self.count(db, "SELECT count(*) FROM noreads")))
        #expect(all.itemPasses == (try Self.count(db, "SELECT count(*) FROM item_passes")))
        #expect(
            all.partialPasses
                == (try Self.count(db, "SELECT count(*) FROM item_passes WHERE cameras_seen < cameras_expected")))
        #expect(all.lanes.map(\.lane) == ["L1", "L2", "L9"], "a sighting's own lane counts before its camera's")
        #expect(all.topRules.map(\.name).contains("(none)"))
        #expect(all.health.count == 4 && all.health.allSatisfy { $0.maxGapSeconds >= 220 && $0.framesDropped > 0 })
        #expect(
            try Self.count(db, "SELECT sum(n) FROM read_rollups WHERE status <> 'noread'")
                == (try Self.count(db, "SELECT count(*) FROM sightings")),
            "the redelivered sightings were not counted twice")
        #expect(
            try Self.count(db, "SELECT sum(passes) FROM pass_rollups")
                == (try Self.count(db, "SELECT count(*) FROM item_passes")))
    }

    @Test("migrating a filled unpartitioned database keeps every row, in day partitions, with rollups of them")
    func migrationKeepsRows() throws {
        let scratch = try ScratchDatabase(prefix: "st_partition_migrate")
        defer { scratch.drop() }
        let db = try PGConnection(dsn: scratch.dsn)
        let all = try Migrator(directory: TestEnvironment.repoRoot + "/migrations")
        let before = try Migrator(migrations: all.migrations.filter { $0.version < 7 })
        try before.migrate(db)
        try SiteStore(connection: db).load(try Topology.parse(Array(Self.topology.utf8), file: "t.json"))
        // Ten days ago, a year ago and next week as well as the last 30 hours.
        try Self.fill(db, start: try Self.utcDay(db, offset: -1) + " 00:00:00+00")
        try db.execute(
            """
            INSERT INTO sightings (event_id, site, camera, track_id, symbology, value, status, first_seen, last_seen,
                                   first_frame, last_frame, frames, decodes, event_time, body)
            SELECT 'old-' || d, 'dc1', 'cam-01', 't', 'EAN-13', '4006381333931', 'accepted',
                   now() - d * interval '1 day', now() - d * interval '1 day', 1, 1, 1, 1, now(), '{"old": true}'
            FROM unnest(ARRAY[10, 365, -7]) d;
            INSERT INTO session_events (event_id, type, site, camera, session_id, event_time, body)
            VALUES ('se-1', 'session.started', 'dc1', 'cam-10', 's1', now() - interval '3 days', '{}'),
                   ('se-2', 'session.completed', 'dc1', 'cam-10', 's1', now(), '{}');
            INSERT INTO dead_letters (subject, reason, detail, payload, received_at)
            VALUES ('scantrack.v1.sighting.dc1.cam-01', 'invalid-json', 'x', '\\x00ff', now() - interval '40 days'),
                   ('scantrack.v1.noread.dc1.cam-01', 'invalid-event', 'y', '\\x41', now());
            """)
        let tables = [
            ("sightings", "event_id"), ("noreads", "event_id"), ("heartbeats", "event_id"),
            ("session_events", "event_id"), ("dead_letters", "id"),
        ]
        var fingerprints: [String: String] = [:]
        var columns: [String: [String]] = [:]
        for (table, key) in tables {
            columns[table] = try Self.columns(db, table)
            fingerprints[table] = try Self.fingerprint(db, table, key: key, columns: columns[table])
        }
        let applied = try all.migrate(db)
        #expect(applied.map(\.version).contains(7))
        for (table, key) in tables {
            #expect(
                try Self.fingerprint(db, table, key: key, columns: columns[table]) == fingerprints[table],
                "every row of \(table) kept as it was"
            )
            #expect(
                try Self.count(db, "SELECT count(*) FROM \(table)_default") == 0,
                "every row of \(table) is in its day's partition")
            #expect(
                try Self.count(db, "SELECT count(*) FROM pg_partitioned_table WHERE partrelid = '\(table)'::regclass")
                    == 1)
        }
        let days = try Self.count(
            db,
            "SELECT count(*) FROM pg_inherits WHERE inhparent = 'sightings'::regclass AND inhrelid::regclass::text <> 'sightings_default'"
        )
        #expect(days >= 6, "yesterday to 3 days ahead, a year ago, ten days ago, next week: \(days)")
        // The rollups count what was there; the sequence of dead letters goes on.
        #expect(
            try Self.count(db, "SELECT sum(n) FROM read_rollups")
                == (try Self.count(db, "SELECT (SELECT count(*) FROM sightings) + (SELECT count(*) FROM noreads)")))
        #expect(
            try Self.count(db, "SELECT sum(beats) FROM heartbeat_rollups")
                == (try Self.count(db, "SELECT count(*) FROM heartbeats")))
        try db.execute("INSERT INTO dead_letters (subject, reason, detail, payload) VALUES ('s', 'r', 'd', '\\x00')")
        #expect(try Self.count(db, "SELECT count(DISTINCT id) FROM dead_letters") == 3)
        // Stored events are still unique: a redelivery of one stores nothing.
        #expect(
            try db.query(
                "INSERT INTO sightings SELECT * FROM sightings WHERE event_id = 'old-365' ON CONFLICT (site, camera, event_id, first_seen) DO NOTHING"
            ).affected == 0)
    }

    @Test("retention drops the day partitions past a table's days and old rows waiting outside them; today's rows stay")
    func retentionDropsExpiredDays() throws {
        let database = try MigratedDatabase(prefix: "st_retention")
        defer { database.drop() }
        let db = database.connection
        let retention = Retention(connection: db)
        for offset in [-40, -31, -30, -10] {
            #expect(
                try db.query(
                    "SELECT scantrack_create_day_partition('sightings', (now() AT TIME ZONE 'UTC')::date + \(offset))"
                )
                .rows.first?[0] == "t")
        }
        try db.execute(
            """
            INSERT INTO sightings (event_id, site, camera, track_id, symbology, value, status, first_seen, last_seen,
                                   first_frame, last_frame, frames, decodes, event_time, body)
            SELECT 'e' || d || '-' || i, 'dc1', 'cam-01', 't', 'EAN-13', 'v', 'accepted', at, at, 1, 1, 1, 1, now(), '{}'
            FROM unnest(ARRAY[0, 10, 30, 31, 40, 400, -20]) d, generate_series(1, 5) i,
                 LATERAL (SELECT date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - d * interval '1 day'
                                 + interval '1 hour' + i * interval '1 minute' AS at) x;
            INSERT INTO dead_letters (subject, reason, detail, payload, received_at)
            VALUES ('s', 'r', 'd', '\\x00', now() - interval '100 days'), ('s', 'r', 'd', '\\x00', now());
            """)
        // 400 days ago and 20 days ahead have no partition: they wait in the default one.
        #expect(try Self.count(db, "SELECT count(*) FROM sightings_default") == 10)
        try retention.set(table: "sightings", days: 30)
        #expect(throws: PGError.self) { try retention.set(table: "sightings; DROP TABLE orders", days: 3) }
        #expect(throws: PGError.self) { try retention.set(table: "sightings", days: -1) }

        let plan = try retention.plan()
        let cutoff = try Self.utcDay(db, offset: -30)
        #expect(plan.cutoff["sightings"] == cutoff)
        #expect(
            plan.drop.map(\.name).sorted()
                == [
                    "sightings_" + (try Self.utcDay(db, offset: -40)).filter { $0 != "-" },
                    "sightings_" + (try Self.utcDay(db, offset: -31)).filter { $0 != "-" },
                ].sorted())
        #expect(plan.defaultRows["sightings"] == 5, "the rows of 400 days ago")
        #expect(plan.defaultRows["dead_letters"] == 1)
        let rollupsBefore = try Self.count(db, "SELECT sum(n) FROM read_rollups")

        let outcome = try retention.maintain()
        #expect(outcome.dropped.count == 2)
        #expect(outcome.deletedRows == 6)
        // The rows of 20 days ahead got their partition.
        #expect(outcome.created.contains("sightings_" + (try Self.utcDay(db, offset: 20)).filter { $0 != "-" }))
        #expect(try Self.count(db, "SELECT count(*) FROM sightings_default") == 0)
        for (offset, left) in [(0, 5), (10, 5), (30, 5), (31, 0), (40, 0), (400, 0), (-20, 5)] {
            #expect(
                try Self.count(db, "SELECT count(*) FROM sightings WHERE event_id LIKE 'e\(offset)-%'") == left,
                "rows of \(offset) days ago")
        }
        #expect(try Self.count(db, "SELECT count(*) FROM dead_letters") == 1)
        // Reports of dropped days still have their counts: the rollups are kept.
        #expect(try Self.count(db, "SELECT sum(n) FROM read_rollups") == rollupsBefore)
        // Yesterday to three days ahead exist for every table; a second round has nothing to do.
        for table in Retention.tables {
            for offset in -1...Retention.daysAhead {
                let day = (try Self.utcDay(db, offset: offset)).filter { $0 != "-" }
                #expect(try Self.count(db, "SELECT count(*) FROM pg_class WHERE relname = '\(table)_\(day)'") == 1)
            }
        }
        #expect(try retention.maintain() == Retention.Outcome())
    }
}
