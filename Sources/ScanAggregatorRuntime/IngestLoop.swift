import Foundation
import Logging
import ScanCore
import ScanServices
import ScanEvents
import ScanReconciliation

/// What one pass stored.
public struct IngestCounts: Sendable, Equatable {
    public var messages = 0
    /// Events newly stored, by family.
    public var stored = StoredCounts()
    public var duplicates = 0
    public var deadLetters = 0

    public init(messages: Int = 0, stored: StoredCounts = StoredCounts(), duplicates: Int = 0, deadLetters: Int = 0) {
        self.messages = messages
        self.stored = stored
        self.duplicates = duplicates
        self.deadLetters = deadLetters
    }

    public static func + (a: IngestCounts, b: IngestCounts) -> IngestCounts {
        IngestCounts(
            messages: a.messages + b.messages, stored: a.stored + b.stored, duplicates: a.duplicates + b.duplicates,
            deadLetters: a.deadLetters + b.deadLetters)
    }
}

/// Durable ingest over its ports: take a batch from the consumer, validate it, write it in one
/// transaction, and only then acknowledge. A crash before the commit leaves the messages
/// unacknowledged, so the stream delivers them again; storage is idempotent on the event id, so
/// nothing is stored twice. Blocking: run it on a thread of its own.
public final class IngestLoop: @unchecked Sendable {
    // @unchecked: `runOnce` is called from one thread; it hands one batch at a time to a writer
    // thread and waits for it before touching the state again.

    /// What ingest reads and how much at a time.
    public struct Settings: Sendable {
        /// The agents' subjects (`<prefix>.v1.…`).
        public var subjects: ContractSubjects
        public var batchSize = 2_000
        public var fetchWaitMilliseconds: Int64 = 500
        /// Store attempts for one batch while the store fails transiently (about 150 s at the
        /// 0.25 s poll) before the error ends ingest.
        public var storeAttempts = 600

        public init(subjects: ContractSubjects) { self.subjects = subjects }
    }

    public let settings: Settings
    private let logger: Logger
    private let consumer: any EventConsumer
    /// What it reads, for the log (`EventConsumer.description`).
    public var source: String { consumer.description }
    private let storage: any SightingStore
    /// Where refused messages and the stored pictures' descriptions are published.
    private let publisher: any ResultPublisher
    private let clock: any ServiceClock
    /// Fetching while the stream cannot deliver: a poll every 0.25 s, each new error logged once.
    private var events: ConsumerFetch
    /// Acknowledgements that did not reach the server (the messages come again after the ack
    /// wait and are recognised by their event ids).
    public private(set) var acksLost = 0
    /// When refused messages were last logged: at most one line per 10 s (a sender sending only
    /// garbage would fill the log otherwise; the metrics and the table count every one).
    private var refusalLogged: Duration?
    public private(set) var totals = IngestCounts()
    private var prefetched: Prepared?
    /// Called after each commit with the event times of the sightings it stored (benchmarks
    /// measure publish-to-commit latency with it).
    public var onCommit: (@Sendable ([Timestamp]) -> Void)?
    /// Writes one batch while this thread fetches and validates the next.
    private let writer = BackgroundWorker(name: "ingest-store")
    private let metrics = AggregatorMetrics()
    /// Told whether NATS, the consumer and the store work (`/health/ready`), when set.
    public var readiness: (any HealthReport)?
    /// Beats at each attempt to store a batch (a supervisor's sign that ingest goes on, waiting
    /// for PostgreSQL included), when set.
    public var pulse: Pulse?
    private var lastObserved: Duration?
    /// The topology events' lanes and stations are checked against, read again every 2 s.
    private var topology = Topology(sites: [])
    private var topologyRead: Duration?

    /// `publisher`: where refused messages are published once stored (for whoever watches for
    /// bad input), and the descriptions of the pictures stored events name (`ImageObject`).
    public init(
        settings: Settings, consumer: any EventConsumer, store: any SightingStore, publisher: any ResultPublisher,
        clock: any ServiceClock, logger: Logger
    ) {
        self.settings = settings
        self.consumer = consumer
        self.storage = store
        self.publisher = publisher
        self.clock = clock
        self.logger = logger
        events = ConsumerFetch(
            consumer, paused: "JetStream not delivering; ingest paused",
            resumed: "JetStream delivers again; ingest resumed", logger: logger)
    }

    /// The next batch, or none while the stream cannot deliver (a node or the connection gone, a
    /// stream leader being elected): ingest pauses and resumes, it never ends on such an error.
    /// After 20 failures in a row the consumer is bound again (created if it was deleted).
    private func fetch(stop: StopToken) -> [any ConsumedMessage] {
        let readiness = self.readiness
        guard
            let messages = events.next(
                batch: settings.batchSize, timeoutMilliseconds: settings.fetchWaitMilliseconds, stop: stop,
                clock: clock, failed: { readiness?.set("consumer", ok: false, detail: "\($0)") })
        else { return [] }
        readiness?.set("consumer", ok: true, detail: "bound to \(consumer.description)")
        return messages
    }

    /// Stores one batch and acknowledges it after the commit; while the store writes it, the
    /// next batch is fetched and validated on this thread, and kept for the next call. Returns
    /// what was stored (zero messages when nothing was waiting).
    /// `stop` ends a wait for the store (the batch is then not acknowledged and comes again).
    @discardableResult
    public func runOnce(stop: StopToken = StopToken()) throws -> IngestCounts {
        observe()
        let current = prefetched ?? prepare(fetch(stop: stop))
        prefetched = nil
        guard !current.messages.isEmpty else { return IngestCounts() }
        let outcome = StoreOutcome()
        writer.start { [self] in
            do {
                outcome.counts = try store(current, stop: stop)
            } catch {
                outcome.error = error
            }
        }
        prefetched = prepare(fetch(stop: stop))
        writer.wait()
        if let error = outcome.error { throw error }
        totals = totals + outcome.counts
        return outcome.counts
    }

    /// Stores what was fetched ahead (at shutdown), so it is acknowledged now rather than
    /// redelivered after the ack wait.
    public func flush(stop: StopToken = StopToken()) throws {
        guard let batch = prefetched else { return }
        prefetched = nil
        totals = totals + (try store(batch, stop: stop))
    }

    /// Messages fetched ahead and not stored yet (stored by the next `runOnce` or `flush`).
    public var waiting: Int { prefetched?.messages.count ?? 0 }

    /// At most every 2 s, when readiness is reported: whether NATS is connected and the store
    /// answers, and the consumer's backlog (gauges).
    private func observe() {
        guard readiness != nil else { return }
        let now = clock.elapsed
        if let last = lastObserved, now - last < .seconds(2) { return }
        lastObserved = now
        let connected = consumer.isConnected
        readiness?.set("nats", ok: connected, detail: connected ? "connected" : "disconnected")
        metrics.natsLink(connected: connected)
        do {
            try storage.ping()
            readiness?.set("postgres", ok: true, detail: "reachable")
        } catch {
            readiness?.set("postgres", ok: false, detail: "\(error)")
        }
        if let backlog = consumer.backlog() {
            metrics.pending.record(Int64(clamping: backlog.pending))
            metrics.ackPending.record(backlog.ackPending)
        }
        for usage in consumer.streamUsages() {
            metrics.stream(usage.stream, bytes: usage.bytes, maxBytes: usage.maxBytes)
        }
    }

    /// Ends the writer thread (the loop is not used afterwards).
    public func close() { writer.close() }

    /// A fetched batch, validated: rows to store and messages refused with their reason.
    struct Prepared: Sendable {
        var messages: [any ConsumedMessage] = []
        var events = EventBatch()
        var refused: [(message: any ConsumedMessage, letter: DeadLetter)] = []
    }

    /// Handed between the ingest thread and the thread that writes one batch.
    private final class StoreOutcome: @unchecked Sendable {
        // @unchecked: written by the writer thread before `wait` returns, read after.
        var counts = IngestCounts()
        var error: (any Error)?
    }

    /// `\u0000` anywhere in the text (jsonb refuses it). A byte search: the hot path of ingest.
    public static func holdsEscapedNUL(_ bytes: [UInt8]) -> Bool {
        let pattern: [UInt8] = Array("\\u0000".utf8)
        guard bytes.count >= pattern.count else { return false }
        var index = 0
        while let found = bytes[index...].firstIndex(of: 0x5C) {
            if found + pattern.count <= bytes.count && bytes[found..<found + pattern.count].elementsEqual(pattern) {
                // An escaped backslash before it ("\\u0000") is text, not NUL: count the run.
                var run = 0
                var back = found
                while back > 0 && bytes[back - 1] == 0x5C {
                    run += 1
                    back -= 1
                }
                if run % 2 == 0 { return true }
            }
            index = found + 1
        }
        return false
    }

    /// Reads the topology when it is older than 2 s; keeps the last one read while the store
    /// cannot answer (the store then fails too, and the batch waits).
    private func refreshTopology() {
        let now = clock.elapsed
        if let read = topologyRead, now - read < .seconds(2) { return }
        do {
            topology = try storage.topology()
            topologyRead = now
        } catch {
            logger.debug("topology not read", metadata: ["error": "\(error)"])
        }
    }

    private func prepare(_ messages: [any ConsumedMessage]) -> Prepared {
        var batch = Prepared(messages: messages)
        guard !messages.isEmpty else { return batch }
        refreshTopology()
        let topology = topology
        let subjects = settings.subjects
        for message in messages {
            let bytes = message.bytes
            do {
                guard let family = SubjectFamily(subject: message.subject, prefix: subjects.prefix),
                    IngestEvent.families.contains(family)
                else { throw DeadLetter(.unknownType, "not an event subject the aggregator stores") }
                let parsed = try EventValidator.parse(
                    bytes, maxBytes: family == .noread ? EventValidator.maxNoReadBytes : EventValidator.maxBytes)
                // jsonb cannot hold NUL; such a body is refused rather than breaking the batch.
                if Self.holdsEscapedNUL(bytes) {
                    throw DeadLetter(.badValue, "the event holds a NUL character (\\u0000)")
                }
                let event = try IngestEvent.parse(parsed, family: family)
                switch event {
                case .decision(let event):
                    // Sent on its lane's subject by a camera of that lane.
                    try EventValidator.checkDecisionSender(event, subject: message.subject, subjects: subjects)
                    try EventValidator.checkPlace(
                        site: event.site, camera: event.camera, lane: event.lane, station: nil, topology: topology)
                    // One decider a lane (docs/security.md): the aggregator for the lanes whose
                    // topology has a decision, an agent for the others. The body's `decidedBy`
                    // is held to that, so a camera cannot pass its decision off as the aggregator's.
                    let byAggregator = topology.lane(site: event.site, id: event.lane)?.decision != nil
                    if (event.decidedBy == "aggregator") != byAggregator {
                        throw DeadLetter(
                            .subjectMismatch,
                            "decidedBy '\(event.decidedBy)' on lane '\(event.lane)', which "
                                + (byAggregator
                                    ? "the aggregator decides" : "an agent decides (no decision in the topology)"))
                    }
                case .measure(let event):
                    // Sent on its lane's subject (the device's permission), for a lane of the site.
                    try EventValidator.checkLaneSender(
                        site: event.site, lane: event.lane, subject: message.subject, family: .measure,
                        subjects: subjects)
                    // A reading is of a lane: a site the topology does not describe has none (a
                    // gateway cannot write readings for sites that are not there).
                    guard topology.site(event.site) != nil else {
                        throw DeadLetter(.laneMismatch, "site '\(event.site)' is not in the topology")
                    }
                    if topology.lane(site: event.site, id: event.lane) == nil {
                        throw DeadLetter(
                            .laneMismatch, "site '\(event.site)' has no lane '\(event.lane)' in the topology")
                    }
                default:
                    // Sent by its camera on its own subject, at the lane or station the topology gives it.
                    if let sender = event.camera {
                        try EventValidator.checkSender(
                            site: sender.site, camera: sender.camera, subject: message.subject, family: family,
                            subjects: subjects)
                        try EventValidator.checkPlace(
                            site: sender.site, camera: sender.camera, lane: sender.lane, station: sender.station,
                            topology: topology)
                    }
                }
                // A traceparent that is not one is dropped, as W3C asks (the event is stored).
                batch.events.append(
                    event, body: String(decoding: bytes, as: UTF8.self),
                    trace: message.traceparent.flatMap(TraceContext.parse))
            } catch let letter as DeadLetter {
                batch.refused.append((message, letter))
            } catch {
                batch.refused.append((message, DeadLetter(.invalidJSON, "\(error)")))
            }
        }
        return batch
    }

    private func store(_ batch: Prepared, stop: StopToken) throws -> IngestCounts {
        var counts = IngestCounts(messages: batch.messages.count)
        let started = clock.elapsed
        // Store until it works: the database restarting pauses ingest, it loses nothing.
        var retry = RetryLog(
            "PostgreSQL unavailable, ingest paused", logger: logger,
            policy: RetryPolicy(first: .milliseconds(250), limit: .milliseconds(250), jitter: 0.2, logEvery: 20))
        let refused = batch.refused.map { message, letter in
            RefusedMessage(
                subject: message.subject, reason: letter.reason.rawValue, detail: letter.detail, payload: message.bytes)
        }
        while true {
            pulse?.beat()
            do {
                var events = batch.events
                events.refused = refused
                counts.stored = try storage.store(events)
                readiness?.set("postgres", ok: true, detail: "storing")
                retry.succeeded("PostgreSQL stores again; ingest resumed")
                break
            } catch {
                metrics.postgresErrors.increment()
                readiness?.set("postgres", ok: false, detail: "\(error)")
                guard storage.isTransient(error), retry.failures < settings.storeAttempts - 1, !stop.isStopped else {
                    throw error
                }
                storage.reset()
                retry.failedAndWait(error, stop: stop, sleeper: clock)
            }
        }
        metrics.stored(batch.messages, committed: clock.now)
        onCommit?(
            batch.events.events.compactMap { entry in
                if case .sighting(let sighting) = entry.event { sighting.time } else { nil }
            })
        counts.duplicates = batch.events.events.count - counts.stored.total
        counts.deadLetters = batch.refused.count
        metrics.record(
            counts, refused: batch.refused.map(\.letter.reason.rawValue), duration: clock.elapsed - started)
        logRefusals(batch.refused)
        for (message, letter) in batch.refused {
            // Stored already; the subject is for whoever watches for bad input.
            let deadLetter = DeadLetterEvent(
                reason: letter.reason, detail: letter.detail, subject: message.subject, payload: message.bytes)
            if let sequence = message.streamSequence,
                let subject = try? settings.subjects.deadLetter(letter.reason.rawValue)
            {
                try? publisher.publish(
                    subject: subject, bytes: deadLetter.json,
                    messageID: "deadletter-\(settings.subjects.agentStream)-\(sequence)")
            }
        }
        // The pictures the stored events name: described in the images bucket before the
        // acknowledgement, so a description that did not go out comes again with the events.
        guard announceImages(batch) else {
            logger.warning(
                "pictures not described in the images bucket; the batch comes again after the ack wait",
                metadata: ["messages": "\(batch.messages.count)"])
            return counts
        }
        var lost = 0
        for message in batch.messages where (try? message.ack()) == nil { lost += 1 }
        if lost > 0 {
            // Stored already: the server redelivers these after the ack wait and they are dropped
            // as duplicates of their event ids.
            acksLost += lost
            logger.warning(
                "acknowledgements lost; those messages come again and are recognised",
                metadata: ["count": .stringConvertible(lost)])
        }
        return counts
    }

    /// One warning for refused messages (the batch's first, with its trace id when it came with a
    /// valid traceparent, so the sender's own log line about it is found), at most every 10 s.
    private func logRefusals(_ refused: [(message: any ConsumedMessage, letter: DeadLetter)]) {
        guard let (message, letter) = refused.first,
            refusalLogged.map({ clock.elapsed - $0 >= .seconds(10) }) ?? true
        else { return }
        refusalLogged = clock.elapsed
        var metadata: Logger.Metadata = [
            "count": .stringConvertible(refused.count), "reason": "\(letter.reason.rawValue)",
            "subject": "\(TerminalText.escaped(message.subject))", "detail": "\(TerminalText.escaped(letter.detail))",
        ]
        if let trace = message.traceparent.flatMap(TraceContext.parse) { metadata[LogKey.trace] = "\(trace.traceId)" }
        logger.warning("messages refused; kept as dead letters (scanadmin deadletters lists them)", metadata: metadata)
    }

    /// Writes each stored event's picture's description (`ImageObject.metaJSON`) on its meta
    /// subject, once (the message id is the object's nuid); false when one could not be written.
    /// The object was checked to be the sender's when the event was parsed.
    private func announceImages(_ batch: Prepared) -> Bool {
        let objects = batch.events.events.compactMap { entry -> (ImageObject, Timestamp)? in
            switch entry.event {
            case .parcel(let parcel): parcel.imageObject.map { ($0, parcel.time) }
            case .noRead(let noRead): noRead.imageObject.map { ($0, noRead.time) }
            default: nil
            }
        }
        for (object, time) in objects {
            do {
                try publisher.publish(
                    subject: object.metaSubject, bytes: object.metaJSON(modified: time),
                    messageID: "meta-\(object.nuid)")
            } catch {
                logger.warning(
                    "picture not described", metadata: ["object": "\(object.name)", "error": "\(error)"])
                return false
            }
        }
        metrics.imagesDescribed.increment(by: Int64(objects.count))
        return true
    }
}
