import Foundation
import ScanTestSupport
import ScanTestTiming
import Testing

@testable import ScanPostgres

/// Against the real PostgreSQL that `make test` starts.
@Suite("libpq wrapper", .timed, .enabled(if: TestEnvironment.postgresEnabled))
struct PGConnectionTests {
    let connection: PGConnection
    let table: String

    init() throws {
        connection = try PGConnection(dsn: try TestEnvironment.requirePostgres())
        table = TestEnvironment.uniqueName("codes")
        try connection.execute("CREATE TABLE \(table) (id serial PRIMARY KEY, code text UNIQUE, note text, raw bytea)")
    }

    static let hostile = [
        "'; DROP TABLE sightings; --",
        "Robert'); DELETE FROM codes WHERE ('1'='1",
        "\"quoted\" \\backslash\\ $1 $$dollar$$ ;;; ",
        "tab\tnewline\ncarriage\rend",
        "emoji 📦🚚 and ünïcödé",
        "]C1\u{1D}0104012345678901\u{1D}21ABC",
    ]

    @Test("parameterised insert returns quotes and semicolons unchanged", arguments: hostile)
    func parameterisedRoundTrip(value: String) throws {
        defer { _ = try? connection.execute("DROP TABLE IF EXISTS \(table)") }
        let inserted = try connection.query("INSERT INTO \(table) (code) VALUES ($1) RETURNING id", [.text(value)])
        #expect(inserted.rows.count == 1)
        let back = try connection.query("SELECT code FROM \(table) WHERE code = $1", [.text(value)])
        #expect(back.rows == [[value]])
        #expect(try connection.query("SELECT count(*) AS n FROM \(table)")[0, "n"] == "1")
    }

    @Test("rows are read by column name; a bad value, a NULL or a missing column is an error naming the column")
    func namedRows() throws {
        defer { _ = try? connection.execute("DROP TABLE IF EXISTS \(table)") }
        let row = try #require(
            try connection.query(
                "SELECT 42 AS count, 'soon' AS first_seen_ms, NULL::text AS note, true AS closed, 1795800000000 AS at_ms"
            ).named("test query").first)
        #expect(try row.int("count") == 42)
        #expect(try row.bool("closed"))
        #expect(try row.milliseconds("at_ms").milliseconds == 1_795_800_000_000)
        #expect(try row.optionalText("note") == nil)
        #expect(throws: PGError.self) { try row.milliseconds("first_seen_ms") }
        do {
            _ = try row.milliseconds("first_seen_ms")
        } catch {
            #expect(
                error.description == "test query (first_seen_ms): first_seen_ms 'soon' is not a time in milliseconds")
        }
        do {
            _ = try row.text("note")
        } catch {
            #expect(error.message == "note is NULL")
        }
        do {
            _ = try row.int("missing")
        } catch {
            #expect(error.message == "the result has no column 'missing'")
        }
    }

    @Test("binary parameters and NULL round-trip")
    func binaryAndNull() throws {
        defer { _ = try? connection.execute("DROP TABLE IF EXISTS \(table)") }
        let bytes: [UInt8] = [0, 1, 2, 0xFF, 0x27, 0x3B, 0]
        try connection.query(
            "INSERT INTO \(table) (code, note, raw) VALUES ($1, $2, $3)", [.text("b"), .null, .bytes(bytes)])
        let back = try connection.query("SELECT note, encode(raw, 'hex') AS hex FROM \(table) WHERE code = 'b'")
        #expect(back[0, "note"] == nil)
        #expect(back[0, "hex"] == "000102ff273b00")
    }

    @Test("COPY FROM STDIN loads a batch with escapes and NULLs")
    func copyBatch() throws {
        defer { _ = try? connection.execute("DROP TABLE IF EXISTS \(table)") }
        var rows: [[String?]] = Self.hostile.enumerated().map { index, value in
            [value, index.isMultiple(of: 2) ? nil : "n\(index)"]
        }
        for index in 0..<2_000 { rows.append(["bulk-\(index)", "x"]) }
        let count = try connection.copyIn("COPY \(table) (code, note) FROM STDIN", rows: rows)
        #expect(count == rows.count)
        let back = try connection.query("SELECT code, note FROM \(table) WHERE code NOT LIKE 'bulk-%' ORDER BY id")
        #expect(back.rows == rows.prefix(Self.hostile.count).map { $0 })
        #expect(try connection.query("SELECT count(*) AS n FROM \(table)")[0, "n"] == String(rows.count))
    }

    @Test("a failing COPY reports PostgreSQL's error and loads nothing")
    func copyFailure() throws {
        defer { _ = try? connection.execute("DROP TABLE IF EXISTS \(table)") }
        do {
            try connection.copyIn("COPY \(table) (code) FROM STDIN", rows: [["same"], ["same"]])
            Issue.record("a duplicate key was accepted by COPY")
        } catch {
            #expect(error.sqlState == "23505")
        }
        #expect(try connection.query("SELECT count(*) AS n FROM \(table)")[0, "n"] == "0")
        // The connection is usable after the failed COPY.
        try connection.query("INSERT INTO \(table) (code) VALUES ($1)", [.text("after")])
    }

    @Test("errors carry the SQLSTATE and the statement, never the parameters")
    func errors() throws {
        defer { _ = try? connection.execute("DROP TABLE IF EXISTS \(table)") }
        try connection.query("INSERT INTO \(table) (code) VALUES ($1)", [.text("secret-value-1")])
        do {
            try connection.query("INSERT INTO \(table) (code) VALUES ($1)", [.text("secret-value-1")])
            Issue.record("duplicate accepted")
        } catch {
            #expect(error.sqlState == "23505")
            #expect(error.description.contains("INSERT INTO"))
            #expect(!error.input.contains("secret-value-1"))
        }
        #expect(throws: PGError.self) { try connection.query("SELEC nonsense") }
    }

    @Test("transactions roll back when the body throws")
    func transactionRollback() throws {
        defer { _ = try? connection.execute("DROP TABLE IF EXISTS \(table)") }
        #expect(throws: PGError.self) {
            try connection.transaction { () throws(PGError) in
                try connection.query("INSERT INTO \(table) (code) VALUES ('in-tx')")
                try connection.query("INSERT INTO \(table) (code) VALUES ('in-tx')")
            }
        }
        #expect(try connection.query("SELECT count(*) AS n FROM \(table)")[0, "n"] == "0")
    }
}

@Suite("PostgreSQL password from a secret file", .timed, .enabled(if: TestEnvironment.postgresEnabled))
struct PGPasswordFileTests {
    @Test(
        "the password comes from the file (first line), over one in the DSN; a missing or empty file is an error naming it"
    )
    func passwordFile() throws {
        let base = try TestEnvironment.requirePostgres()
        let folder = NSTemporaryDirectory() + TestEnvironment.uniqueName("pgsecret")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let secret = folder + "/postgres_password"
        try "s3cret 'with' = spaces\n".write(toFile: secret, atomically: true, encoding: .utf8)
        let connection = try PGConnection(dsn: base + " password=from-dsn", passwordFile: secret)
        #expect(connection.passwordInUse == "s3cret 'with' = spaces")
        #expect(try PGConnection(dsn: base, passwordFile: nil).passwordInUse == nil)
        #expect(!connection.redactedDSN.contains("s3cret"))
        do {
            _ = try PGConnection(dsn: base, passwordFile: folder + "/missing")
            Issue.record("a missing password file was accepted")
        } catch {
            #expect(
                error.description.contains(folder + "/missing")
                    && error.description.contains("SCANTRACK_PG_PASSWORD_FILE"))
        }
        try "".write(toFile: secret, atomically: true, encoding: .utf8)
        #expect(throws: PGError.self) { try PGConnection(dsn: base, passwordFile: secret) }
    }
}

@Suite("connection errors and DSN redaction", .timed)
struct PGConnectionErrorTests {
    @Test("a refused connection names the redacted DSN")
    func refused() {
        do {
            _ = try PGConnection(dsn: "host=127.0.0.1 port=1 user=scan password=hunter2 connect_timeout=2")
            Issue.record("connected to port 1")
        } catch {
            #expect(error.code == .connectionFailed)
            #expect(error.description.contains("port=1"))
            #expect(!error.description.contains("hunter2"))
        }
    }

    @Test("passwords are removed from both DSN forms")
    func redaction() {
        #expect(redactedDSN("host=db password=hunter2 user=x") == "host=db password=*** user=x")
        #expect(redactedDSN("postgresql://scan:hunter2@db:5432/st") == "postgresql://scan:***@db:5432/st")
        #expect(redactedDSN("postgresql://db/st") == "postgresql://db/st")
    }
}
