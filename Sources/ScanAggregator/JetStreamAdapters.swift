import ScanAggregatorRuntime
import ScanCore
import ScanMetrics
import ScanNATS

// JetStream behind the aggregator runtime's ports.

extension JetStreamMessage: ConsumedMessage {
    public var streamSequence: UInt64? { try? metadata().streamSequence }
    public var storedInStream: Timestamp? {
        (try? metadata()).map { Timestamp(milliseconds: $0.timestampNanoseconds / 1_000_000) }
    }
    public var traceparent: String? { message.header(TraceContext.header) }
}

/// One stream through a durable pull consumer shared by replicas.
public final class JetStreamEventConsumer: EventConsumer {
    private let connection: NATSConnection
    private let jetStream: JetStream
    public let stream: String
    private let subject: String
    private let spec: ConsumerSpec
    private var subscription: PullSubscription

    /// Binds to (or creates) `spec`'s durable consumer on `stream`, filtered to `subject`.
    public init(connection: NATSConnection, jetStream: JetStream, stream: String, subject: String, spec: ConsumerSpec)
        throws(NATSError)
    {
        self.connection = connection
        self.jetStream = jetStream
        self.stream = stream
        self.subject = subject
        self.spec = spec
        subscription = try jetStream.pullSubscribe(stream: stream, subject: subject, consumer: spec)
    }

    public func fetch(batch: Int, timeoutMilliseconds: Int64) throws -> [any ConsumedMessage] {
        try subscription.fetch(batch: batch, timeoutMilliseconds: timeoutMilliseconds)
    }

    public func rebind() throws {
        subscription = try jetStream.pullSubscribe(stream: stream, subject: subject, consumer: spec)
    }

    public var isConnected: Bool { connection.isConnected }

    public func backlog() -> (pending: UInt64, ackPending: Int64)? {
        try? jetStream.consumerBacklog(stream: stream, consumer: spec.durable)
    }

    public func streamUsages() -> [(stream: String, bytes: UInt64, maxBytes: Int64)] {
        (try? jetStream.usage(stream: stream)).map { [(stream, $0.bytes, $0.maxBytes)] } ?? []
    }

    /// Up to `batch` messages without waiting (`PullSubscription.fetchWaiting`).
    public func fetchWaiting(batch: Int) throws -> [any ConsumedMessage] {
        try subscription.fetchWaiting(batch: batch)
    }

    public var description: String { "\(spec.durable) on \(stream)" }
}

/// Results and dead letters published to JetStream, deduplicated by message id.
public final class JetStreamResultPublisher: ResultPublisher {
    private let jetStream: JetStream

    public init(jetStream: JetStream) { self.jetStream = jetStream }

    public func publish(subject: String, bytes: [UInt8], messageID: String, trace: TraceContext?) throws {
        _ = try jetStream.publish(
            subject: subject, bytes: bytes, messageID: messageID,
            headers: trace.map { [(TraceContext.header, $0.traceparent)] } ?? [])
    }
}

extension Readiness: HealthReport {}
