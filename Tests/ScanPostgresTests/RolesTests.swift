import Foundation
import ScanCore
import ScanTestSupport
import ScanTestTiming
import Testing

@testable import ScanPostgres
import ScanReconciliation

/// migrations/roles/roles.sql: each program's role does its work and nothing past it.
@Suite("PostgreSQL roles", .timed, .enabled(if: TestEnvironment.postgresEnabled))
struct RolesTests {
    @Test(
        "over TLS (verify-full) with SCRAM passwords from files: the writer stores events and maintains partitions but drops no table; the reporter only reads; the operator sets rules, topology and retention"
    )
    func rolesDoTheirWorkOnly() throws {
        let database = try MigratedDatabase(prefix: "st_roles")
        let owner = database.connection
        let logins = try RoleLogins(database)
        defer {
            logins.drop()
            database.drop()
        }
        // Run again after later migrations: no error.
        try owner.execute(
            try String(contentsOfFile: TestEnvironment.repoRoot + "/migrations/roles/roles.sql", encoding: .utf8))
        func connect(_ login: String) throws -> PGConnection {
            try PGConnection(dsn: try logins.dsn(login), passwordFile: logins.passwordFile(login))
        }
        let wrong = logins.folder + "/wrong"
        try "not-the-password\n".write(toFile: wrong, atomically: true, encoding: .utf8)
        for (dsn, file, why) in [
            (try logins.dsn("writer"), wrong, "a wrong password"),
            (database.dsn + " user=\(logins.user("writer")) sslmode=disable", logins.passwordFile("writer"), "no TLS"),
        ] {
            do {
                _ = try PGConnection(dsn: dsn, passwordFile: file)
                Issue.record("\(why) was let in")
            } catch {
                #expect(!error.description.contains("pw-writer"), "\(error)")
            }
        }
        func refused(_ db: PGConnection, _ sql: String) -> Bool {
            do {
                try db.execute(sql)
                return false
            } catch {
                return error.sqlState == "42501"  // insufficient privilege
            }
        }

        let writer = try connect("writer")
        #expect(try writer.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").rows.first?[0] == "t")
        try writer.execute(
            """
            INSERT INTO sightings (event_id, site, camera, track_id, symbology, value, status, first_seen, last_seen,
                                   first_frame, last_frame, frames, decodes, event_time, body)
            VALUES ('e1', 'dc1', 'cam-01', 't', 'EAN-13', '4006381333931', 'accepted', now(), now(), 1, 2, 2, 2, now(), '{}');
            INSERT INTO dead_letters (subject, reason, detail, payload) VALUES ('s', 'r', 'd', '\\x00');
            """)
        #expect(
            try writer.query("SELECT sum(n) FROM read_rollups").rows.first?[0] == "1", "the trigger ran as the writer")
        let old = try owner.query(
            "SELECT scantrack_create_day_partition('heartbeats', (now() AT TIME ZONE 'UTC')::date - 40)")
        #expect(old.rows.first?[0] == "t")
        let retention = Retention(connection: writer)
        let outcome = try retention.maintain()
        #expect(outcome.dropped.count == 1, "the writer dropped the expired day partition: \(outcome)")
        for sql in [
            "DROP TABLE orders", "DROP TABLE sightings", "DELETE FROM orders", "TRUNCATE sightings",
            "DROP TABLE sightings_default", "ALTER TABLE sightings DROP COLUMN body",
            "SELECT scantrack_set_retention('sightings', 1)",
        ] {
            #expect(refused(writer, sql), "the writer: \(sql)")
        }
        #expect(throws: PGError.self) {
            try writer.execute("SELECT scantrack_drop_day_partition('orders', current_date)")
        }

        let reporter = try connect("reporter")
        let figures = try ReportStore(connection: reporter).figures(
            ReportStore.Scope(
                start: Timestamp(milliseconds: 0), end: Timestamp(milliseconds: 4_000_000_000_000), site: nil,
                lane: nil,
                camera: nil, timeZone: "UTC"))
        #expect(figures.sightings == 1)
        for sql in [
            "INSERT INTO orders (order_id, source) VALUES ('o', 'x')", "DELETE FROM sightings",
            "UPDATE sites SET time_zone = 'UTC'",
            "SELECT scantrack_drop_day_partition('sightings', current_date)", "DROP TABLE pack_records",
        ] {
            #expect(refused(reporter, sql), "the reporter: \(sql)")
        }

        let operatorDB = try connect("operator")
        try SiteStore(connection: operatorDB).load(
            try Topology.parse(
                Array(
                    #"{"version": 1, "sites": [{"id": "dc1", "lanes": [{"id": "L1", "cameras": [{"id": "cam-01"}]}]}]}"#
                        .utf8),
                file: "t.json"))
        try Retention(connection: operatorDB).set(table: "heartbeats", days: 14)
        #expect(
            try owner.query("SELECT days FROM retention_settings WHERE table_name = 'heartbeats'").rows.first?[0]
                == "14")
        try operatorDB.execute("INSERT INTO orders (order_id, source) VALUES ('ORD-1', 'test')")
        for sql in [
            "INSERT INTO sightings SELECT * FROM sightings", "DROP TABLE ruleset_revisions",
            "DELETE FROM pack_records",
        ] {
            #expect(refused(operatorDB, sql), "the operator: \(sql)")
        }

        // A no-read's coding: the operator writes it once (the database says who and when), the
        // writer only marks it published; neither rewrites or removes one.
        try writer.execute(
            """
            INSERT INTO noreads (event_id, site, camera, track_id, first_seen, last_seen, frames, body)
            VALUES ('nr-1', 'dc1', 'cam-01', 't', now(), now(), 9, '{}')
            """)
        let coded = try NoReadCodingStore(connection: operatorDB).resolve(
            id: "nr-1", .init(outcome: .noLabel, code: nil, by: "maria"))
        #expect(coded.lane == "L1")
        #expect(
            try owner.query("SELECT db_role FROM noread_codings").rows.first?[0] == logins.user("operator"),
            "the login that stored it")
        for sql in [
            "UPDATE noread_codings SET code = '1', outcome = 'keyed'", "DELETE FROM noread_codings",
            """
            INSERT INTO noread_codings (site, camera, noread_id, lane, noread_first_seen, outcome, keyed_by, db_role)
            VALUES ('dc1', 'cam-01', 'nr-2', 'L1', now(), 'no-label', 'x', 'someone-else')
            """,
            "UPDATE noread_codings SET published = true",
        ] {
            #expect(refused(operatorDB, sql), "the operator: \(sql)")
        }
        let outbox = NoReadCodingStore(connection: writer)
        #expect(try outbox.unpublished(limit: 10) == [coded])
        try outbox.markPublished(coded)
        #expect(try outbox.unpublished(limit: 10).isEmpty)
        for sql in ["UPDATE noread_codings SET keyed_by = 'x'", "DELETE FROM noread_codings"] {
            #expect(refused(writer, sql), "the writer: \(sql)")
        }
    }

    @Test(
        "as the operator login: today's and yesterday's partitions and an infinity cutoff are refused or clamped by the stored retention, no temporary table can be made, and a temporary shadow of retention_settings changes nothing"
    )
    func maintenanceTrustsNoCaller() throws {
        let database = try MigratedDatabase(prefix: "st_maint")
        let owner = database.connection
        let logins = try RoleLogins(database)
        defer {
            logins.drop()
            database.drop()
        }
        let operatorDB = try PGConnection(
            dsn: try logins.dsn("operator"), passwordFile: logins.passwordFile("operator"))
        func refused(_ sql: String) -> String? {
            do {
                try operatorDB.execute(sql)
                return nil
            } catch {
                return error.sqlState
            }
        }
        // Today's and yesterday's partitions exist (made by the migration) and hold a row each.
        try owner.execute(
            """
            INSERT INTO dead_letters (subject, reason, detail, payload, received_at)
            VALUES ('s', 'r', 'today', '\\x00', now()), ('s', 'r', 'yesterday', '\\x00', now() - interval '1 day'),
                   ('s', 'r', 'future', '\\x00', now() + interval '400 days');
            """)
        for day in [
            "(now() AT TIME ZONE 'UTC')::date", "(now() AT TIME ZONE 'UTC')::date - 1",
            "(now() AT TIME ZONE 'UTC')::date + 1", "(now() AT TIME ZONE 'UTC')::date - 29",
        ] {
            #expect(
                refused("SELECT scantrack_drop_day_partition('dead_letters', \(day))") == "42501",
                "dead_letters keeps 30 days: \(day)")
        }
        // 'infinity' is clamped to the stored retention: the default partition's future row stays.
        #expect(refused("SELECT scantrack_expire_default('dead_letters', 'infinity', true)") == nil)
        #expect(refused("SELECT scantrack_expire_rollups('infinity', true)") == nil)
        #expect(try W.count(owner, "SELECT count(*) FROM dead_letters") == 3, "nothing current was deleted")

        // No temporary tables for program roles.
        #expect(
            refused("CREATE TEMP TABLE retention_settings (table_name text, time_column text, days integer)") == "42501"
        )
        // With TEMPORARY given back, a shadow of retention_settings still changes nothing: the
        // functions look in pg_temp last.
        try owner.execute("GRANT TEMPORARY ON DATABASE \(database.name) TO \(logins.user("operator"))")
        try operatorDB.execute(
            """
            CREATE TEMP TABLE retention_settings (table_name text, time_column text, days integer, updated_at timestamptz);
            INSERT INTO retention_settings VALUES ('dead_letters', 'received_at', 0, now()), ('rollups', 'bucket', 0, now());
            """)
        #expect(
            refused("SELECT scantrack_drop_day_partition('dead_letters', (now() AT TIME ZONE 'UTC')::date - 3)")
                == "42501")
        #expect(refused("SELECT scantrack_expire_default('dead_letters', 'infinity', true)") == nil)
        #expect(try W.count(owner, "SELECT count(*) FROM dead_letters") == 3)
        #expect(
            try owner.query("SELECT days FROM public.retention_settings WHERE table_name = 'dead_letters'").rows.first?[
                0]
                == "30")
    }

    @Test("every function that runs with its owner's rights looks in pg_catalog first and pg_temp last")
    func definerSearchPaths() throws {
        let database = try MigratedDatabase(prefix: "st_definer")
        defer { database.drop() }
        let rows = try database.connection.query(
            """
            SELECT p.proname, coalesce(array_to_string(p.proconfig, ';'), '')
            FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE p.prosecdef AND n.nspname = 'public' ORDER BY 1
            """
        ).rows
        let found = rows.map { ($0[0] ?? "?", $0[1] ?? "") }
        #expect(found.contains { $0.0 == "scantrack_apply_order" }, "\(found)")
        for (name, config) in found {
            #expect(config.contains("search_path=pg_catalog, public, pg_temp"), "\(name): \(config)")
        }
    }

    typealias W = Counting
}

/// `SELECT count(*) …` as an Int.
enum Counting {
    static func count(_ database: PGConnection, _ sql: String) throws -> Int {
        Int(try database.query(sql).rows.first?.first??.description ?? "0") ?? -1
    }
}
