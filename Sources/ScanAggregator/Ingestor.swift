import Foundation
import Logging
import ScanMetrics
import ScanCore
import ScanNATS
import ScanPostgres
import ScanServices

/// Where the aggregator reads and writes.
public struct IngestSettings: Sendable {
    public var natsURL: String
    public var postgresDSN: String
    /// Subject prefix (`scantrack`): agents publish on `<prefix>.v1.sighting.<site>.<camera>`.
    public var prefix: String = "scantrack"
    /// Durable consumer name; replicas share it and split the work.
    public var durable: String = "aggregator"
    public var batchSize: Int = 2_000
    public var fetchWaitMilliseconds: Int64 = 500
    /// Unacknowledged messages come back after this long (a replica that died mid-batch).
    public var ackWaitMilliseconds: Int64 = 10_000
    /// Copies a JetStream cluster keeps of the streams this aggregator creates (nil: 1 for a
    /// new stream; an existing one keeps its own).
    public var replicas: Int64?
    /// Retention days that replace the stored settings (`retention_settings`), by table: the
    /// deprecated --noread-retention-days sets `noreads`.
    public var retentionOverrides: [String: Int] = [:]
    /// How often partitions are made ahead and expired days dropped.
    public var maintenanceInterval: Duration = .seconds(3_600)

    public init(natsURL: String, postgresDSN: String) {
        self.natsURL = natsURL
        self.postgresDSN = postgresDSN
    }

    /// The agents' stream (sightings and sessions) and the dead-letter stream.
    public var subjects: ContractSubjects { ContractSubjects(prefix: prefix) }
    public var agentStream: String { subjects.agentStream }
    public var deadLetterStream: String { subjects.deadLetterStream }
    /// Everything agents send durably: sightings and session events, on one consumer.
    public var durableSubjects: String { "\(prefix).v1.>" }
}

/// What one pass stored.
public struct IngestCounts: Sendable, Equatable {
    public var messages = 0
    public var sightingsStored = 0
    public var sessionEventsStored = 0
    public var noReadsStored = 0
    public var duplicates = 0
    public var deadLetters = 0

    static func + (a: IngestCounts, b: IngestCounts) -> IngestCounts {
        IngestCounts(
            messages: a.messages + b.messages, sightingsStored: a.sightingsStored + b.sightingsStored,
            sessionEventsStored: a.sessionEventsStored + b.sessionEventsStored,
            noReadsStored: a.noReadsStored + b.noReadsStored, duplicates: a.duplicates + b.duplicates,
            deadLetters: a.deadLetters + b.deadLetters)
    }
}

/// Durable ingest: pull a batch from JetStream, validate, write it in one transaction, and only
/// then acknowledge. A crash before the commit leaves the messages unacknowledged, so JetStream
/// delivers them again; storage is idempotent on the event id, so nothing is stored twice.
/// Blocking (cnats and libpq): run it on a thread of its own.
public final class Ingestor: @unchecked Sendable {
    // @unchecked: `runOnce` is called from one thread; it hands one batch at a time to a writer
    // thread and waits for it before touching the state again.
    public let settings: IngestSettings
    private let logger: Logger
    private let jetStream: JetStream
    private var events: PullSubscription
    /// Fetching while JetStream cannot deliver: a poll every 0.25 s, each new error logged once.
    private var fetchRetry: RetryLog
    /// Acknowledgements that did not reach the server (the messages come again after the ack
    /// wait and are recognised by their event ids).
    public private(set) var acksLost = 0
    private let storage: any SightingStore
    public private(set) var totals = IngestCounts()
    private var prefetched: Prepared?
    /// Called after each commit with the event times of the sightings it stored (benchmarks
    /// measure publish-to-commit latency with it).
    public var onCommit: (@Sendable ([Timestamp]) -> Void)?
    /// Writes one batch while this thread fetches and validates the next.
    private let writer = BackgroundWorker(name: "ingest-store")
    private let connection: NATSConnection
    private let metrics = AggregatorMetrics()
    /// Told whether NATS, the consumer and PostgreSQL work (`/health/ready`), when set.
    public var readiness: Readiness?
    private var lastObserved = ContinuousClock.now - .seconds(10)
    /// The topology events' lanes and stations are checked against, read again every 2 s.
    private var topology = Topology(sites: [])
    private var topologyRead: ContinuousClock.Instant?

    /// `store`: where batches go (PostgreSQL at `settings.postgresDSN` unless given).
    public init(settings: IngestSettings, logger: Logger, store: (any SightingStore)? = nil) throws {
        self.settings = settings
        self.logger = logger
        fetchRetry = RetryLog("JetStream not delivering; ingest paused", logger: logger, policy: .poll)
        storage = store ?? PostgresSightingStore(dsn: settings.postgresDSN)
        var options = NATSConnection.Options()
        options.name = "scan-aggregator"
        connection = try NATSConnection(url: settings.natsURL, options: options)
        jetStream = try connection.jetStream()
        try Self.ensureStreams(jetStream, settings)
        events = try Self.subscribe(jetStream, settings)
    }

    private static func subscribe(_ jetStream: JetStream, _ settings: IngestSettings) throws(NATSError)
        -> PullSubscription
    {
        var consumer = ConsumerSpec(durable: settings.durable)
        consumer.ackWaitMilliseconds = settings.ackWaitMilliseconds
        return try jetStream.pullSubscribe(
            stream: settings.agentStream, subject: settings.durableSubjects, consumer: consumer)
    }

    /// The next batch, or none while JetStream cannot deliver (a node or the connection gone, a
    /// stream leader being elected): ingest pauses and resumes, it never ends on a NATS error.
    /// After a few seconds of failures the subscription is bound again (creating the consumer
    /// if it was deleted).
    private func fetch(stop: StopToken) -> [JetStreamMessage] {
        do {
            let messages = try events.fetch(
                batch: settings.batchSize, timeoutMilliseconds: settings.fetchWaitMilliseconds)
            fetchRetry.succeeded("JetStream delivers again; ingest resumed")
            readiness?.set("consumer", ok: true, detail: "bound to \(settings.durable) on \(settings.agentStream)")
            return messages
        } catch {
            readiness?.set("consumer", ok: false, detail: "\(error)")
            fetchRetry.failedAndWait(error, stop: stop)
            if fetchRetry.failures % 20 == 0, let again = try? Self.subscribe(jetStream, settings) { events = again }
            return []
        }
    }

    /// Creates (or updates) the agents' stream and the dead-letter stream.
    public static func ensureStreams(_ jetStream: JetStream, _ settings: IngestSettings) throws {
        try jetStream.ensureStream(settings.subjects.agentStreamSpec(replicas: settings.replicas))
        try jetStream.ensureStream(settings.subjects.deadLetterStreamSpec(replicas: settings.replicas))
        try jetStream.ensureStream(settings.subjects.resultsStreamSpec(replicas: settings.replicas))
    }

    /// Stores one batch and acknowledges it after the commit; while PostgreSQL writes it, the
    /// next batch is fetched and validated on this thread, and kept for the next call. Returns
    /// what was stored (zero messages when nothing was waiting).
    /// `stop` ends a wait for PostgreSQL (the batch is then not acknowledged and comes again).
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

    /// At most every 2 s, when /health is served: whether NATS is connected and PostgreSQL answers,
    /// and the consumer's backlog (gauges).
    private func observe() {
        guard readiness != nil, ContinuousClock.now - lastObserved >= .seconds(2) else { return }
        lastObserved = .now
        let connected = connection.isConnected
        readiness?.set("nats", ok: connected, detail: connected ? "connected" : "disconnected")
        do {
            try storage.ping()
            readiness?.set("postgres", ok: true, detail: "reachable")
        } catch {
            readiness?.set("postgres", ok: false, detail: "\(error)")
        }
        if let backlog = try? jetStream.consumerBacklog(stream: settings.agentStream, consumer: settings.durable) {
            metrics.pending.record(Int64(clamping: backlog.pending))
            metrics.ackPending.record(backlog.ackPending)
        }
    }

    /// Ends the writer thread (the ingestor is not used afterwards).
    public func close() { writer.close() }

    /// A fetched batch, validated: rows to store and messages refused with their reason.
    struct Prepared {
        var messages: [JetStreamMessage] = []
        var sightings: [(record: SightingEvent, body: String)] = []
        var sessions: [(record: SessionEvent, body: String)] = []
        var noReads: [NoReadEvent] = []
        var refused: [(message: JetStreamMessage, letter: DeadLetter)] = []
    }

    /// Handed between the ingest thread and the thread that writes one batch.
    private final class StoreOutcome: @unchecked Sendable {
        // @unchecked: written by the writer thread before `wait` returns, read after.
        var counts = IngestCounts()
        var error: (any Error)?
    }

    /// `\u0000` anywhere in the text (jsonb refuses it). A byte search: the hot path of ingest.
    static func holdsEscapedNUL(_ bytes: [UInt8]) -> Bool {
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
        guard !(topologyRead.map { ContinuousClock.now - $0 < .seconds(2) } ?? false) else { return }
        do {
            topology = try storage.topology()
            topologyRead = .now
        } catch {
            logger.debug("topology not read", metadata: ["error": "\(error)"])
        }
    }

    private func prepare(_ messages: [JetStreamMessage]) -> Prepared {
        var batch = Prepared(messages: messages)
        guard !messages.isEmpty else { return batch }
        refreshTopology()
        let topology = topology
        let subjects = ContractSubjects(prefix: settings.prefix)
        for message in messages {
            let bytes = message.bytes
            do {
                let noRead = message.subject.hasPrefix(settings.prefix + ".v1.\(SubjectFamily.noread.rawValue).")
                let event = try EventValidator.parse(
                    bytes, maxBytes: noRead ? EventValidator.maxNoReadBytes : EventValidator.maxBytes)
                // jsonb cannot hold NUL; such a body is refused rather than breaking the batch.
                if Self.holdsEscapedNUL(bytes) {
                    throw DeadLetter(.badValue, "the event holds a NUL character (\\u0000)")
                }
                let body = String(decoding: bytes, as: UTF8.self)
                func check(_ site: String, _ camera: String, _ family: SubjectFamily, lane: String?, station: String?)
                    throws(DeadLetter)
                {
                    try EventValidator.checkSender(
                        site: site, camera: camera, subject: message.subject, family: family, subjects: subjects)
                    try EventValidator.checkPlace(
                        site: site, camera: camera, lane: lane, station: station, topology: topology)
                }
                if noRead {
                    let event = try NoReadEvent.parse(event)
                    try check(event.site, event.camera, .noread, lane: event.lane, station: event.station)
                    batch.noReads.append(event)
                } else if message.subject.hasPrefix(settings.prefix + ".v1.sighting.") {
                    let event = try SightingEvent.parse(event)
                    try check(event.site, event.camera, .sighting, lane: event.lane, station: event.station)
                    batch.sightings.append((event, body))
                } else {
                    let event = try SessionEvent.parse(event)
                    try check(
                        event.envelope.site, event.envelope.camera, .session, lane: event.lane,
                        station: event.station)
                    batch.sessions.append((event, body))
                }
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
        let started = ContinuousClock.now
        // Store until it works: PostgreSQL restarting pauses ingest, it loses nothing.
        var retry = RetryLog(
            "PostgreSQL unavailable, ingest paused", logger: logger,
            policy: RetryPolicy(first: .milliseconds(250), limit: .milliseconds(250), jitter: 0.2, logEvery: 20))
        while true {
            do {
                let refused = batch.refused.map { message, letter in
                    RefusedMessage(
                        subject: message.subject, reason: letter.reason.rawValue, detail: letter.detail,
                        payload: message.bytes)
                }
                (counts.sightingsStored, counts.sessionEventsStored, counts.noReadsStored) = try storage.store(
                    sightings: batch.sightings, sessions: batch.sessions, noReads: batch.noReads, refused: refused)
                readiness?.set("postgres", ok: true, detail: "storing")
                retry.succeeded("PostgreSQL stores again; ingest resumed")
                break
            } catch {
                metrics.postgresErrors.increment()
                readiness?.set("postgres", ok: false, detail: "\(error)")
                guard storage.isTransient(error), retry.failures < 599, !stop.isStopped else { throw error }
                storage.reset()
                retry.failedAndWait(error, stop: stop)
            }
        }
        onCommit?(batch.sightings.map(\.record.time))
        counts.duplicates =
            batch.sightings.count - counts.sightingsStored + batch.sessions.count - counts.sessionEventsStored
            + batch.noReads.count - counts.noReadsStored
        counts.deadLetters = batch.refused.count
        metrics.record(
            counts, refused: batch.refused.map(\.letter.reason.rawValue), duration: ContinuousClock.now - started)
        for (message, letter) in batch.refused {
            // Stored already; the subject is for whoever watches for bad input.
            let deadLetter = DeadLetterEvent(
                reason: letter.reason, detail: letter.detail, subject: message.subject, payload: message.bytes)
            if let sequence = try? message.metadata().streamSequence,
                let subject = try? settings.subjects.deadLetter(letter.reason.rawValue)
            {
                _ = try? jetStream.publish(
                    subject: subject, bytes: deadLetter.json,
                    messageID: "deadletter-\(settings.agentStream)-\(sequence)")
            }
        }
        var lost = 0
        for message in batch.messages where (try? message.ack()) == nil { lost += 1 }
        if lost > 0 {
            // Stored already: the server redelivers these after the ack wait and they are dropped
            // as duplicates of their event ids.
            acksLost += lost
            logger.warning(
                "acknowledgements lost; those messages come again and are recognised", metadata: ["count": "\(lost)"])
        }
        return counts
    }
}
