import Foundation
import Logging
import ScanCore
import ScanReconciliation
import ScanServices
import ServiceLifecycle

/// Ingest, reconciliation and orders from the WMS as services for one `ServiceGroup`, each on a
/// thread of its own. Listed in start order, so the group stops them in reverse: ingest first (it
/// stores and acknowledges the batch it holds and the one it fetched ahead, so nothing waits for
/// the ack timeout), then orders (ends the message it is answering), then reconciliation (ends its
/// round). The loops are made on their threads by the
/// factories given (a program's wait there until JetStream is ready; nil: stopped first).
public final class AggregatorRuntime: Sendable {
    public typealias Factory<Loop> = @Sendable (StopToken) throws -> Loop?

    private let ingest: Factory<IngestLoop>
    private let reconcile: Factory<ReconcileLoop>?
    private let orders: Factory<OrderLoop>?
    private let clock: any ServiceClock
    private let logger: Logger
    private let readiness: (any HealthReport)?
    private let totals = Totals()
    /// Ends the reconciliation pause early when ingest has stored parcels: a parcel pass and its
    /// divert decision wait for the next round, and a diverter is waiting for that.
    private let parcelsStored = Nudge()
    /// Between reconciliation rounds that found less than a batch (cut short when parcels come).
    public let reconcilePause: Duration

    /// `reconcile` nil: this replica only stores events (`--ingest-only`). `orders` nil: no
    /// orders from the WMS. `readiness`: told how the consumer, NATS and the store are
    /// (`/health/ready`), nil when nobody asks.
    public init(
        ingest: @escaping Factory<IngestLoop>, reconcile: Factory<ReconcileLoop>?, orders: Factory<OrderLoop>? = nil,
        clock: any ServiceClock, logger: Logger, readiness: (any HealthReport)? = nil,
        reconcilePause: Duration = .milliseconds(250)
    ) {
        self.ingest = ingest
        self.reconcile = reconcile
        self.orders = orders
        self.clock = clock
        self.logger = logger
        self.readiness = readiness
        self.reconcilePause = reconcilePause
    }

    /// Beats at each turn of the ingest loop and each attempt to store a batch: ingest goes on
    /// (idle, storing, or waiting for PostgreSQL), for a supervisor's watchdog.
    public let ingestPulse = Pulse()

    /// What ingest stored since the start (final once the group has ended).
    public var ingestTotals: IngestCounts { totals.ingest }
    /// What reconciliation did since the start (final once the group has ended).
    public var reconcileTotals: ReconcileCounts { totals.reconcile }
    /// What the orders service did since the start (final once the group has ended).
    public var orderTotals: OrderCounts { totals.orders }

    /// The services, in start order.
    public var services: [ServiceGroupConfiguration.ServiceConfiguration] {
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        if let reconcile {
            services.append(
                .init(
                    service: ThreadService("reconciler") { [self] stop in
                        guard let loop = try reconcile(stop) else { return }
                        runReconcile(loop, stop: stop)
                    }, serviceName: "reconciler"))
        }
        if let orders {
            services.append(
                .init(
                    service: ThreadService("orders") { [self] stop in
                        guard let loop = try orders(stop) else { return }
                        while !stop.isStopped {
                            loop.runOnce(stop: stop)
                            totals.orders = loop.totals
                        }
                        logger.info(
                            "orders stopped",
                            metadata: [
                                "applied": .stringConvertible(loop.totals.applied),
                                "unchanged": .stringConvertible(loop.totals.unchanged),
                                "rejected": .stringConvertible(loop.totals.rejected),
                            ])
                    }, serviceName: "orders"))
        }
        services.append(
            .init(
                service: ThreadService("ingest") { [self] stop in
                    guard let loop = try ingest(stop) else { return }
                    try runIngest(loop, stop: stop)
                }, serviceName: "ingest"))
        return services
    }

    /// Ingests until stopped, then stores what was fetched ahead. A store failure that is not
    /// waited out ends the service (and the group) with the error, unless it came during the
    /// shutdown: what was not committed was not acknowledged either, and comes again.
    func runIngest(_ loop: IngestLoop, stop: StopToken) throws {
        loop.readiness = readiness
        loop.pulse = ingestPulse
        defer {
            readiness?.set("consumer", ok: false, detail: "stopped")
            readiness?.set("nats", ok: false, detail: "stopped")
        }
        logger.info("ingesting", metadata: ["from": "\(loop.source)"])
        defer { loop.close() }
        do {
            while !stop.isStopped {
                ingestPulse.beat()
                let counts = try loop.runOnce(stop: stop)
                totals.ingest = loop.totals
                if counts.stored[.parcel] > 0 { parcelsStored.fire() }
                if counts.messages > 0 {
                    logger.debug(
                        "batch",
                        metadata: [
                            "messages": .stringConvertible(counts.messages),
                            "stored": .stringConvertible(counts.stored[.sighting]),
                        ])
                }
            }
            try loop.flush(stop: stop)  // what was fetched ahead is stored and acknowledged, not redelivered later
        } catch  where stop.isStopped {
            logger.warning("batch not stored at shutdown; it is delivered again", metadata: [LogKey.error: "\(error)"])
        }
        totals.ingest = loop.totals
        logger.info(
            "ingest stopped",
            metadata: [
                "messages": .stringConvertible(loop.totals.messages),
                "sightings": .stringConvertible(loop.totals.stored[.sighting]),
            ])
    }

    /// Rounds until stopped: at once while a round finds a full batch, else after
    /// `reconcilePause` or as soon as ingest has stored parcels (since the round began); a failed
    /// round is retried on the poll policy, each new error logged once.
    func runReconcile(_ loop: ReconcileLoop, stop: StopToken) {
        var retry = RetryLog("reconciliation paused", logger: logger, policy: .poll)
        let reconciliationLag = AggregatorMetrics().reconciliationLag
        let nudge = parcelsStored
        stop.whenStopped { nudge.fire() }
        while !stop.isStopped {
            do {
                let pause = parcelsStored.renew()
                let counts = try loop.runOnce()
                totals.reconcile = loop.totals
                retry.succeeded("reconciliation resumed")
                if let lag = try? loop.lagSeconds() { reconciliationLag.record(lag) }
                if counts.sightings < loop.batchSize { clock.sleep(for: reconcilePause, stop: pause) }
            } catch {
                retry.failedAndWait(error, stop: stop, sleeper: clock)
            }
        }
        let totals = loop.totals
        self.totals.reconcile = totals
        logger.info(
            "reconciler stopped",
            metadata: [
                "passesOpened": .stringConvertible(totals.passesOpened),
                "passesClosed": .stringConvertible(totals.passesClosed),
                "late": .stringConvertible(totals.lateSightings),
                "packs": .stringConvertible(totals.packs), "itemsPublished": .stringConvertible(totals.itemsPublished),
                "packsPublished": .stringConvertible(totals.packsPublished),
            ])
    }

    /// A wake-up call between threads: `renew` hands out a token that the next `fire` stops, so
    /// a sleep on it ends early; a fire before the sleep begins (during the round) is not lost.
    private final class Nudge: @unchecked Sendable {
        // @unchecked: guarded by the lock.
        private let lock = NSLock()
        private var current = StopToken()

        /// The token for the coming pause: a fresh one unless it has not fired since.
        func renew() -> StopToken {
            lock.withLock {
                if current.isStopped { current = StopToken() }
                return current
            }
        }

        func fire() { lock.withLock { current }.stop() }
    }

    /// The loops' running totals, written by their threads, read by anyone.
    private final class Totals: @unchecked Sendable {
        // @unchecked: guarded by the lock.
        private let lock = NSLock()
        private var ingestCounts = IngestCounts()
        private var reconcileCounts = ReconcileCounts()
        private var orderCounts = OrderCounts()
        var orders: OrderCounts {
            get { lock.withLock { orderCounts } }
            set { lock.withLock { orderCounts = newValue } }
        }
        var ingest: IngestCounts {
            get { lock.withLock { ingestCounts } }
            set { lock.withLock { ingestCounts = newValue } }
        }
        var reconcile: ReconcileCounts {
            get { lock.withLock { reconcileCounts } }
            set { lock.withLock { reconcileCounts = newValue } }
        }
    }
}
