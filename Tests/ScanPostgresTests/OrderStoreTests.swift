import ScanCore
import ScanReconciliation
import ScanTestSupport
import ScanTestTiming
import Testing

@testable import ScanPostgres

/// `scantrack_apply_order` (migrations/0010): orders by revision, from NATS or CSV, and what the
/// aggregator's role may do with them.
@Suite("orders by revision", .timed, .enabled(if: TestEnvironment.postgresEnabled))
struct OrderStoreTests {
    @Test(
        "a newer revision replaces the lines, an equal or older one changes nothing, a cancel hides the order from packing; CSV imports take the next revision"
    )
    func revisions() throws {
        let database = try MigratedDatabase(prefix: "st_orders")
        defer { database.drop() }
        let store = SiteStore(connection: database.connection)
        let first = [(line: 1, code: "4006381333931", quantity: 2)]
        #expect(
            try store.applyOrder(id: "ORD-1", site: "dc1", revision: 3, cancel: false, lines: first, source: "nats")
                == 0)
        #expect(try store.orderLines(site: "dc1", "ORD-1") == [OrderLine(line: 1, code: "4006381333931", expected: 2)])
        // The same revision again, and an older one with other lines: nothing changes.
        #expect(
            try store.applyOrder(id: "ORD-1", site: "dc1", revision: 3, cancel: false, lines: first, source: "nats")
                == 3)
        let other = [
            (line: 1, code: "X'; DROP TABLE orders; --", quantity: 9), (line: 2, code: "a\"b,{c}", quantity: 1),
        ]
        #expect(
            try store.applyOrder(id: "ORD-1", site: "dc1", revision: 2, cancel: false, lines: other, source: "nats")
                == 3)
        #expect(try store.orderLines(site: "dc1", "ORD-1")?.map(\.expected) == [2])
        // A newer one replaces them, metacharacters stored as text.
        #expect(
            try store.applyOrder(id: "ORD-1", site: "dc1", revision: 4, cancel: false, lines: other, source: "nats")
                == 3)
        #expect(try store.orderLines(site: "dc1", "ORD-1")?.map(\.code) == ["X'; DROP TABLE orders; --", "a\"b,{c}"])
        // Cancelled: no order for packing; an older create afterwards does not bring it back.
        #expect(
            try store.applyOrder(id: "ORD-1", site: "dc1", revision: 5, cancel: true, lines: [], source: "nats") == 4)
        #expect(try store.orderLines(site: "dc1", "ORD-1") == nil)
        #expect(try store.orderState(site: "dc1", "ORD-1")?.cancelled == true)
        #expect(
            try store.applyOrder(id: "ORD-1", site: "dc1", revision: 1, cancel: false, lines: first, source: "nats")
                == 5)
        #expect(try store.orderLines(site: "dc1", "ORD-1") == nil)
        // A CSV import for the site is the next revision, and brings it back.
        try store.importOrders(
            [OrderCSV.Order(id: "ORD-1", lines: [OrderLine(line: 1, code: "5012345678900", expected: 1)])],
            site: "dc1", source: "orders.csv")
        #expect(try store.orderState(site: "dc1", "ORD-1")?.revision == 6)
        #expect(try store.orderLines(site: "dc1", "ORD-1") == [OrderLine(line: 1, code: "5012345678900", expected: 1)])
    }

    @Test(
        "orders are a site's: another site's order of the same id is another order, untouched by this one's revisions and cancels; one imported for every site serves a site without its own"
    )
    func perSite() throws {
        let database = try MigratedDatabase(prefix: "st_orders_sites")
        defer { database.drop() }
        let store = SiteStore(connection: database.connection)
        let a = [(line: 1, code: "A", quantity: 1)]
        let b = [(line: 1, code: "B", quantity: 2)]
        #expect(
            try store.applyOrder(id: "ORD-1", site: "dc1", revision: 1, cancel: false, lines: a, source: "nats") == 0)
        // dc2's WMS sends the same id: a new order of dc2's, whatever its revision.
        #expect(
            try store.applyOrder(id: "ORD-1", site: "dc2", revision: 7, cancel: false, lines: b, source: "nats") == 0)
        #expect(
            try store.applyOrder(id: "ORD-1", site: "dc2", revision: 8, cancel: true, lines: [], source: "nats") == 7)
        #expect(try store.orderLines(site: "dc1", "ORD-1") == [OrderLine(line: 1, code: "A", expected: 1)])
        #expect(try store.orderState(site: "dc1", "ORD-1")?.revision == 1)
        #expect(try store.orderLines(site: "dc2", "ORD-1") == nil, "dc2's own is cancelled")
        // Imported for every site: serves dc3, which has none of its own; not dc1 or dc2.
        try store.importOrders(
            [OrderCSV.Order(id: "ORD-1", lines: [OrderLine(line: 1, code: "C", expected: 3)])], source: "orders.csv")
        #expect(try store.orderLines(site: "dc3", "ORD-1") == [OrderLine(line: 1, code: "C", expected: 3)])
        #expect(try store.orderLines(site: "dc1", "ORD-1")?.map(\.code) == ["A"])
        #expect(try store.orderLines(site: "dc2", "ORD-1") == nil)
        #expect(try store.orderState(site: nil, "ORD-1")?.revision == 1)
    }

    @Test(
        "a revision more than a million past the stored one is refused (-1) and changes nothing: nobody freezes an existing order at 2147483647"
    )
    func revisionJump() throws {
        let database = try MigratedDatabase(prefix: "st_orders_jump")
        defer { database.drop() }
        let store = SiteStore(connection: database.connection)
        let a = [(line: 1, code: "A", quantity: 1)]
        #expect(try store.applyOrder(id: "O", site: "dc1", revision: 5, cancel: false, lines: a, source: "nats") == 0)
        #expect(
            try store.applyOrder(id: "O", site: "dc1", revision: 2_147_483_647, cancel: true, lines: [], source: "nats")
                == SiteStore.revisionJumpRefused)
        #expect(try store.orderState(site: "dc1", "O")?.revision == 5)
        #expect(try store.orderLines(site: "dc1", "O")?.map(\.code) == ["A"])
        // Exactly a million past: taken. A first revision may be any (a WMS numbering by date).
        #expect(
            try store.applyOrder(id: "O", site: "dc1", revision: 1_000_005, cancel: false, lines: a, source: "nats")
                == 5)
        #expect(
            try store.applyOrder(id: "N", site: "dc1", revision: 20_261_126, cancel: false, lines: a, source: "nats")
                == 0)
        #expect(try store.orderState(site: "dc1", "N")?.revision == 20_261_126)
    }

    @Test("the aggregator's role applies orders only through the function: it cannot delete or rewrite them")
    func writerUsesTheFunctionOnly() throws {
        let database = try MigratedDatabase(prefix: "st_orders_roles")
        let logins = try RoleLogins(database)
        defer {
            logins.drop()
            database.drop()
        }
        let writer = try PGConnection(dsn: try logins.dsn("writer"), passwordFile: logins.passwordFile("writer"))
        let store = SiteStore(connection: writer)
        #expect(
            try store.applyOrder(
                id: "ORD-9", site: "dc1", revision: 1, cancel: false, lines: [(1, "4006381333931", 1)], source: "nats")
                == 0)
        #expect(try store.orderState(site: "dc1", "ORD-9")?.revision == 1)
        for sql in ["DELETE FROM order_lines", "UPDATE orders SET revision = 99", "DELETE FROM orders"] {
            do {
                try writer.execute(sql)
                Issue.record("the writer ran \(sql)")
            } catch {
                #expect(error.sqlState == "42501", "\(sql): \(error)")
            }
        }
    }
}
