import Foundation
import Logging
import ScanCore
import ScanNATS
import ScanPostgres

/// Where the aggregator reads and writes.
public struct IngestSettings: Sendable {
    public var natsURL: String
    public var postgresDSN: String
    /// Subject prefix (`scantrack`): agents publish on `<prefix>.v1.sighting.<site>.<camera>`.
    public var prefix: String = "scantrack"
    /// Durable consumer name; replicas share it and split the work.
    public var durable: String = "aggregator"
    public var batchSize: Int = 500
    public var fetchWaitMilliseconds: Int64 = 500
    /// Unacknowledged messages come back after this long (a replica that died mid-batch).
    public var ackWaitMilliseconds: Int64 = 10_000

    public init(natsURL: String, postgresDSN: String) {
        self.natsURL = natsURL
        self.postgresDSN = postgresDSN
    }

    /// The agents' stream (sightings and sessions) and the dead-letter stream.
    public var subjects: ContractSubjects { ContractSubjects(prefix: prefix) }
    public var agentStream: String { subjects.agentStream }
    public var deadLetterStream: String { subjects.deadLetterStream }
    public var sightingSubjects: String { "\(prefix).v1.sighting.>" }
    public var sessionSubjects: String { "\(prefix).v1.session.>" }
}

/// What one pass stored.
public struct IngestCounts: Sendable, Equatable {
    public var messages = 0
    public var sightingsStored = 0
    public var sessionEventsStored = 0
    public var duplicates = 0
    public var deadLetters = 0

    static func + (a: IngestCounts, b: IngestCounts) -> IngestCounts {
        IngestCounts(
            messages: a.messages + b.messages, sightingsStored: a.sightingsStored + b.sightingsStored,
            sessionEventsStored: a.sessionEventsStored + b.sessionEventsStored, duplicates: a.duplicates + b.duplicates,
            deadLetters: a.deadLetters + b.deadLetters)
    }
}

/// Durable ingest: pull a batch from JetStream, validate, write it in one transaction, and only
/// then acknowledge. A crash before the commit leaves the messages unacknowledged, so JetStream
/// delivers them again; storage is idempotent on the event id, so nothing is stored twice.
/// Blocking (cnats and libpq): run it on a thread of its own.
public final class Ingestor {
    public let settings: IngestSettings
    private let logger: Logger
    private let jetStream: JetStream
    private let sightings: PullSubscription
    private let sessions: PullSubscription
    private let database: PGReconnecting
    public private(set) var totals = IngestCounts()

    public init(settings: IngestSettings, logger: Logger) throws {
        self.settings = settings
        self.logger = logger
        database = PGReconnecting(dsn: settings.postgresDSN)
        var options = NATSConnection.Options()
        options.name = "scan-aggregator"
        let connection = try NATSConnection(url: settings.natsURL, options: options)
        jetStream = try connection.jetStream()
        try Self.ensureStreams(jetStream, settings)
        var consumer = ConsumerSpec(durable: settings.durable + "-sighting")
        consumer.ackWaitMilliseconds = settings.ackWaitMilliseconds
        sightings = try jetStream.pullSubscribe(stream: settings.agentStream, subject: settings.sightingSubjects, consumer: consumer)
        consumer.durable = settings.durable + "-session"
        sessions = try jetStream.pullSubscribe(stream: settings.agentStream, subject: settings.sessionSubjects, consumer: consumer)
    }

    /// Creates (or updates) the agents' stream and the dead-letter stream.
    public static func ensureStreams(_ jetStream: JetStream, _ settings: IngestSettings) throws {
        try jetStream.ensureStream(settings.subjects.agentStreamSpec)
        try jetStream.ensureStream(settings.subjects.deadLetterStreamSpec)
        try jetStream.ensureStream(settings.subjects.resultsStreamSpec)
    }

    /// One fetch from each consumer, stored and acknowledged. Returns what it did (zero messages
    /// when nothing was waiting).
    @discardableResult
    public func runOnce() throws -> IngestCounts {
        var counts = try pass(sightings)
        counts = counts + (try pass(sessions))
        totals = totals + counts
        return counts
    }

    private func pass(_ subscription: PullSubscription) throws -> IngestCounts {
        let messages = try subscription.fetch(batch: settings.batchSize, timeoutMilliseconds: settings.fetchWaitMilliseconds)
        guard !messages.isEmpty else { return IngestCounts() }
        var counts = IngestCounts(messages: messages.count)
        var sightingRows: [(record: SightingRecord, body: String)] = []
        var sessionRows: [(record: SessionRecord, body: String)] = []
        var refused: [(message: JetStreamMessage, letter: DeadLetter)] = []
        for message in messages {
            let bytes = message.bytes
            do {
                let event = try EventValidator.parse(bytes)
                // jsonb cannot hold NUL; such a body is refused rather than breaking the batch.
                let body = String(decoding: bytes, as: UTF8.self)
                if body.contains("\\u0000") { throw DeadLetter(.badValue, "the event holds a NUL character (\\u0000)") }
                if message.subject.hasPrefix(settings.prefix + ".v1.sighting.") {
                    sightingRows.append((try EventValidator.sighting(event), body))
                } else {
                    sessionRows.append((try EventValidator.session(event), body))
                }
            } catch let letter as DeadLetter {
                refused.append((message, letter))
            }
        }
        // Store until it works: PostgreSQL restarting pauses ingest, it loses nothing.
        var attempt = 0
        while true {
            do {
                let connection = try database.connection()
                let store = EventStore(connection: connection)
                try connection.transaction { () throws(PGError) in
                    counts.sightingsStored = try store.insertSightings(sightingRows)
                    counts.sessionEventsStored = try store.insertSessionEvents(sessionRows)
                    for (message, letter) in refused {
                        try store.insertDeadLetter(
                            subject: message.subject, reason: letter.reason.rawValue, detail: letter.detail, payload: message.bytes)
                    }
                }
                break
            } catch {
                attempt += 1
                guard error.isConnectionLoss, attempt < 600 else { throw error }
                if attempt == 1 || attempt % 20 == 0 {
                    logger.warning("PostgreSQL unavailable, ingest paused", metadata: ["error": "\(error)", "attempt": "\(attempt)"])
                }
                database.reset()
                usleep(250_000)
            }
        }
        counts.duplicates = sightingRows.count - counts.sightingsStored + sessionRows.count - counts.sessionEventsStored
        counts.deadLetters = refused.count
        for (message, letter) in refused {
            // Stored already; the subject is for whoever watches for bad input.
            var payload = JSONWriter()
            payload.field("reason", letter.reason.rawValue)
            payload.field("detail", letter.detail)
            payload.field("subject", message.subject)
            payload.field("payload", Base64.encode(Array(message.bytes.prefix(4096))))
            if let sequence = try? message.metadata().streamSequence {
                _ = try? jetStream.publish(
                    subject: "\(settings.prefix).v1.deadletter.\(letter.reason.rawValue)", bytes: payload.finished(),
                    messageID: "deadletter-\(settings.agentStream)-\(sequence)")
            }
        }
        for message in messages { try message.ack() }
        return counts
    }
}
