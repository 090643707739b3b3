import Foundation
import ScanPostgres

/// The dashboard's one database connection, used by one request at a time on a thread of its
/// own (libpq blocks; the HTTP server's event loops must not). The session is read-only at the
/// database too, and each request reads one snapshot (a repeatable-read transaction), so the
/// figures and lists of one page agree even while the aggregator writes. The coding desk has a
/// second one that is not read-only (`readOnly` false), used only through `use`.
final class DashboardDatabase: @unchecked Sendable {
    // @unchecked: `connections` and `configured` are touched on `queue` only.
    private let queue = DispatchQueue(label: "scanadmin.serve.database")
    private let connections: PGReconnecting
    private var configured: ObjectIdentifier?

    /// A query running longer is cancelled by PostgreSQL (the page shows it as not updated).
    private let statementTimeoutMilliseconds: Int

    private let readOnly: Bool

    init(dsn: String, passwordFile: String? = nil, statementTimeoutMilliseconds: Int, readOnly: Bool = true) {
        connections = PGReconnecting(dsn: dsn, passwordFile: passwordFile)
        self.statementTimeoutMilliseconds = statementTimeoutMilliseconds
        self.readOnly = readOnly
    }

    /// Runs `body` in one read-only snapshot.
    func read<T: Sendable>(_ body: @escaping @Sendable (PGConnection) throws -> T) async throws -> T {
        try await use { connection in
            _ = try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            let result: T
            do {
                result = try body(connection)
            } catch {
                _ = try? connection.execute("ROLLBACK")
                throw error
            }
            _ = try connection.execute("COMMIT")
            return result
        }
    }

    /// Runs `body` with a live connection; a failed query drops the connection, so the next
    /// request connects again (PostgreSQL restarted, or the network came back).
    func use<T: Sendable>(_ body: @escaping @Sendable (PGConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                do {
                    continuation.resume(returning: try body(try self.connection()))
                } catch {
                    if error is PGError {
                        self.connections.reset()
                        self.configured = nil
                    }
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    private func connection() throws(PGError) -> PGConnection {
        let connection = try connections.connection()
        if configured != ObjectIdentifier(connection) {
            if readOnly { _ = try connection.execute("SET default_transaction_read_only = on") }
            _ = try connection.execute("SET statement_timeout = \(statementTimeoutMilliseconds)")
            configured = ObjectIdentifier(connection)
        }
        return connection
    }
}
