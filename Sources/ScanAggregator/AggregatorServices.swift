import Foundation
import Logging
import ScanAggregatorRuntime
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
    let logger: Logger
    let metricsListen: (host: String, port: Int)?
    let supervisor: SystemdNotifier?
    /// NATS, the consumer and PostgreSQL, as ingest finds them (`/health/ready`).
    public let readiness = Readiness(["nats", "consumer", "postgres"])
    /// Ingest and reconciliation on JetStream and PostgreSQL.
    public let runtime: AggregatorRuntime

    /// `metricsListen`: where to serve /metrics and /health (nil: nowhere). `supervisor`:
    /// systemd's notifications (from the environment; nil or inactive outside a notify unit).
    public init(
        settings: IngestSettings, ingestOnly: Bool, logger: Logger, metricsListen: (host: String, port: Int)? = nil,
        supervisor: SystemdNotifier? = nil
    ) {
        self.settings = settings
        self.logger = logger
        self.metricsListen = metricsListen
        self.supervisor = supervisor
        let ingest: AggregatorRuntime.Factory<IngestLoop> = { stop in
            try untilJetStreamReady("ingest", stop: stop, logger: logger) {
                try Ingestor(settings: settings, logger: logger).loop
            }
        }
        let reconcile: AggregatorRuntime.Factory<ReconcileLoop> = { stop in
            try untilJetStreamReady("reconciliation", stop: stop, logger: logger) {
                try Reconciler(settings: settings, logger: logger).loop
            }
        }
        let orders: AggregatorRuntime.Factory<OrderLoop> = { stop in
            try untilJetStreamReady("orders", stop: stop, logger: logger) {
                try OrderIntake(settings: settings, logger: logger).loop
            }
        }
        runtime = AggregatorRuntime(
            ingest: ingest, reconcile: ingestOnly ? nil : reconcile, orders: ingestOnly ? nil : orders,
            clock: SystemClock(), logger: logger,
            readiness: metricsListen != nil || supervisor?.isActive == true ? readiness : nil)
    }

    /// What ingest stored since the start (read once the group has ended).
    public var ingestTotals: IngestCounts { runtime.ingestTotals }

    /// The services in start order: metrics first (so /health/ready says "failing" while the
    /// others stop), heartbeats, retention, then the runtime's reconciliation and ingest; the
    /// group stops them in reverse.
    public var services: [ServiceGroupConfiguration.ServiceConfiguration] {
        let (settings, logger, readiness) = (self.settings, self.logger, self.readiness)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        if let supervisor, supervisor.isActive {
            // Ready once NATS, the consumer and PostgreSQL all answer; the watchdog fed while
            // ingest goes round (idle, storing, or waiting for PostgreSQL to come back).
            let pulse = runtime.ingestPulse
            services.append(
                .init(
                    service: SupervisorService(notifier: supervisor, logger: logger) {
                        let checks = readiness.current
                        return SupervisorReport(
                            ready: checks.allSatisfy(\.ok), alive: pulse.movedSinceLastLook(),
                            status: checks.map { "\($0.name) \($0.ok ? "ok" : "failing")" }.joined(separator: ", "))
                    }, serviceName: "systemd"))
        }
        if let metricsListen {
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
        return services + runtime.services
    }

    /// A group of these services; a program's stops on SIGTERM and SIGINT and takes SIGHUP (its
    /// settings come from flags and the environment, which a running process cannot read again:
    /// it says so instead of ending, as SIGHUP's default would), a test's owns no signal.
    public func group(stopsOnSignals: Bool) -> ServiceGroup {
        let hangup = ServiceGroupConfiguration.ServiceConfiguration(
            service: HangupService.nothingToReload(logger: logger), serviceName: "reload")
        return programGroup((stopsOnSignals ? [hangup] : []) + services, stopsOnSignals: stopsOnSignals, logger: logger)
    }

    /// Day partitions made ahead and expired ones dropped (`Retention.maintain`), at the start
    /// and then every `maintenanceInterval`; replicas take turns through an advisory lock.
    static func maintainPartitions(_ settings: IngestSettings, _ logger: Logger, _ stop: StopToken) {
        let database = PGReconnecting(dsn: settings.postgresDSN, passwordFile: settings.postgresPasswordFile)
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
                            "deletedRows": .stringConvertible(outcome.deletedRows),
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
