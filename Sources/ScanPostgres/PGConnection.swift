internal import CLibPQ
import Foundation
import ScanCore

/// A bound parameter. Values are always sent separately from the SQL text: never interpolated.
public enum PGValue: Sendable, Equatable {
    case null
    case text(String)
    /// Raw bytes sent in binary format, for `bytea` columns.
    case bytes([UInt8])

    public static func int(_ value: Int) -> PGValue { .text(String(value)) }
    public static func optionalText(_ value: String?) -> PGValue { value.map { .text($0) } ?? .null }
}

/// Rows of a finished statement, read as text.
public struct PGRows: Sendable, Equatable {
    public var columns: [String]
    public var rows: [[String?]]
    /// Rows touched by INSERT/UPDATE/DELETE/COPY.
    public var affected: Int

    public subscript(row: Int, column: String) -> String? {
        guard let index = columns.firstIndex(of: column) else { return nil }
        return rows[row][index]
    }
}

/// Owns one `PGconn`. Blocking: call it from a thread of its own, never from the shared
/// async executor. Not `Sendable`: one connection serves one thread at a time.
/// SQL fragments several stores write the same way.
enum SQLText {
    /// A `timestamptz` expression as RFC 3339 text in UTC with milliseconds, as events write times.
    static func utc(_ expression: String) -> String {
        "to_char(\(expression) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"
    }
}

public final class PGConnection {
    private let connection: OpaquePointer
    public let redactedDSN: String

    /// The environment variable naming a file that holds the password (a mounted secret): it is
    /// used instead of any password in the DSN, and is never in argv, the DSN or a log.
    public static let passwordFileVariable = "SCANTRACK_PG_PASSWORD_FILE"

    /// Connects with `dsn` (key=value or URI). The password may also come from libpq's own
    /// PGPASSWORD, PGPASSFILE (~/.pgpass) or PGSERVICEFILE, or from `passwordFile`, a file holding
    /// only the password (a program takes it from --pg-password-file or
    /// $SCANTRACK_PG_PASSWORD_FILE and passes it here).
    public init(dsn: String, passwordFile: String? = nil) throws(PGError) {
        let shown = ScanPostgres.redactedDSN(dsn)
        var keywords = ["dbname"]
        var values = [dsn]
        if let passwordFile {
            keywords.append("password")
            values.append(try Self.readPassword(passwordFile))
        }
        // NULL-terminated arrays, as PQconnectdbParams reads them.
        let made: OpaquePointer? = withPointers(to: keywords.map { Array($0.utf8CString) } + [nil]) { keywordPointers in
            withPointers(to: values.map { Array($0.utf8CString) } + [nil]) { valuePointers in
                PQconnectdbParams(keywordPointers, valuePointers, 1)
            }
        }
        guard let connection = made else {
            throw PGError(code: .connectionFailed, function: "PQconnectdb", input: shown, message: "out of memory")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.trimmed(PQerrorMessage(connection))
            PQfinish(connection)
            throw PGError(code: .connectionFailed, function: "PQconnectdb", input: shown, message: message)
        }
        self.connection = connection
        self.redactedDSN = shown
        // Quiet NOTICEs (e.g. "relation already exists, skipping") instead of printing them on stderr.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
    }

    deinit { PQfinish(connection) }

    /// The password in a secret file: its first line (a trailing newline is not part of it).
    static func readPassword(_ path: String) throws(PGError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw PGError(
                code: .connectionFailed, function: "read password file", input: path,
                message: "cannot read the file (\(passwordFileVariable))")
        }
        guard let password = SecretText.firstLine(data) else {
            throw PGError(
                code: .connectionFailed, function: "read password file", input: path, message: "the file is empty")
        }
        return password
    }

    public var isHealthy: Bool { PQstatus(connection) == CONNECTION_OK }

    /// The SCRAM-SHA-256 verifier of `password` for `user`, computed by libpq on this side.
    func scramVerifier(password: String, user: String) throws(PGError) -> String {
        guard let made = PQencryptPasswordConn(connection, password, user, "scram-sha-256") else {
            throw PGError(
                code: .queryFailed, function: "PQencryptPasswordConn", input: user,
                message: Self.trimmed(PQerrorMessage(connection)))
        }
        defer { PQfreemem(made) }
        return String(cString: made)
    }

    /// The password libpq connected with (tests check where it came from).
    var passwordInUse: String? { PQpass(connection).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } }

    /// Runs SQL without parameters; may hold several statements (migrations). Returns the last result.
    @discardableResult
    public func execute(_ sql: String) throws(PGError) -> PGRows {
        let result = PQexec(connection, sql)
        return try consume(result, function: "PQexec", sql: sql)
    }

    /// Runs one statement with bound parameters ($1, $2, …).
    @discardableResult
    public func query(_ sql: String, _ parameters: [PGValue] = []) throws(PGError) -> PGRows {
        let count = parameters.count
        var buffers: [[CChar]?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        buffers.reserveCapacity(count)
        for parameter in parameters {
            switch parameter {
            case .null:
                buffers.append(nil)
                lengths.append(0)
                formats.append(0)
            case .text(let text):
                buffers.append(Array(text.utf8CString))
                lengths.append(0)
                formats.append(0)
            case .bytes(let bytes):
                buffers.append(bytes.map { CChar(bitPattern: $0) })
                lengths.append(Int32(bytes.count))
                formats.append(1)
            }
        }
        let result = withPointers(to: buffers) { values in
            PQexecParams(connection, sql, Int32(count), nil, values, lengths, formats, 0)
        }
        return try consume(result, function: "PQexecParams", sql: sql)
    }

    /// `COPY … FROM STDIN` in text format: every value is escaped, nil is NULL.
    @discardableResult
    public func copyIn(_ copySQL: String, rows: [[String?]]) throws(PGError) -> Int {
        let start = PQexec(connection, copySQL)
        let startStatus = PQresultStatus(start)
        guard startStatus == PGRES_COPY_IN else {
            _ = try consume(start, function: "PQexec", sql: copySQL)
            throw PGError(
                code: .copyFailed, function: "PQexec", input: Self.excerpt(copySQL), message: "not a COPY FROM STDIN")
        }
        PQclear(start)
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 16)
        var failure: String?
        func send() {
            guard failure == nil, !buffer.isEmpty else { return }
            let ok = buffer.withUnsafeBufferPointer { raw in
                raw.withMemoryRebound(to: CChar.self) { PQputCopyData(connection, $0.baseAddress, Int32($0.count)) }
            }
            if ok != 1 { failure = Self.trimmed(PQerrorMessage(connection)) }
            buffer.removeAll(keepingCapacity: true)
        }
        for row in rows {
            for (index, value) in row.enumerated() {
                if index > 0 { buffer.append(0x09) }
                if let value { Self.appendCopyEscaped(value, to: &buffer) } else { buffer += [0x5C, 0x4E] }
            }
            buffer.append(0x0A)
            if buffer.count >= 1 << 16 { send() }
        }
        send()
        if PQputCopyEnd(connection, failure) != 1 {
            failure = failure ?? Self.trimmed(PQerrorMessage(connection))
        }
        var affected = 0
        var serverError: PGError?
        while let result = PQgetResult(connection) {
            if PQresultStatus(result) == PGRES_COMMAND_OK {
                affected = Int(String(cString: PQcmdTuples(result))) ?? 0
            } else if serverError == nil {
                serverError = error(from: result, function: "PQputCopyEnd", sql: copySQL, code: .copyFailed)
            }
            PQclear(result)
        }
        if let serverError { throw serverError }
        if let failure {
            throw PGError(code: .copyFailed, function: "PQputCopyData", input: Self.excerpt(copySQL), message: failure)
        }
        return affected
    }

    /// Runs `body` inside BEGIN/COMMIT; rolls back when it throws.
    public func transaction<T>(_ body: () throws(PGError) -> T) throws(PGError) -> T {
        try execute("BEGIN")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            if isHealthy { _ = try? execute("ROLLBACK") }
            throw error
        }
    }

    // MARK: - Helpers

    private func consume(_ result: OpaquePointer?, function: String, sql: String) throws(PGError) -> PGRows {
        guard let result else {
            throw PGError(
                code: isHealthy ? .queryFailed : .connectionFailed, function: function, input: Self.excerpt(sql),
                message: Self.trimmed(PQerrorMessage(connection)))
        }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return Self.rows(of: result)
        default:
            throw error(from: result, function: function, sql: sql, code: .queryFailed)
        }
    }

    private func error(from result: OpaquePointer, function: String, sql: String, code: PGError.Code) -> PGError {
        let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
        var message = Self.trimmed(PQresultErrorMessage(result))
        if message.isEmpty { message = Self.trimmed(PQerrorMessage(connection)) }
        let lost = PQstatus(connection) != CONNECTION_OK
        return PGError(
            code: lost ? .connectionFailed : code, function: function, input: Self.excerpt(sql), sqlState: state,
            message: message)
    }

    private static func rows(of result: OpaquePointer) -> PGRows {
        let rowCount = Int(PQntuples(result))
        let columnCount = Int(PQnfields(result))
        var columns: [String] = []
        for column in 0..<columnCount { columns.append(String(cString: PQfname(result, Int32(column)))) }
        var rows: [[String?]] = []
        rows.reserveCapacity(rowCount)
        for row in 0..<rowCount {
            var values: [String?] = []
            values.reserveCapacity(columnCount)
            for column in 0..<columnCount {
                if PQgetisnull(result, Int32(row), Int32(column)) == 1 {
                    values.append(nil)
                } else {
                    let length = Int(PQgetlength(result, Int32(row), Int32(column)))
                    // Non-nil for a valid row and column; an empty text if libpq ever said otherwise.
                    guard let value = PQgetvalue(result, Int32(row), Int32(column)) else {
                        values.append("")
                        continue
                    }
                    values.append(
                        value.withMemoryRebound(to: UInt8.self, capacity: length) {
                            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
                        })
                }
            }
            rows.append(values)
        }
        let affected = Int(String(cString: PQcmdTuples(result))) ?? 0
        return PGRows(columns: columns, rows: rows, affected: affected)
    }

    static func appendCopyEscaped(_ value: String, to buffer: inout [UInt8]) {
        var value = value
        value.withUTF8 { bytes in
            // Most values need no escaping: copy them whole.
            guard bytes.contains(where: { $0 == 0x5C || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) else {
                buffer.append(contentsOf: bytes)
                return
            }
            for byte in bytes {
                switch byte {
                case 0x5C: buffer.append(contentsOf: [0x5C, 0x5C])
                case 0x09: buffer.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                case 0x0A: buffer.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: buffer.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                default: buffer.append(byte)
                }
            }
        }
    }

    static func trimmed(_ message: UnsafePointer<CChar>?) -> String {
        guard let message else { return "" }
        var text = String(cString: message)
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return text
    }

    /// The start of a statement, for error messages (never its parameters).
    static func excerpt(_ sql: String) -> String {
        let flat = sql.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        return flat.count > 80 ? String(flat.prefix(77)) + "..." : flat
    }
}

/// Calls `body` with a C array of pointers into `buffers` (nil stays NULL). All buffers are
/// laid out in one allocation, so any number of parameters costs one pinning.
private func withPointers<R>(to buffers: [[CChar]?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    var storage: [CChar] = []
    var offsets: [Int?] = []
    offsets.reserveCapacity(buffers.count)
    for buffer in buffers {
        if let buffer {
            offsets.append(storage.count)
            storage += buffer
        } else {
            offsets.append(nil)
        }
    }
    if storage.isEmpty { storage.append(0) }
    return storage.withUnsafeBufferPointer { raw in
        // A non-empty array always has a base address.
        body(offsets.map { offset in offset.flatMap { raw.baseAddress.map(UnsafePointer.init)?.advanced(by: $0) } })
    }
}

/// One connection kept for a long-running loop: opened on first use and opened again after
/// PostgreSQL went away (a restart pauses the loop, it does not end it).
public final class PGReconnecting {
    public let dsn: String
    public let passwordFile: String?
    private var current: PGConnection?

    public init(dsn: String, passwordFile: String? = nil) {
        self.dsn = dsn
        self.passwordFile = passwordFile
    }

    /// A live connection; throws while PostgreSQL cannot be reached.
    public func connection() throws(PGError) -> PGConnection {
        if let current, current.isHealthy { return current }
        current = nil
        let fresh = try PGConnection(dsn: dsn, passwordFile: passwordFile)
        current = fresh
        return fresh
    }

    /// Drops the connection (after an error that may have broken it).
    public func reset() { current = nil }
}
