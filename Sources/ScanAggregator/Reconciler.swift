import Logging
import ScanAggregatorRuntime
import ScanCore
import ScanNATS
import ScanReconciliation
import ScanServices

/// Reconciliation over PostgreSQL with results published to JetStream: the runtime's
/// `ReconcileLoop` on `PostgresReconcileStore`. Blocking (cnats and libpq): run it on a thread
/// of its own.
public final class Reconciler: @unchecked Sendable {
    // @unchecked: handed to the one thread that runs it and used only there.
    public let settings: IngestSettings
    public let loop: ReconcileLoop

    public init(settings: IngestSettings, logger: Logger, clock: any ServiceClock = SystemClock()) throws {
        self.settings = settings
        var options = NATSConnection.Options(security: settings.natsSecurity)
        options.name = "scan-aggregator reconciler"
        let jetStream = try NATSConnection(url: settings.natsURL, options: options).jetStream()
        try jetStream.ensureStream(settings.subjects.resultsStreamSpec(replicas: settings.replicas))
        loop = ReconcileLoop(
            store: PostgresReconcileStore(dsn: settings.postgresDSN, passwordFile: settings.postgresPasswordFile),
            publisher: JetStreamResultPublisher(jetStream: jetStream), subjects: settings.subjects, clock: clock,
            logger: logger)
    }

    public var batchSize: Int {
        get { loop.batchSize }
        set { loop.batchSize = newValue }
    }
    /// Closed passes stay candidates for late sightings this long (wall time).
    public var lateMinutes: Int {
        get { loop.lateMinutes }
        set { loop.lateMinutes = newValue }
    }
    public var totals: ReconcileCounts { loop.totals }
    public func lagSeconds() throws -> Double { try loop.lagSeconds() }
    @discardableResult public func runOnce() throws -> ReconcileCounts { try loop.runOnce() }
}
