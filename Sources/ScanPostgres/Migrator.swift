import Foundation
import ScanCore

/// One numbered SQL file of `migrations/`.
public struct Migration: Sendable, Equatable {
    public var version: Int
    public var name: String
    public var sql: String
    /// FNV-1a over the file's bytes: an applied migration whose file later changed is reported.
    public var checksum: String

    /// The version in a migration file's name, `NNNN_description.sql` (nil: not such a name).
    public static func version(ofFile name: String) -> Int? {
        guard name.hasSuffix(".sql") else { return nil }
        let stem = name.dropLast(4)
        guard let underscore = stem.firstIndex(of: "_"), let version = Int(stem[..<underscore]), version > 0 else {
            return nil
        }
        return version
    }

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in sql.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        self.checksum = String(repeating: "0", count: 16 - hex.count) + hex
    }
}

/// Where a migration stands in one database.
public struct MigrationState: Sendable, Equatable {
    public var migration: Migration
    public var appliedAt: String?
    /// The file changed after it was applied.
    public var checksumMismatch: Bool
}

/// Reads `NNNN_name.sql` files and applies the pending ones in order, each once, each in its own
/// transaction, recording them in `scantrack_migrations`. Concurrent runners are serialised by an
/// advisory lock, so two aggregators starting at once cannot apply a migration twice.
public struct Migrator {
    public static let table = "scantrack_migrations"
    /// Arbitrary constant naming ScanTrack's migration lock.
    static let lockKey = 7_242_026

    public let migrations: [Migration]

    public init(migrations: [Migration]) throws(PGError) {
        let sorted = migrations.sorted { $0.version < $1.version }
        for (left, right) in zip(sorted, sorted.dropFirst()) where left.version == right.version {
            throw PGError(
                code: .migrationFailed, function: "Migrator", input: "\(left.name), \(right.name)",
                message: "two migrations have version \(left.version)")
        }
        self.migrations = sorted
    }

    /// Loads every `NNNN_name.sql` of a folder; other files are ignored, a bad name is an error.
    public init(directory: String) throws(PGError) {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw PGError(
                code: .migrationFailed, function: "read migrations", input: directory,
                message: "cannot list the folder (set --migrations or SCANTRACK_MIGRATIONS)")
        }
        var loaded: [Migration] = []
        for name in names where name.hasSuffix(".sql") {
            guard let version = Migration.version(ofFile: name) else {
                throw PGError(
                    code: .migrationFailed, function: "read migrations", input: "\(directory)/\(name)",
                    message: "a migration file is named NNNN_description.sql")
            }
            let path = directory + "/" + name
            guard let data = FileManager.default.contents(atPath: path) else {
                throw PGError(
                    code: .migrationFailed, function: "read migrations", input: path, message: "cannot read the file")
            }
            loaded.append(Migration(version: version, name: name, sql: String(decoding: data, as: UTF8.self)))
        }
        try self.init(migrations: loaded)
    }

    private func ensureTable(_ connection: PGConnection) throws(PGError) {
        try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS \(Self.table) (
                version integer PRIMARY KEY,
                name text NOT NULL,
                checksum text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            )
            """)
    }

    /// Every known migration with whether and when it was applied.
    public func status(_ connection: PGConnection) throws(PGError) -> [MigrationState] {
        let exists = try connection.query("SELECT to_regclass($1) IS NOT NULL AS present", [.text(Self.table)])
        var applied: [Int: (checksum: String, at: String)] = [:]
        if exists[0, "present"] == "t" {
            let rows = try connection.query(
                "SELECT version, checksum, to_char(applied_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') AS at FROM \(Self.table)"
            )
            for row in rows.named("applied migrations") {
                applied[try row.int("version")] = (try row.text("checksum"), try row.text("at"))
            }
        }
        return migrations.map { migration in
            let record = applied[migration.version]
            return MigrationState(
                migration: migration, appliedAt: record?.at,
                checksumMismatch: record.map { $0.checksum != migration.checksum } ?? false)
        }
    }

    /// The migrations not yet applied.
    public func pending(_ connection: PGConnection) throws(PGError) -> [Migration] {
        try status(connection).filter { $0.appliedAt == nil }.map(\.migration)
    }

    /// Throws `schemaBehind`, saying how to migrate, when any migration is pending.
    public func requireCurrent(_ connection: PGConnection) throws(PGError) {
        let waiting = try pending(connection)
        guard waiting.isEmpty else {
            throw PGError(
                code: .schemaBehind, function: "schema check", input: connection.redactedDSN,
                message: "the database schema is behind: \(waiting.count) migration(s) pending "
                    + "(\(waiting.map(\.name).joined(separator: ", "))); run `scanadmin migrate`")
        }
    }

    /// Applies what is pending; returns the migrations it applied (empty when up to date).
    /// `progress` hears what it is doing as it goes: each migration as it starts (a migration
    /// that copies every row may take minutes), and how long it took.
    @discardableResult
    public func migrate(_ connection: PGConnection, progress: ((String) -> Void)? = nil) throws(PGError) -> [Migration]
    {
        try connection.query("SELECT pg_advisory_lock($1)", [.int(Self.lockKey)])
        defer { _ = try? connection.query("SELECT pg_advisory_unlock($1)", [.int(Self.lockKey)]) }
        try ensureTable(connection)
        var applied: [Migration] = []
        let pending = try pending(connection)
        for (index, migration) in pending.enumerated() {
            progress?("applying \(migration.name) (\(index + 1) of \(pending.count))")
            let started = ContinuousClock.now
            do {
                try connection.transaction { () throws(PGError) in
                    try connection.execute(migration.sql)
                    try connection.query(
                        "INSERT INTO \(Self.table) (version, name, checksum) VALUES ($1, $2, $3)",
                        [.int(migration.version), .text(migration.name), .text(migration.checksum)])
                }
            } catch {
                throw PGError(
                    code: .migrationFailed, function: "apply migration", input: migration.name,
                    sqlState: error.sqlState,
                    message: error.message)
            }
            applied.append(migration)
            progress?(
                "applied \(migration.name) in \(String(format: "%.2f s", (ContinuousClock.now - started).seconds))")
        }
        return applied
    }

}
