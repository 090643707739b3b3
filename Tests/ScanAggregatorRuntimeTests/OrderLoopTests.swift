import Logging
import ScanAggregatorRuntime
import ScanCore
import ScanEvents
import ScanServices
import ScanTestTiming
import ScanTesting
import Testing

/// Orders from the WMS in-process: a scripted orders stream, orders in memory, a recording results
/// stream, on the manual clock.
@Suite("orders from the WMS on the manual clock", .timed)
struct OrderLoopTests {
    struct Parts {
        let clock = ManualClock()
        let consumer: ScriptedConsumer
        let store = MemoryOrderStore()
        let results = RecordingPublisher()
        let loop: OrderLoop

        init() {
            consumer = ScriptedConsumer(clock: clock)
            loop = OrderLoop(
                settings: OrderLoop.Settings(subjects: ContractSubjects(prefix: "scantrack")), consumer: consumer,
                store: store, publisher: results, clock: clock, logger: Logger(label: "test"))
        }

        @discardableResult
        func send(_ order: OrderMessage, subject: String = "scantrack.v1.order.dc1") -> UInt64 {
            consumer.append(subject: subject, bytes: order.json)
        }

        /// The answers published so far, in order.
        func answers() throws -> [OrderAckEvent] {
            try results.published.filter { $0.subject.hasPrefix("scantrack.v1.orderack.") }.map {
                try OrderAckEvent.parse(try JSONValue.parse($0.bytes))
            }
        }
    }

    static func order(
        _ action: OrderMessage.Action = .create, id: String = "ORD-1", revision: Int = 1,
        lines: [OrderMessage.Line] = [OrderMessage.Line(line: 1, code: "4006381333931", quantity: 2)]
    ) -> OrderMessage {
        OrderMessage(
            action: action, orderId: id, revision: revision, site: "dc1",
            time: Timestamp(milliseconds: 1_795_800_000_000), lines: action == .cancel ? [] : lines)
    }

    @Test("a new order is stored and answered accepted; the same message again and an older revision change nothing")
    func idempotent() throws {
        let parts = Parts()
        parts.send(Self.order(revision: 2))
        parts.send(Self.order(revision: 2))  // redelivered (another message id: a WMS retry)
        parts.send(Self.order(.replace, revision: 1, lines: [OrderMessage.Line(line: 1, code: "X", quantity: 9)]))
        let counts = parts.loop.runOnce()
        #expect(counts.messages == 3 && counts.applied == 1 && counts.unchanged == 2)
        #expect(parts.store.order("ORD-1")?.lines.map(\.quantity) == [2], "the older revision changed nothing")
        let answers = try parts.answers()
        #expect(answers.map(\.status) == [.accepted, .unchanged, .unchanged])
        #expect(answers.map(\.storedRevision) == [2, 2, 2])
        #expect(answers.map(\.sequence) == [1, 2, 3])
        #expect(parts.results.published.first?.subject == "scantrack.v1.orderack.dc1")
        #expect(parts.consumer.acknowledged == [1, 2, 3])
    }

    @Test("a newer revision replaces the lines; a cancel with a newer revision cancels the order")
    func replaceAndCancel() throws {
        let parts = Parts()
        parts.send(Self.order())
        parts.send(
            Self.order(
                .replace, revision: 2,
                lines: [
                    OrderMessage.Line(line: 1, code: "4006381333931", quantity: 1),
                    OrderMessage.Line(line: 2, code: "5012345678900", quantity: 3),
                ]))
        parts.loop.runOnce()
        #expect(parts.store.order("ORD-1")?.lines.count == 2)
        parts.send(Self.order(.cancel, revision: 3))
        parts.loop.runOnce()
        #expect(parts.store.order("ORD-1")?.cancelled == true)
        #expect(try parts.answers().map(\.status) == [.accepted, .accepted, .accepted])
    }

    @Test(
        "a bad order is rejected with its reason and field, kept in the dead letters and acknowledged; the orders around it are stored",
        arguments: [
            (
                #"{"type": "order", "action": "create", "orderId": "O", "revision": 1, "site": "dc1", "time": "2026-11-26T06:00:00Z", "lines": [{"line": 1, "code": "A", "quantity": 0}]}"#,
                "bad-value", "lines[0].quantity"
            ),
            (
                #"{"type": "order", "action": "create", "orderId": "O", "revision": 1, "site": "dc1", "time": "2026-11-26T06:00:00Z", "lines": [{"line": 1, "code": "A"}]}"#,
                "missing-field", "lines[0].quantity"
            ),
            (
                #"{"type": "order", "action": "create", "orderId": "O", "revision": 1, "site": "dc1", "time": "2026-11-26T06:00:00Z", "lines": [{"line": 1, "code": "A", "quantity": 1}, {"line": 1, "code": "B", "quantity": 1}]}"#,
                "bad-value", "lines[1].line"
            ),
            (
                #"{"type": "order", "action": "destroy", "orderId": "O", "revision": 1, "site": "dc1", "time": "2026-11-26T06:00:00Z"}"#,
                "bad-value", "action"
            ),
            (
                #"{"type": "order", "action": "create", "orderId": "O\u001b[31m", "revision": 1, "site": "dc1", "time": "2026-11-26T06:00:00Z", "lines": [{"line": 1, "code": "A", "quantity": 1}]}"#,
                "bad-value", "orderId"
            ),
            (
                #"{"type": "order", "action": "create", "orderId": "O", "revision": "1", "site": "dc1", "time": "2026-11-26T06:00:00Z", "lines": []}"#,
                "wrong-type", "revision"
            ),
            (
                #"{"type": "order", "action": "create", "orderId": "O", "revision": 1, "site": "dc2", "time": "2026-11-26T06:00:00Z", "lines": [{"line": 1, "code": "A", "quantity": 1}]}"#,
                "subject-mismatch", "site"
            ),
            (
                #"{"type": "order", "action": "cancel", "orderId": "O", "revision": 1, "site": "dc1", "time": "2026-11-26T06:00:00Z", "lines": [{"line": 1, "code": "A", "quantity": 1}]}"#,
                "bad-value", "lines"
            ),
            ("not json", "invalid-json", ""),
        ])
    func rejected(_ body: String, _ reason: String, _ path: String) throws {
        let parts = Parts()
        parts.send(Self.order(id: "BEFORE"))
        let bad = parts.consumer.append(subject: "scantrack.v1.order.dc1", bytes: Array(body.utf8))
        parts.send(Self.order(id: "AFTER"))
        let counts = parts.loop.runOnce()
        #expect(counts.rejected == 1 && counts.applied == 2)
        #expect(parts.store.order("BEFORE") != nil && parts.store.order("AFTER") != nil)
        let answer = try #require(try parts.answers().first { $0.sequence == bad })
        #expect(answer.status == .rejected)
        #expect(answer.reason == reason)
        #expect(answer.path == (path.isEmpty ? nil : path), "\(answer)")
        #expect(parts.store.deadLetters.map(\.reason) == [reason])
        #expect(
            parts.results.published.contains {
                $0.subject == "scantrack.v1.deadletter.\(reason)" && $0.id == "deadletter-SCANTRACK_ORDERS-\(bad)"
            })
        #expect(parts.consumer.acknowledged.contains(bad))
    }

    @Test("while the store or the results stream is away, the order waits on the poll and is answered once it works")
    func waitsForServers() throws {
        let parts = Parts()
        parts.send(Self.order())
        parts.store.failNext(2)
        parts.results.failNext(3)
        let counts = parts.loop.runOnce()
        #expect(counts.applied == 1)
        #expect(parts.clock.sleeps.count == 5, "two store waits and three publish waits: \(parts.clock.sleeps)")
        #expect(try parts.answers().map(\.status) == [.accepted])
        #expect(parts.consumer.acknowledged == [1])
    }

    @Test("stopped while the store is away: the message is not acknowledged, and comes again")
    func stoppedWhileAway() throws {
        let parts = Parts()
        parts.send(Self.order())
        parts.store.failNext(1_000)
        let stop = StopToken()
        stop.stop()
        let counts = parts.loop.runOnce(stop: stop)
        #expect(counts.messages == 0)
        #expect(parts.consumer.acknowledged.isEmpty)
        #expect(parts.results.published.isEmpty)
    }

    @Test("an order message round-trips through its JSON")
    func roundTrip() throws {
        let order = Self.order(.replace, revision: 7)
        #expect(try OrderMessage.parse(try JSONValue.parse(order.json)) == order)
        let cancel = Self.order(.cancel, revision: 8)
        #expect(try OrderMessage.parse(try JSONValue.parse(cancel.json)) == cancel)
    }
}
