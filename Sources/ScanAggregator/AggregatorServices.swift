import Foundation
import Logging
import ScanCore
import ScanMetrics
import ScanPostgres
import ScanServices
import ServiceLifecycle

/// The aggregator as services for one `ServiceGroup`: heartbeats, reconciliation and ingest,
/// each blocking C on a thread of its own. Stopped in reverse order: ingest first (it stores and
/// acknowledges the batch it holds and the one it fetched ahead, so nothing waits for the ack
/// timeout), then reconciliation (ends its round), then heartbeats.
public final class AggregatorServices: Sendable {
    let settings: IngestSettings
    let ingestOnly: Bool
    let logger: Logger
    private let totals = IngestTotals()
    let metricsListen: (host: String, port: Int)?
    /// NATS, the consumer and PostgreSQL, as ingest finds them (`/health/ready`).
    public let readiness = Readiness(["nats", "consumer", "postgres"])

    /// `metricsListen`: where to serve /metrics and /health (nil: nowhere).
    public init(
        settings: IngestSettings, ingestOnly: Bool, logger: Logger, metricsListen: (host: String, port: Int)? = nil
    ) {
        self.settings = settings
        self.ingestOnly = ingestOnly
        self.logger = logger
        self.metricsListen = metricsListen
    }

    /// What ingest stored since the start (read once the group has ended).
    public var ingestTotals: IngestCounts { totals.value }

    public var services: [ServiceGroupConfiguration.ServiceConfiguration] {
        let (settings, logger, totals, readiness) = (self.settings, self.logger, self.totals, self.readiness)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        if let metricsListen {
            // First in, last out: /health/ready says "failing" while the others stop.
            services.append(
                .init(
                    service: ScanMetrics.endpoint(
                        host: metricsListen.host, port: metricsListen.port, readiness: readiness, logger: logger),
                    serviceName: "metrics"))
        }
        services.append(
            .init(
                service: ThreadService("heartbeats") { stop in try Self.recordHeartbeats(settings, logger, stop) },
                serviceName: "heartbeats"))
        services.append(
            .init(
                service: ThreadService("retention") { stop in Self.maintainPartitions(settings, logger, stop) },
                serviceName: "retention"))
        if !ingestOnly {
            services.append(
                .init(
                    service: ThreadService("reconciler") { stop in try Self.reconcile(settings, logger, stop) },
                    serviceName: "reconciler"))
        }
        services.append(
            .init(
                service: ThreadService("ingest") { [served = metricsListen != nil] stop in
                    try Self.ingest(settings, logger, stop, totals, served ? readiness : nil)
                },
                serviceName: "ingest"))
        return services
    }

    /// A group of these services; a program's stops on SIGTERM and SIGINT, a test's on no signal.
    public func group(stopsOnSignals: Bool) -> ServiceGroup {
        programGroup(services, stopsOnSignals: stopsOnSignals, logger: logger)
    }

    static func ingest(
        _ settings: IngestSettings, _ logger: Logger, _ stop: StopToken, _ totals: IngestTotals, _ readiness: Readiness?
    ) throws {
        guard
            let ingestor = try untilJetStreamReady(
                "ingest", stop: stop, logger: logger, { try Ingestor(settings: settings, logger: logger) })
        else { return }
        // Checked (NATS, consumer backlog, PostgreSQL every 2 s) only when /health is served.
        ingestor.readiness = readiness
        defer {
            readiness?.set("consumer", ok: false, detail: "stopped")
            readiness?.set("nats", ok: false, detail: "stopped")
        }
        logger.info("ingesting", metadata: ["stream": "\(settings.agentStream)", "durable": "\(settings.durable)"])
        defer { ingestor.close() }
        do {
            while !stop.isStopped {
                let counts = try ingestor.runOnce(stop: stop)
                totals.value = ingestor.totals
                if counts.messages > 0 {
                    logger.debug(
                        "batch", metadata: ["messages": "\(counts.messages)", "stored": "\(counts.sightingsStored)"])
                }
            }
            try ingestor.flush(stop: stop)  // what was fetched ahead is stored and acknowledged, not redelivered later
        } catch  where stop.isStopped {
            // PostgreSQL went away during the shutdown: what was not committed was not acknowledged
            // either, and JetStream delivers it again to the next aggregator.
            logger.warning("batch not stored at shutdown; it is delivered again", metadata: [LogKey.error: "\(error)"])
        }
        totals.value = ingestor.totals
    }

    static func reconcile(_ settings: IngestSettings, _ logger: Logger, _ stop: StopToken) throws {
        guard
            let reconciler = try untilJetStreamReady(
                "reconciliation", stop: stop, logger: logger, { try Reconciler(settings: settings, logger: logger) })
        else { return }
        var retry = RetryLog("reconciliation paused", logger: logger, policy: .poll)
        let reconciliationLag = AggregatorMetrics().reconciliationLag
        while !stop.isStopped {
            do {
                let counts = try reconciler.runOnce()
                retry.succeeded("reconciliation resumed")
                if let lag = try? reconciler.lagSeconds() { reconciliationLag.record(lag) }
                if counts.sightings < reconciler.batchSize { stop.sleep(for: .milliseconds(250)) }
            } catch {
                retry.failedAndWait(error, stop: stop)
            }
        }
        let totals = reconciler.totals
        logger.info(
            "reconciler stopped",
            metadata: [
                "passesOpened": "\(totals.passesOpened)", "passesClosed": "\(totals.passesClosed)",
                "late": "\(totals.lateSightings)",
                "packs": "\(totals.packs)", "itemsPublished": "\(totals.itemsPublished)",
                "packsPublished": "\(totals.packsPublished)",
            ])
    }

    /// Day partitions made ahead and expired ones dropped (`Retention.maintain`), at the start
    /// and then every `maintenanceInterval`; replicas take turns through an advisory lock.
    static func maintainPartitions(_ settings: IngestSettings, _ logger: Logger, _ stop: StopToken) {
        let database = PGReconnecting(dsn: settings.postgresDSN)
        var retry = RetryLog("partition maintenance failed", logger: logger, policy: .slow)
        while !stop.isStopped {
            var wait = settings.maintenanceInterval
            do {
                let outcome = try Retention(connection: try database.connection())
                    .maintain(overrides: settings.retentionOverrides)
                retry.succeeded("partition maintenance resumed")
                if !outcome.dropped.isEmpty || outcome.deletedRows > 0 || !outcome.created.isEmpty {
                    logger.info(
                        "partitions maintained",
                        metadata: [
                            "created": "\(outcome.created.joined(separator: ","))",
                            "dropped": "\(outcome.dropped.joined(separator: ","))",
                            "deletedRows": "\(outcome.deletedRows)",
                        ])
                }
            } catch {
                database.reset()
                retry.failed(error)
                wait = retry.backoff()
            }
            _ = stop.sleep(for: wait)
        }
    }

    static func recordHeartbeats(_ settings: IngestSettings, _ logger: Logger, _ stop: StopToken) throws {
        guard
            let recorder = try untilJetStreamReady(
                "heartbeats", stop: stop, logger: logger, { try HeartbeatRecorder(settings: settings, logger: logger) })
        else { return }
        while !stop.isStopped { recorder.runOnce() }
    }
}

/// Ingest's running totals, written by the ingest thread, read at the end.
final class IngestTotals: @unchecked Sendable {
    // @unchecked: guarded by the lock.
    private let lock = NSLock()
    private var counts = IngestCounts()
    var value: IngestCounts {
        get { lock.withLock { counts } }
        set { lock.withLock { counts = newValue } }
    }
}
