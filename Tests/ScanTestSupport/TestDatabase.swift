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

/// An empty database of its own, `<prefix>_<unique>`, on the server `SCANTRACK_PG` names (failing
/// under CI when there is none); `drop()` removes it.
public struct ScratchDatabase {
    public let name: String
    public let dsn: String
    private let admin: PGConnection

    public init(prefix: String) throws {
        let base = try TestEnvironment.requirePostgres()
        admin = try PGConnection(dsn: base)
        name = TestEnvironment.uniqueName(prefix)
        try admin.execute("CREATE DATABASE \(name)")
        dsn = TestDatabase.dsn(base, database: name)
    }

    public func drop() { _ = try? admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
}

/// A fresh database with the repository's migrations applied, and how to drop it.
public struct MigratedDatabase {
    public let name: String
    public let dsn: String
    public let connection: PGConnection
    public let drop: () -> Void

    /// A `ScratchDatabase` of `prefix`, migrated.
    public init(prefix: String) throws {
        let scratch = try ScratchDatabase(prefix: prefix)
        name = scratch.name
        dsn = scratch.dsn
        connection = try PGConnection(dsn: dsn)
        try Migrator(directory: TestEnvironment.repoRoot + "/migrations").migrate(connection)
        drop = scratch.drop
    }
}

/// migrations/roles/roles.sql applied to a migrated database, and one login per program role with a
/// password in a file of its own, as docs/security.md sets them up. The logins are members of
/// `scantrack_tls_login`, whom the local server lets in only with that password over TLS
/// (scripts/servers.sh); `dsn` asks for `sslmode=verify-full` against its CA.
public struct RoleLogins {
    /// Login (writer, operator, reporter) → the role of migrations/roles/roles.sql it is in.
    public static let roles = [
        "writer": "scantrack_writer", "operator": "scantrack_operator", "reporter": "scantrack_reporter",
    ]

    public let database: MigratedDatabase
    public let suffix = TestEnvironment.uniqueName("u")
    public let folder: String

    public init(_ database: MigratedDatabase) throws {
        self.database = database
        folder = NSTemporaryDirectory() + suffix
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try database.connection.execute(
            try String(contentsOfFile: TestEnvironment.repoRoot + "/migrations/roles/roles.sql", encoding: .utf8))
        for (login, role) in Self.roles {
            // Quote, backslash and semicolon: the password travels as written, never in SQL or a DSN.
            let password = "pw-\(login)-'\\;\(UInt32.random(in: 0..<UInt32.max))"
            try (password + "\n").write(toFile: passwordFile(login), atomically: true, encoding: .utf8)
            let literal = "'" + password.replacingOccurrences(of: "'", with: "''") + "'"
            try database.connection.execute(
                "CREATE ROLE \(user(login)) LOGIN PASSWORD \(literal) IN ROLE \(role), scantrack_tls_login")
        }
    }

    public func user(_ login: String) -> String { "\(login)_\(suffix)" }
    public func passwordFile(_ login: String) -> String { "\(folder)/\(login)" }

    /// The database's DSN for `login` over TLS, the server's certificate checked against the CA.
    public func dsn(_ login: String) throws -> String {
        database.dsn + " user=\(user(login)) sslmode=verify-full sslrootcert=\(try TestEnvironment.requirePostgresCA())"
    }

    /// Drops the logins and the password files (the database is the caller's to drop).
    public func drop() {
        for login in Self.roles.keys { _ = try? database.connection.execute("DROP ROLE IF EXISTS \(user(login))") }
        try? FileManager.default.removeItem(atPath: folder)
    }
}
