import Foundation

/// A database of its own per test, so tests run in parallel and `make test` can run twice.
/// Created through the server `SCANTRACK_PG` names; dropped by `drop()`.
public struct TestDatabase: Sendable {
    public let name: String
    public let dsn: String
    let adminDSN: String

    /// The DSN of `SCANTRACK_PG` with another database: key=value DSNs take the last `dbname`.
    public static func dsn(_ base: String, database: String) -> String {
        base + " dbname=\(database)"
    }

    public init(adminDSN: String, name: String) {
        self.adminDSN = adminDSN
        self.name = name
        self.dsn = Self.dsn(adminDSN, database: name)
    }
}

import ScanPostgres

/// A fresh database with the repository's migrations applied, and how to drop it.
public struct MigratedDatabase {
    public let name: String
    public let dsn: String
    public let connection: PGConnection
    public let drop: () -> Void

    /// Creates `<prefix>_<unique>` on the server `SCANTRACK_PG` names (failing under CI when
    /// there is none) and migrates it.
    public init(prefix: String) throws {
        let base = try TestEnvironment.requirePostgres()
        let admin = try PGConnection(dsn: base)
        let name = TestEnvironment.uniqueName(prefix)
        try admin.execute("CREATE DATABASE \(name)")
        self.name = name
        dsn = TestDatabase.dsn(base, database: name)
        connection = try PGConnection(dsn: dsn)
        try Migrator(directory: TestEnvironment.repoRoot + "/migrations").migrate(connection)
        drop = { _ = try? admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
    }
}
