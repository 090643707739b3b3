import Foundation
import Logging
import ScanAggregatorRuntime
import ScanCore
import ScanNATS
import ScanPostgres
import ScanServices

/// Where the aggregator reads and writes.
public struct IngestSettings: Sendable {
    public var natsURL: String
    public var postgresDSN: String
    /// A file whose first line is the PostgreSQL password (the program takes it from
    /// --pg-password-file or SCANTRACK_PG_PASSWORD_FILE; nil: the DSN's or libpq's own).
    public var postgresPasswordFile: String?
    /// NATS credentials and TLS (the program takes them from SCANTRACK_NATS_*; none by default).
    public var natsSecurity = NATSSecurity()
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
    /// The limit of each camera's own stream (docs/security.md, "One sender cannot starve the others").
    public var cameraStreamBytes: Int64 = ContractSubjects.cameraStreamBytes
    /// How long the images bucket keeps a picture, and the bytes it may hold (`ImageObject`).
    public var imagesMaxAgeSeconds: Int64 = 30 * 86_400
    public var imagesMaxBytes: Int64 = ContractSubjects.imagesStreamBytes
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
}

/// Durable ingest from JetStream into PostgreSQL (or the store given): the runtime's
/// `IngestLoop` on a durable pull consumer of the agents' stream, with dead letters published
/// to their stream. Blocking (cnats and libpq): run it on a thread of its own.
public final class Ingestor: @unchecked Sendable {
    // @unchecked: used by the one thread that runs it (the loop's own rule).
    public let settings: IngestSettings
    public let loop: IngestLoop

    /// `store`: where batches go (PostgreSQL at `settings.postgresDSN` unless given).
    public init(
        settings: IngestSettings, logger: Logger, store: (any SightingStore)? = nil,
        clock: any ServiceClock = SystemClock()
    ) throws {
        self.settings = settings
        var options = NATSConnection.Options(security: settings.natsSecurity)
        options.name = "scan-aggregator"
        let connection = try NATSConnection(url: settings.natsURL, options: options)
        let jetStream = try connection.jetStream()
        try Self.ensureStreams(jetStream, settings)
        var consumer = ConsumerSpec(durable: settings.durable)
        consumer.ackWaitMilliseconds = settings.ackWaitMilliseconds
        let storage =
            store ?? PostgresSightingStore(dsn: settings.postgresDSN, passwordFile: settings.postgresPasswordFile)
        let events = try SenderStreamsConsumer(
            connection: connection, jetStream: jetStream, subjects: settings.subjects, spec: consumer,
            replicas: settings.replicas, cameraBytes: settings.cameraStreamBytes, logger: logger,
            topology: { try storage.topology() })
        var loopSettings = IngestLoop.Settings(subjects: settings.subjects)
        loopSettings.batchSize = settings.batchSize
        loopSettings.fetchWaitMilliseconds = settings.fetchWaitMilliseconds
        loop = IngestLoop(
            settings: loopSettings, consumer: events, store: storage,
            publisher: JetStreamResultPublisher(jetStream: jetStream), clock: clock, logger: logger)
    }

    /// Creates (or updates) the agents' stream, the dead-letter stream, the results stream, the
    /// orders stream and the images bucket's stream. The agents' stream is left as it is once it has let go of the senders'
    /// subjects to their own streams (`SenderStreamsConsumer` keeps those).
    public static func ensureStreams(_ jetStream: JetStream, _ settings: IngestSettings) throws {
        let retired = [settings.subjects.retiredAgentStreamSubject]
        if (try? jetStream.streamFacts(settings.agentStream))?.subjects != retired {
            try jetStream.ensureStream(settings.subjects.agentStreamSpec(replicas: settings.replicas))
        }
        try jetStream.ensureStream(settings.subjects.deadLetterStreamSpec(replicas: settings.replicas))
        try jetStream.ensureStream(settings.subjects.resultsStreamSpec(replicas: settings.replicas))
        try jetStream.ensureStream(settings.subjects.ordersStreamSpec(replicas: settings.replicas))
        try jetStream.ensureStream(
            ContractSubjects.imagesStreamSpec(
                maxAgeSeconds: settings.imagesMaxAgeSeconds, maxBytes: settings.imagesMaxBytes,
                replicas: settings.replicas))
    }

    /// One batch stored and acknowledged (`IngestLoop.runOnce`).
    @discardableResult
    public func runOnce(stop: StopToken = StopToken()) throws -> IngestCounts { try loop.runOnce(stop: stop) }
    /// What was fetched ahead, stored (`IngestLoop.flush`).
    public func flush(stop: StopToken = StopToken()) throws { try loop.flush(stop: stop) }
    public var totals: IngestCounts { loop.totals }
    public var acksLost: Int { loop.acksLost }
    public var onCommit: (@Sendable ([Timestamp]) -> Void)? {
        get { loop.onCommit }
        set { loop.onCommit = newValue }
    }
    public func close() { loop.close() }
}
