import Logging
import ScanCore
import ScanEvents
import ScanServices

/// What one pass over the orders stream did.
public struct OrderCounts: Sendable, Equatable {
    public var messages = 0
    public var applied = 0
    public var unchanged = 0
    public var rejected = 0

    public init() {}

    mutating func add(_ other: OrderCounts) {
        messages += other.messages
        applied += other.applied
        unchanged += other.unchanged
        rejected += other.rejected
    }
}

/// Orders from the WMS, over its ports: take order messages from the orders stream, check each
/// (`OrderMessage.parse`, and the site its subject names), store it idempotently on its revision,
/// answer it on the results stream (`orderack`: accepted, unchanged, or rejected with the reason
/// and the field), and only then acknowledge it. A refused message also goes to the dead letters.
/// While the store or the results stream is away the message waits (it is not acknowledged, so a
/// stop meanwhile leaves it for the next aggregator). Blocking: run it on a thread of its own.
public final class OrderLoop: @unchecked Sendable {
    // @unchecked: used by the one thread that runs it.

    public struct Settings: Sendable {
        public var subjects: ContractSubjects
        public var batchSize = 100
        public var fetchWaitMilliseconds: Int64 = 500

        public init(subjects: ContractSubjects) { self.subjects = subjects }
    }

    public let settings: Settings
    private let store: any OrderStore
    private let publisher: any ResultPublisher
    private let clock: any ServiceClock
    private let logger: Logger
    private var orders: ConsumerFetch
    public private(set) var totals = OrderCounts()

    public init(
        settings: Settings, consumer: any EventConsumer, store: any OrderStore, publisher: any ResultPublisher,
        clock: any ServiceClock, logger: Logger
    ) {
        self.settings = settings
        self.store = store
        self.publisher = publisher
        self.clock = clock
        self.logger = logger
        orders = ConsumerFetch(
            consumer, paused: "JetStream not delivering orders; paused", resumed: "JetStream delivers orders again",
            logger: logger)
    }

    /// One batch: every message answered and acknowledged, or (stopped while a server was away)
    /// left unacknowledged to come again.
    @discardableResult
    public func runOnce(stop: StopToken = StopToken()) -> OrderCounts {
        guard
            let messages = orders.next(
                batch: settings.batchSize, timeoutMilliseconds: settings.fetchWaitMilliseconds, stop: stop,
                clock: clock)
        else { return OrderCounts() }
        var counts = OrderCounts()
        for message in messages {
            guard let status = handle(message, stop: stop) else { break }
            counts.messages += 1
            switch status {
            case .accepted: counts.applied += 1
            case .unchanged: counts.unchanged += 1
            case .rejected: counts.rejected += 1
            }
        }
        totals.add(counts)
        return counts
    }

    /// Checks, stores, answers and acknowledges one message; nil when stopped first.
    private func handle(_ message: any ConsumedMessage, stop: StopToken) -> OrderAckEvent.Status? {
        let sequence = message.streamSequence ?? 0
        let subjectSite = settings.subjects.site(ofOrderSubject: message.subject)
        let answer: OrderAckEvent
        switch read(message, subjectSite: subjectSite) {
        case .success(let order):
            let outcome: OrderOutcome
            switch retrying("orders not stored", stop: stop, transient: store.isTransient, { try store.apply(order) }) {
            case .done(let value): outcome = value
            case .stopped: return nil
            case .failed(let error):
                // The store refused what the checks let through: the message is refused too,
                // rather than coming back for ever.
                return refuse(
                    message, OrderRejection(.badValue, path: "", "not stored: \(error)"), subjectSite: subjectSite,
                    stop: stop)
            }
            switch outcome {
            case .applied:
                answer = OrderAckEvent(
                    sequence: sequence, site: order.site, orderId: order.orderId, revision: order.revision,
                    status: .accepted, storedRevision: order.revision, time: clock.now)
            case .unchanged(let stored):
                answer = OrderAckEvent(
                    sequence: sequence, site: order.site, orderId: order.orderId, revision: order.revision,
                    status: .unchanged, storedRevision: stored,
                    detail: stored == order.revision
                        ? "revision \(stored) is stored already" : "revision \(stored) is stored, newer than this one",
                    time: clock.now)
            case .revisionJump(let maxJump):
                return refuse(
                    message,
                    OrderRejection(
                        .badValue, path: "revision",
                        "\(order.revision) is more than \(maxJump) past the stored revision: not stored"),
                    subjectSite: subjectSite, stop: stop)
            }
        case .failure(let rejection):
            return refuse(message, rejection, subjectSite: subjectSite, stop: stop)
        }
        return self.answer(answer, to: subjectSite, acknowledging: message, stop: stop)
    }

    /// Keeps a refused message (dead letters, in the store and on the stream) and answers it.
    private func refuse(
        _ message: any ConsumedMessage, _ rejection: OrderRejection, subjectSite: String?, stop: StopToken
    ) -> OrderAckEvent.Status? {
        let sequence = message.streamSequence ?? 0
        let refused = RefusedMessage(
            subject: message.subject, reason: rejection.reason.rawValue, detail: rejection.description,
            payload: message.bytes)
        switch retrying(
            "refused order not stored", stop: stop, transient: store.isTransient, { try store.refuse(refused) })
        {
        case .done: break
        case .stopped: return nil
        case .failed(let error):
            logger.error("refused order not kept in the dead letters", metadata: [LogKey.error: "\(error)"])
        }
        if let subject = try? settings.subjects.deadLetter(rejection.reason.rawValue) {
            let letter = DeadLetterEvent(
                reason: rejection.reason, detail: rejection.description, subject: message.subject,
                payload: message.bytes)
            try? publisher.publish(
                subject: subject, bytes: letter.json,
                messageID: "deadletter-\(settings.subjects.ordersStream)-\(sequence)")
        }
        let fields = try? JSONValue.parse(message.bytes)
        let answer = OrderAckEvent(
            sequence: sequence, site: subjectSite ?? "",
            orderId: fields?["orderId"]?.stringValue.map { String($0.prefix(OrderMessage.maxOrderIdBytes)) },
            revision: fields?["revision"]?.intValue, status: .rejected, storedRevision: nil,
            reason: rejection.reason.rawValue, path: rejection.path.isEmpty ? nil : rejection.path,
            detail: rejection.detail, time: clock.now)
        return self.answer(answer, to: subjectSite, acknowledging: message, stop: stop)
    }

    /// Publishes the answer, then acknowledges the message.
    private func answer(
        _ answer: OrderAckEvent, to subjectSite: String?, acknowledging message: any ConsumedMessage,
        stop: StopToken
    ) -> OrderAckEvent.Status? {
        let sequence = answer.sequence
        // The answer goes to the site the subject names; a subject without one (it cannot be
        // answered) has its message in the dead letters only.
        if let site = subjectSite, let subject = try? settings.subjects.orderAck(site: site) {
            let bytes = answer.json
            // The results stream away is waited out: the answer is not dropped.
            let published = retrying("order answers not published", stop: stop, transient: { _ in true }) {
                try publisher.publish(subject: subject, bytes: bytes, messageID: answer.eventId)
            }
            guard case .done = published else { return nil }
        }
        if (try? message.ack()) == nil {
            logger.warning(
                "order acknowledgement lost; the message comes again and is answered unchanged",
                metadata: ["sequence": .stringConvertible(sequence)])
        }
        return answer.status
    }

    /// The order in a message, or why it is refused.
    private func read(_ message: any ConsumedMessage, subjectSite: String?) -> Result<OrderMessage, OrderRejection> {
        do {
            let json: JSONValue
            do {
                json = try EventValidator.parse(message.bytes, maxBytes: OrderMessage.maxBytes)
            } catch {
                throw OrderRejection(error)
            }
            let order = try OrderMessage.parse(json)
            guard let subjectSite, order.site == subjectSite else {
                throw OrderRejection(
                    .subjectMismatch, path: "site",
                    "the order names site '\(order.site)' but came on '\(TerminalText.escaped(message.subject))'")
            }
            return .success(order)
        } catch let rejection as OrderRejection {
            return .failure(rejection)
        } catch {
            return .failure(OrderRejection(.invalidJSON, path: "", "\(error)"))
        }
    }

    enum Attempt<T> {
        case done(T)
        case stopped
        case failed(any Error)
    }

    /// Runs `body` until it works, waiting on the poll while the error is `transient`.
    private func retrying<T>(
        _ what: String, stop: StopToken, transient: (any Error) -> Bool, _ body: () throws -> T
    ) -> Attempt<T> {
        var retry = RetryLog(what, logger: logger, policy: .poll)
        while !stop.isStopped {
            do {
                let value = try body()
                retry.succeeded("\(what): works again")
                return .done(value)
            } catch {
                guard transient(error) else { return .failed(error) }
                store.reset()
                retry.failedAndWait(error, stop: stop, sleeper: clock)
            }
        }
        return .stopped
    }
}
