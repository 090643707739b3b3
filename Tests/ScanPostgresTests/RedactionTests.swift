import ScanTestTiming
import Testing

@testable import ScanPostgres

/// Connection strings in messages and logs: the password never shows, whatever form it is in.
@Suite("DSN redaction", .timed)
struct RedactionTests {
    @Test("every DSN form loses its secrets: URI user part and query, key=value with spaces and quotes")
    func forms() {
        let cases: [(String, String)] = [
            ("host=db password=hunter2 user=x", "host=db password=*** user=x"),
            ("host=db password = hunter2 user=x", "host=db password=*** user=x"),
            ("host=db password='hunter 2 \\' more' user=x", "host=db password=*** user=x"),
            ("host=db PASSWORD='hunter2'", "host=db password=***"),
            ("host=db sslpassword=hunter2 sslkey=/k.pem", "host=db sslpassword=*** sslkey=/k.pem"),
            ("postgresql://scan:hunter2@db:5432/st", "postgresql://scan:***@db:5432/st"),
            (
                "postgresql://db/st?user=scan&password=hunter2&sslmode=require",
                "postgresql://db/st?user=scan&password=***&sslmode=require"
            ),
            ("postgres://scan:hunter2@db/st?sslpassword=hunter2", "postgres://scan:***@db/st?sslpassword=***"),
            ("postgresql://db/st", "postgresql://db/st"),
            // libpq decodes a query's keys: these are `password` and `sslpassword` too.
            ("postgresql://db/st?pass%77ord=hunter2&user=x", "postgresql://db/st?pass%77ord=***&user=x"),
            ("postgresql://db/st?%50ASSWORD=hunter2", "postgresql://db/st?%50ASSWORD=***"),
            ("postgresql://db/st?ssl%70assword=hunter2", "postgresql://db/st?ssl%70assword=***"),
            ("postgresql://db/st?pass%zzword=hunter2", "postgresql://db/st?pass%zzword=***"),
        ]
        for (dsn, shown) in cases {
            #expect(redactedDSN(dsn) == shown, "\(dsn)")
            #expect(!redactedDSN(dsn).contains("hunter"), "\(dsn)")
        }
        #expect(redactedDSN("host=db password='hunter2") == "(a connection string that cannot be shown)")
        #expect(redactedDSN("hunter2") == "(a connection string that cannot be shown)")
    }
}
