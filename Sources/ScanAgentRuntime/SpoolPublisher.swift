import Logging
import ScanCore
import ScanEvents
import ScanServices

/// The publisher service's loop: sends the sink's events to JetStream in order (message id =
/// event id) and acknowledges each one in the sink only after JetStream did. On a failure it
/// backs off (250 ms doubling to 2 s) and checks the stream again before the next try (a
/// restarted server may have lost it). On `stop` it keeps sending until the sink is empty or
/// `drain` has passed; what is left stays in the spool for the next start.
public final class SpoolPublisher: Sendable {
    /// The `Nats-Msg-Id` of an event. JetStream drops a repeated message id stream-wide, so the id
    /// names the subject (the camera) too: an event id another camera sends, by chance or to
    /// suppress this camera's event, is never taken as this one's.
    public static func messageID(subject: String, eventId: String) -> String { subject + "/" + eventId }

    let sink: any DurableSink
    let bus: any EventBus
    let delivery: DeliveryState
    let clock: any AgentClock
    let drain: Duration
    let logger: Logger
    /// Records sent per round (the cursor is saved after each round).
    let batch: Int
    /// Runs after the drain, before the last flush (the agent closes its run).
    let afterDrain: @Sendable () -> Void
    /// Where each publish's round trip (to JetStream's acknowledgement) is recorded.
    let metrics: AgentMetrics?
    /// This agent's decision subject: a decision sent past its deadline (it waited in the spool
    /// while JetStream was away) goes out marked `late`.
    let decisions: String?
    /// The subjects this agent publishes on; a spooled record for any other (a spool file edited or
    /// planted, or one another camera's agent left) is stepped over, logged, never sent. Nil: any.
    let subjects: Set<String>?
    /// Subjects under these are the agent's too (its pictures' chunks, `ImageBucketWriter`).
    let subjectPrefixes: [String]

    public init(
        sink: any DurableSink, bus: any EventBus, delivery: DeliveryState, clock: any AgentClock, drain: Duration,
        logger: Logger, batch: Int = 100, metrics: AgentMetrics? = nil, decisions: String? = nil,
        subjects: Set<String>? = nil, subjectPrefixes: [String] = [], afterDrain: @escaping @Sendable () -> Void = {}
    ) {
        self.decisions = decisions
        self.subjects = subjects
        self.subjectPrefixes = subjectPrefixes
        self.afterDrain = afterDrain
        self.metrics = metrics
        self.sink = sink
        self.bus = bus
        self.delivery = delivery
        self.clock = clock
        self.drain = drain
        self.logger = logger
        self.batch = batch
    }

    public func run(stop: StopToken) {
        stop.whenStopped { [sink] in sink.wake() }
        var streamReady = false
        var drainDeadline: Duration?
        var retry = RetryLog("JetStream unavailable; events wait in the spool", logger: logger)
        /// True once the drain should end: stopped, and the sink empty or the drain time over.
        func drainOver() -> Bool {
            guard stop.isStopped else { return false }
            let deadline = drainDeadline ?? (clock.elapsed + drain)
            drainDeadline = deadline
            return sink.depth == 0 || clock.elapsed >= deadline
        }
        func pause() {
            guard stop.isStopped else {
                clock.sleep(for: retry.backoff(), stop: stop)
                return
            }
            // Draining: a sleep on the stopped token would end at once and the loop would spin
            // (35,000 tries and 881 log lines in a 5 s drain). Wait for real, by the backoff, at
            // most until the drain ends.
            let left = (drainDeadline ?? clock.elapsed) - clock.elapsed
            clock.sleep(for: max(.milliseconds(10), min(retry.backoff(), left)), stop: StopToken())
        }
        func failed(_ error: any Error) {
            let wasUp = delivery.failed()
            if wasUp { retry = RetryLog(retry.what, logger: logger) }  // a new outage: log its first error
            // Not connected, the client's error of the moment says nothing true ("Insufficient
            // Buffer" from a stream call on a connection that never came up): say what is wrong.
            let described =
                bus.isConnected
                ? "\(error)"
                : "not connected to \(bus.address): the server refused the connection or cannot be reached (retrying)"
            retry.failed(DescribedError(described), metadata: ["spool": .stringConvertible(sink.depth)])
        }
        while !drainOver() {
            if !streamReady {
                do {
                    try bus.prepareStream()
                    streamReady = true
                } catch {
                    failed(error)
                    if drainOver() { break }
                    pause()
                    continue
                }
            }
            let records = sink.next(limit: batch)
            if records.isEmpty {
                if stop.isStopped { break }
                sink.waitForRecords(for: .milliseconds(500))
                continue
            }
            var failure: (any Error)?
            for record in records {
                if record.subject.isEmpty {  // an unreadable spool line: step over it
                    sink.acknowledge(record)
                    continue
                }
                let chunk = record.subject.hasPrefix(ImageObject.chunkPrefix + ".")
                if let subjects, !subjects.contains(record.subject),
                    !(chunk && subjectPrefixes.contains(where: { Self.isUnder(record.subject, $0) }))
                {
                    logger.warning(
                        "a spooled event for a subject not this agent's; not sent",
                        metadata: ["subject": "\(TerminalText.escaped(record.subject))"])
                    sink.acknowledge(record)
                    continue
                }
                // A picture's chunk waits in the spool as base64 (a record is one line).
                let chunkBytes = chunk ? Base64.decode(String(decoding: record.payload, as: UTF8.self)) : nil
                if chunk && chunkBytes == nil {
                    logger.warning(
                        "a spooled picture chunk that is not base64; not sent",
                        metadata: ["subject": "\(TerminalText.escaped(record.subject))"])
                    sink.acknowledge(record)
                    continue
                }
                do {
                    let sent = ContinuousClock.now
                    let (payload, decision) =
                        record.subject == decisions
                        ? DecisionEvent.outgoing(record.payload, at: clock.now) : (chunkBytes ?? record.payload, nil)
                    let trace = chunk ? nil : TraceContext.forEvent(record.eventId)
                    let duplicate = try bus.publishDurable(
                        subject: record.subject, bytes: payload,
                        messageID: Self.messageID(subject: record.subject, eventId: record.eventId), trace: trace)
                    if let trace {
                        logger.debug(
                            "event sent",
                            metadata: LogKey.about(event: record.eventId, trace: trace).merging([
                                "subject": "\(TerminalText.escaped(record.subject))",
                                "duplicate": .stringConvertible(duplicate),
                            ]) { $1 })
                    }
                    metrics?.publish.record(duration: ContinuousClock.now - sent)
                    if !chunk { metrics?.published(payload, acknowledged: clock.now) }
                    if let decision, !duplicate { metrics?.decision(decision) }
                    sink.acknowledge(record)
                    if delivery.acknowledged(duplicate: duplicate) {
                        retry.succeeded("JetStream acknowledges; sending the spool")
                    }
                } catch {
                    failure = error
                    break
                }
            }
            sink.saveCursor()
            if let failure {
                failed(failure)
                streamReady = false
                if drainOver() { break }
                pause()
            }
        }
        sink.saveCursor()
        if sink.depth > 0 {
            logger.warning(
                "stopping with events still in the spool; they are sent at the next start",
                metadata: ["depth": .stringConvertible(sink.depth)])
        }
        afterDrain()
        bus.flush(timeout: .milliseconds(500))
    }
}

extension SpoolPublisher {
    /// Whether `subject` is `prefix` (ending in `.`) and one token after it.
    static func isUnder(_ subject: String, _ prefix: String) -> Bool {
        subject.hasPrefix(prefix) && SubjectToken.isValid(String(subject.dropFirst(prefix.count)))
    }
}

/// An error whose text is already written (a cause with context added).
struct DescribedError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
