import Foundation
import ScanCore
import ScanPostgres
import ScanTestSupport
import ScanTestTiming
import Testing

/// `scanadmin retention` as an operator runs it.
@Suite("scanadmin retention", .timed, .enabled(if: TestEnvironment.postgresEnabled))
struct RetentionCommandTests {
    @Test(
        "--dry-run lists the settings and the expired day partitions and drops nothing; the run drops them; set refuses an unknown table"
    )
    func dryRunThenApply() throws {
        let database = try MigratedDatabase(prefix: "st_retention_cli")
        defer { database.drop() }
        let db = database.connection
        let environment = [
            "SCANTRACK_PG": database.dsn, "SCANTRACK_MIGRATIONS": TestEnvironment.repoRoot + "/migrations",
        ]
        func admin(_ arguments: [String]) throws -> ProcessResult {
            try ProcessRunner.run(MigrateCommandTests.scanadmin, arguments, environment: environment)
        }
        let old = try db.query("SELECT to_char((now() AT TIME ZONE 'UTC')::date - 12, 'YYYYMMDD')").rows.first?[0] ?? ""
        _ = try db.query("SELECT scantrack_create_day_partition('heartbeats', (now() AT TIME ZONE 'UTC')::date - 12)")
        try db.execute(
            """
            INSERT INTO heartbeats (event_id, site, camera, run_id, time, body)
            SELECT 'hb-' || d, 'dc1', 'cam-01', 'r', now() - d * interval '1 day', '{}' FROM unnest(ARRAY[0, 12]) d
            """)

        let set = try admin(["retention", "set", "heartbeats", "7"])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdoutText.contains("heartbeats keeps 7 day(s)"))
        let unknown = try admin(["retention", "set", "orders", "7"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("orders") && unknown.stderr.contains("sightings"), "\(unknown.stderr)")

        let dryRun = try admin(["retention", "--dry-run", "--format", "json"])
        #expect(dryRun.status == 0, "\(dryRun.stderr)")
        guard case .array(let rows)? = try? JSONValue.parse(Array(dryRun.stdoutText.utf8)) else {
            Issue.record("not a JSON array: \(dryRun.stdoutText)")
            return
        }
        let heartbeats = rows.first { $0["table"]?.stringValue == "heartbeats" }
        #expect(heartbeats?["days"]?.intValue == 7)
        #expect(heartbeats?["toDrop"]?.intValue == 1, "\(String(describing: heartbeats))")
        #expect(rows.count == 9, "eight tables and the rollups")
        // Parcels, decisions and measurements are partitioned by day like the others: kept 90 days,
        // partitions made from yesterday to three days ahead.
        for table in ["parcels", "decisions", "measurements"] {
            let row = rows.first { $0["table"]?.stringValue == table }
            #expect(
                row?["days"]?.intValue == 90 && (row?["partitions"]?.intValue ?? 0) >= 5, "\(String(describing: row))")
        }
        #expect(try db.query("SELECT count(*) FROM heartbeats").rows.first?[0] == "2", "a dry run drops nothing")

        // Bare `retention` shows and changes nothing; `apply` drops.
        let shown = try admin(["retention"])
        #expect(shown.status == 0 && shown.stdoutText.contains("retention apply"), "\(shown.stdoutText)")
        #expect(try db.query("SELECT count(*) FROM heartbeats").rows.first?[0] == "2", "showing drops nothing")
        let run = try admin(["retention", "apply", "--progress"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutText.contains("dropped 1 partition(s) (heartbeats_\(old))"), "\(run.stdoutText)")
        // --progress: each step on stderr as it starts, in order.
        let steps = run.stderr.split(separator: "\n").map(String.init)
        #expect(
            steps.first?.hasPrefix("scanadmin retention apply: dropping heartbeats_\(old) (1 of 1, about ") == true,
            "\(run.stderr)")
        #expect(
            steps.contains {
                $0.contains(": deleting heartbeats rows before ") && $0.hasSuffix(" outside day partitions")
            }, "\(run.stderr)")
        #expect(steps.contains("scanadmin retention apply: making partitions ahead"), "\(run.stderr)")
        #expect(try db.query("SELECT event_id FROM heartbeats").rows.map { $0[0] } == ["hb-0"])
    }
}
