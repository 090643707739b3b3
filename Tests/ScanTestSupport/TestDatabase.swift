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
