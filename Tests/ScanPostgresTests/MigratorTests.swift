import Foundation
import ScanTestSupport
import ScanTestTiming
import Testing

@testable import ScanPostgres

@Suite("migrations", .timed, .enabled(if: TestEnvironment.postgresEnabled))
struct MigratorTests {
    /// A fresh database per test, dropped at the end.
    static func withDatabase(_ body: (PGConnection) throws -> Void) throws {
        let scratch = try ScratchDatabase(prefix: "st_migrate")
        defer { scratch.drop() }
        let connection = try PGConnection(dsn: scratch.dsn)
        try body(connection)
    }

    @Test("the repo's migrations apply in order, once; a second run changes nothing")
    func repoMigrations() throws {
        let migrator = try Migrator(directory: TestEnvironment.repoRoot + "/migrations")
        #expect(!migrator.migrations.isEmpty)
        try Self.withDatabase { connection in
            #expect(throws: PGError.self) { try migrator.requireCurrent(connection) }
            let applied = try migrator.migrate(connection)
            #expect(applied.map(\.version) == migrator.migrations.map(\.version))
            #expect(try migrator.migrate(connection).isEmpty)
            try migrator.requireCurrent(connection)
            let recorded = try connection.query("SELECT version FROM scantrack_migrations ORDER BY version")
            #expect(recorded.rows.map { $0[0] } == migrator.migrations.map { String($0.version) })
            // The contract table exists with its contract columns.
            let columns = try connection.query(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'sightings'")
            let names = Set(columns.rows.compactMap { $0[0] })
            for required in ["event_id", "camera", "symbology", "value", "status", "first_seen", "last_seen"] {
                #expect(names.contains(required), "sightings.\(required) is part of the contract")
            }
        }
    }

    @Test("a failing migration is rolled back whole and stops the run, naming the file")
    func failingMigration() throws {
        let migrator = try Migrator(migrations: [
            Migration(version: 1, name: "0001_ok.sql", sql: "CREATE TABLE a (x int);"),
            Migration(version: 2, name: "0002_bad.sql", sql: "CREATE TABLE b (x int); INSERT INTO nowhere VALUES (1);"),
            Migration(version: 3, name: "0003_later.sql", sql: "CREATE TABLE c (x int);"),
        ])
        try Self.withDatabase { connection in
            do {
                try migrator.migrate(connection)
                Issue.record("a broken migration was applied")
            } catch let error as PGError {
                #expect(error.code == .migrationFailed)
                #expect(error.input == "0002_bad.sql")
            }
            let tables = try connection.query(
                "SELECT string_agg(table_name, ',' ORDER BY table_name) AS t FROM information_schema.tables WHERE table_schema = 'public'"
            )
            #expect(tables[0, "t"] == "a,scantrack_migrations", "b must be rolled back and c never run")
            #expect(try migrator.pending(connection).map(\.version) == [2, 3])
        }
    }

    @Test("a migration file changed after it was applied is reported")
    func changedFile() throws {
        let original = try Migrator(migrations: [
            Migration(version: 1, name: "0001_a.sql", sql: "CREATE TABLE a (x int);")
        ])
        let changed = try Migrator(migrations: [
            Migration(version: 1, name: "0001_a.sql", sql: "CREATE TABLE a (y int);")
        ])
        try Self.withDatabase { connection in
            try original.migrate(connection)
            #expect(try changed.status(connection).first?.checksumMismatch == true)
            #expect(try original.status(connection).first?.checksumMismatch == false)
        }
    }

    @Test("two migrations with one version are refused")
    func duplicateVersions() {
        #expect(throws: PGError.self) {
            try Migrator(migrations: [
                Migration(version: 1, name: "0001_a.sql", sql: ""), Migration(version: 1, name: "0001_b.sql", sql: ""),
            ])
        }
    }
}
