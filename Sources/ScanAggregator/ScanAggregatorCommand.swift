import ArgumentParser
import Dispatch
import Foundation
import Logging
import ScanCore
import ScanMetrics
import ScanNATS
import ScanPostgres
import ScanServices
import ScanReconciliation

/// `scan-aggregator`: stores agent events, reconciles cameras, builds pack records.
public struct ScanAggregatorCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "scan-aggregator",
        abstract: "Consume ScanTrack agent events into PostgreSQL and publish item and pack results.",
        version: BuildInfo.versionText(program: "scan-aggregator"),
        subcommands: [Run.self, Health.self]
    )

    public init() {}

    /// `scan-aggregator health`: asks a running aggregator whether it is ready (a container's
    /// HEALTHCHECK).
    struct Health: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Ask a running aggregator at its metrics address whether it is ready (exit 0) or not (exit 1).",
            discussion: """
                The address is --listen, else $SCANTRACK_METRICS_LISTEN (what run --metrics-listen also \
                takes). Prints what /health/ready says (NATS, the consumer, PostgreSQL), or /health/live with --live.
                """)

        @Option(help: "HOST:PORT of the aggregator's metrics and health endpoint.") var listen: String?
        @Flag(help: "Only whether it runs (/health/live), not whether it is ready.") var live = false

        func run() throws {
            guard let address = SettingResolver().string(flag: ("listen", listen), variable: "SCANTRACK_METRICS_LISTEN")
            else { throw ValidationError("give --listen HOST:PORT or set SCANTRACK_METRICS_LISTEN") }
            let status = HealthProbe.check(listen: address.value, live: live, program: "scan-aggregator")
            if status != 0 { throw ExitCode(status) }
        }
    }

    /// Parses the program's arguments and runs the command (async: `run` is a service group).
    public static func start() async { await main(nil) }

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Ingest agent events until SIGTERM/SIGINT.",
            discussion: """
                Servers come from --nats/--pg, else SCANTRACK_NATS/SCANTRACK_PG; a NATS cluster is given as \
                its servers' URLs separated by commas. Refuses to start on a \
                schema that is behind (run `scanadmin migrate`). Several replicas may run at once: they \
                share one durable consumer. Exit codes: 0 stopped by a signal, 1 failure, 64 bad usage.
                """)
        @Option(name: .customLong("nats"), help: "NATS URL (default: $SCANTRACK_NATS, then $NATS_URL).") var nats:
            String?
        @Option(
            name: .customLong("pg"),
            help: "libpq connection string (default: $SCANTRACK_PG, then libpq's PG* variables).") var postgres: String?
        @Option(
            name: .customLong("pg-password-file"),
            help: "A file whose first line is the PostgreSQL password (default: $SCANTRACK_PG_PASSWORD_FILE).")
        var postgresPasswordFile: String?
        @Option(help: "Subject prefix.") var prefix: String = "scantrack"
        @Option(help: "Durable consumer name shared by replicas.") var durable: String = "aggregator"
        @Option(
            name: .customLong("stream-replicas"),
            help:
                "Copies a JetStream cluster keeps of the streams this aggregator creates (default: $SCANTRACK_NATS_REPLICAS, else 1; an existing stream keeps its own)."
        )
        var streamReplicas: Int?
        @Option(
            name: .customLong("camera-stream-mib"),
            help:
                "MiB each camera's own stream may hold that the aggregator has not read yet (default: $SCANTRACK_CAMERA_STREAM_MIB, else 256); see docs/security.md."
        )
        var cameraStreamMiB: Int?
        @Option(
            name: .customLong("images-max-age-days"),
            help:
                "Days the images bucket keeps a picture (default: $SCANTRACK_IMAGES_MAX_AGE_DAYS, else 30; 0: until --images-max-gib); see docs/integration.md, Images."
        )
        var imagesMaxAgeDays: Int?
        @Option(
            name: .customLong("images-max-gib"),
            help:
                "GiB the images bucket may hold; full, it refuses new pictures (default: $SCANTRACK_IMAGES_MAX_GIB, else 20)."
        )
        var imagesMaxGiB: Int?
        @Option(help: "Messages per batch (one COPY and one transaction each).") var batch: Int = 2_000
        @Option(
            help:
                "Folder of the SQL migrations, to check the schema is current (default: $SCANTRACK_MIGRATIONS, ./migrations, the installed copy, else the ones built into the program)."
        )
        var migrations: String?
        @Option(help: "A topology file (lanes, cameras, travel times) to load before starting; see docs/topology.md.")
        var topology: String?
        @Option(
            help:
                "Deprecated: days no-reads are kept, instead of their setting in `scanadmin retention` (default: $SCANTRACK_NOREAD_RETENTION_DAYS)."
        )
        var noreadRetentionDays: Int?
        @Flag(help: "Only store events: no item passes or pack records from this replica.") var ingestOnly = false
        @Option(
            help:
                "HOST:PORT for /metrics (Prometheus) and /health/live|ready (default: $SCANTRACK_METRICS_LISTEN, else none; port 0: any free port)."
        )
        var metricsListen: String?
        @Option(
            help:
                "Log level: trace, debug, info, notice, warning, error, critical (default: $SCANTRACK_LOG_LEVEL, else info)."
        )
        var logLevel: String?
        @Option(
            help:
                "Log lines: text, or json, one object a line for Loki or ELK (default: $SCANTRACK_LOG_FORMAT, else text)."
        )
        var logFormat: String?

        func validate() throws {
            if let metricsListen, ListenAddress.parse(metricsListen) == nil {
                throw ValidationError("--metrics-listen '\(metricsListen)' is not HOST:PORT")
            }
            do {
                _ = try LogChoice.resolve(level: logLevel, format: logFormat)
            } catch {
                throw ValidationError(error.description)
            }
        }

        /// A failure before the services start: a log line in the chosen form (with `--log-format
        /// json` one JSON object, as every other line), else the plain message operators know.
        static func startFailed(_ error: any Error, logger: Logger) {
            if ScanLogging.format == .json {
                logger.critical("scan-aggregator could not start", metadata: ["error": "\(error)"])
            } else {
                ScanLogging.writeError("scan-aggregator: \(error)")
            }
        }

        /// A whole number from its flag or variable; one that is not a number is a usage error naming where.
        static func number(_ resolver: SettingResolver, flag: (String, Int?), variable: String) throws -> Int? {
            do {
                return try resolver.int(flag: flag, variable: variable)?.value
            } catch {
                throw ValidationError(error.description)
            }
        }

        func run() async throws {
            let resolver = SettingResolver()
            guard let natsURL = resolver.nats(flag: ("nats", nats))?.value else {
                throw ValidationError("no NATS server: pass --nats, or set SCANTRACK_NATS or NATS_URL")
            }
            guard let dsn = resolver.postgres(flag: ("pg", postgres))?.value else {
                throw ValidationError("no PostgreSQL: pass --pg, or set SCANTRACK_PG or libpq's PGHOST, PGSERVICE, …")
            }
            let passwordFile = resolver.string(
                flag: ("pg-password-file", postgresPasswordFile), variable: PGConnection.passwordFileVariable)?.value
            let logs = (try? LogChoice.resolve(level: logLevel, format: logFormat)) ?? LogChoice()
            ScanLogging.format = logs.format
            let logger = ScanLogging.logger("scan-aggregator", level: logs.level)
            do {
                let given = resolver.string(flag: ("migrations", migrations), variable: MigrationsFolder.variable)?
                    .value
                let database = try PGConnection(dsn: dsn, passwordFile: passwordFile)
                try MigrationsFolder.source(given).migrator().requireCurrent(database)
                if let topology {
                    let layout = try loadTopologyFile(topology)
                    try SiteStore(connection: database).load(layout)
                    logger.info(
                        "topology loaded",
                        metadata: ["file": "\(topology)", "sites": .stringConvertible(layout.sites.count)])
                }
            } catch let error as PGError {
                Self.startFailed(error, logger: logger)
                throw ExitCode.failure
            } catch let error as ConfigErrors {
                Self.startFailed(error, logger: logger)
                throw ExitCode(2)
            }
            var settings = IngestSettings(natsURL: natsURL, postgresDSN: dsn)
            settings.natsSecurity = .fromEnvironment(resolver.environment)
            settings.postgresPasswordFile = passwordFile
            settings.prefix = prefix
            settings.durable = durable
            settings.batchSize = batch
            let days = try Self.number(
                resolver, flag: ("noread-retention-days", noreadRetentionDays),
                variable: "SCANTRACK_NOREAD_RETENTION_DAYS")
            if let days {
                guard days >= 0 else {
                    throw ValidationError("--noread-retention-days must be 0 (keep) or more, not \(days)")
                }
                settings.retentionOverrides["noreads"] = days
            }
            if let replicas = try Self.number(
                resolver, flag: ("stream-replicas", streamReplicas), variable: "SCANTRACK_NATS_REPLICAS")
            {
                guard (1...5).contains(replicas) else {
                    throw ValidationError(
                        "--stream-replicas must be 1 to 5 (a JetStream cluster keeps at most 5 copies), not \(replicas)"
                    )
                }
                settings.replicas = Int64(replicas)
            }
            if let mebibytes = try Self.number(
                resolver, flag: ("camera-stream-mib", cameraStreamMiB), variable: "SCANTRACK_CAMERA_STREAM_MIB")
            {
                guard (8...65_536).contains(mebibytes) else {
                    throw ValidationError("--camera-stream-mib must be 8 to 65536 (MiB), not \(mebibytes)")
                }
                settings.cameraStreamBytes = Int64(mebibytes) << 20
            }
            if let days = try Self.number(
                resolver, flag: ("images-max-age-days", imagesMaxAgeDays), variable: "SCANTRACK_IMAGES_MAX_AGE_DAYS")
            {
                guard (0...3_650).contains(days) else {
                    throw ValidationError("--images-max-age-days must be 0 (until the byte limit) to 3650, not \(days)")
                }
                settings.imagesMaxAgeSeconds = Int64(days) * 86_400
            }
            if let gibibytes = try Self.number(
                resolver, flag: ("images-max-gib", imagesMaxGiB), variable: "SCANTRACK_IMAGES_MAX_GIB")
            {
                guard (1...100_000).contains(gibibytes) else {
                    throw ValidationError("--images-max-gib must be 1 to 100000 (GiB), not \(gibibytes)")
                }
                settings.imagesMaxBytes = Int64(gibibytes) << 30
            }
            var metrics: (host: String, port: Int)?
            if let listen = resolver.string(
                flag: ("metrics-listen", metricsListen), variable: "SCANTRACK_METRICS_LISTEN")?
                .value
            {
                guard let address = ListenAddress.parse(listen) else {
                    throw ValidationError("SCANTRACK_METRICS_LISTEN '\(listen)' is not HOST:PORT")
                }
                metrics = address
                BuildInfo.record(program: "scan-aggregator")  // bootstraps metrics before any is made
            }
            let services = AggregatorServices(
                settings: settings, ingestOnly: ingestOnly, logger: logger, metricsListen: metrics,
                supervisor: SystemdNotifier(environment: ProcessInfo.processInfo.environment))
            do {
                try await services.group(stopsOnSignals: true).run()
            } catch {
                logger.error("scan-aggregator failed", metadata: [LogKey.error: "\(error)"])
                throw ExitCode.failure
            }
            let totals = services.ingestTotals
            logger.info(
                "stopped",
                metadata: [
                    "messages": .stringConvertible(totals.messages),
                    "sightings": .stringConvertible(totals.stored[.sighting]),
                    "noReads": .stringConvertible(totals.stored[.noread]),
                    "sessionEvents": .stringConvertible(totals.stored[.session]),
                    "duplicates": .stringConvertible(totals.duplicates),
                    "deadLetters": .stringConvertible(totals.deadLetters),
                ])
        }
    }
}

/// Runs `body` until it works, while it fails on JetStream (a cluster electing leaders, a node
/// restarting: the streams cannot be created or bound yet), logging each new error; nil when
/// a stop was asked for first. No server answering at all is an error at once (a wrong URL
/// should not look like a slow start).
func untilJetStreamReady<T>(_ what: String, stop: StopToken, logger: Logger, _ body: () throws -> T) throws -> T? {
    var retry = RetryLog("JetStream not ready; retrying", logger: logger, policy: .backoff)
    return try retry.run(
        stop: stop, recovered: "JetStream ready for \(what)",
        retryable: { error in
            guard let error = error as? NATSError else { return false }
            return error.code != .connectionFailed && error.code != .authorization
        }, body)
}

/// Reads and checks a topology file (errors by JSON path).
public func loadTopologyFile(_ path: String) throws(ConfigErrors) -> Topology {
    try Topology.parse(try ConfigFile.read(path), file: path)
}
