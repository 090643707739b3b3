import Logging
import ScanAggregatorRuntime
import ScanCore
import ScanEvents
import ScanNATS
import ScanPostgres
import ScanServices

/// Orders in PostgreSQL (`scantrack_apply_order`, the function `scanadmin orders import` uses
/// too), reconnecting after a loss.
public final class PostgresOrderStore: OrderStore {
    private let database: PGReconnecting

    public init(dsn: String, passwordFile: String? = nil) {
        database = PGReconnecting(dsn: dsn, passwordFile: passwordFile)
    }

    public func apply(_ order: OrderMessage) throws -> OrderOutcome {
        let stored = try SiteStore(connection: try database.connection()).applyOrder(
            id: order.orderId, site: order.site, revision: order.revision, cancel: order.action == .cancel,
            lines: order.lines.map { ($0.line, $0.code, $0.quantity) }, source: "nats")
        if stored == SiteStore.revisionJumpRefused { return .revisionJump(maxJump: SiteStore.maxRevisionJump) }
        return stored < order.revision ? .applied : .unchanged(storedRevision: stored)
    }

    public func refuse(_ message: RefusedMessage) throws {
        try EventStore(connection: try database.connection()).insertDeadLetter(
            subject: message.subject, reason: message.reason, detail: message.detail, payload: message.payload)
    }

    public func isTransient(_ error: any Error) -> Bool { (error as? PGError)?.isConnectionLoss ?? false }

    public func reset() { database.reset() }
}

/// Orders from the WMS: the runtime's `OrderLoop` on a durable consumer of the orders stream,
/// PostgreSQL, and answers on the results stream. Blocking: run it on a thread of its own.
public final class OrderIntake: @unchecked Sendable {
    // @unchecked: used by the one thread that runs it.
    public let loop: OrderLoop

    public init(settings: IngestSettings, logger: Logger, clock: any ServiceClock = SystemClock()) throws {
        var options = NATSConnection.Options(security: settings.natsSecurity)
        options.name = "scan-aggregator orders"
        let connection = try NATSConnection(url: settings.natsURL, options: options)
        let jetStream = try connection.jetStream()
        try jetStream.ensureStream(settings.subjects.ordersStreamSpec(replicas: settings.replicas))
        try jetStream.ensureStream(settings.subjects.resultsStreamSpec(replicas: settings.replicas))
        var consumer = ConsumerSpec(durable: settings.durable + "-orders")
        consumer.ackWaitMilliseconds = settings.ackWaitMilliseconds
        let orders = try JetStreamEventConsumer(
            connection: connection, jetStream: jetStream, stream: settings.subjects.ordersStream,
            subject: settings.subjects.ordersStreamSubjects[0], spec: consumer)
        loop = OrderLoop(
            settings: OrderLoop.Settings(subjects: settings.subjects), consumer: orders,
            store: PostgresOrderStore(dsn: settings.postgresDSN, passwordFile: settings.postgresPasswordFile),
            publisher: JetStreamResultPublisher(jetStream: jetStream), clock: clock, logger: logger)
    }
}
