import Foundation
import Logging
import ScanAggregatorRuntime
import ScanCore
import ScanNATS
import ScanPostgres
import ScanEvents

/// Listens to agent heartbeats (`<prefix>.v1.status.>`, core NATS) and stores them once a second:
/// every heartbeat in `heartbeats`, the latest per camera in `cameras`, at most one a camera every
/// 0.25 s (`HeartbeatThrottle`: a camera flooding its status subject is held back, counted). Best
/// effort like the heartbeats themselves: what arrives while PostgreSQL is down is dropped (and
/// counted).
public final class HeartbeatRecorder: @unchecked Sendable {
    // @unchecked: used by the one thread that runs it.
    private let subscription: NATSSubscription
    private let connection: NATSConnection
    private let database: PGReconnecting
    private let logger: Logger
    private let subjects: ContractSubjects
    public private(set) var stored = 0
    public private(set) var dropped = 0
    private var throttle = HeartbeatThrottle()
    private var throttledLogged = 0
    private let origin = ContinuousClock.now
    /// Heartbeats held back by the throttle.
    public var throttled: Int { throttle.throttled }

    public init(settings: IngestSettings, logger: Logger) throws {
        var options = NATSConnection.Options(security: settings.natsSecurity)
        options.name = "scan-aggregator heartbeats"
        connection = try NATSConnection(url: settings.natsURL, options: options)
        subscription = try connection.subscribe(subject: "\(settings.prefix).v1.status.>")
        database = PGReconnecting(dsn: settings.postgresDSN, passwordFile: settings.postgresPasswordFile)
        subjects = ContractSubjects(prefix: settings.prefix)
        self.logger = logger
    }

    /// Collects for up to `seconds`, then stores what came. Returns heartbeats stored.
    @discardableResult
    public func runOnce(seconds: Double = 1) -> Int {
        let deadline = Date(timeIntervalSinceNow: seconds)
        var rows: [[String?]] = []
        while Date() < deadline {
            guard let message = try? subscription.next(timeoutMilliseconds: 100) else { continue }
            guard let row = Self.row(message.bytes, subject: message.subject, subjects: subjects) else { continue }
            if throttle.admit(site: row[1] ?? "", camera: row[2] ?? "", at: ContinuousClock.now - origin) {
                rows.append(row)
            }
        }
        if throttle.throttled >= throttledLogged + 1_000 {
            throttledLogged = throttle.throttled
            logger.warning(
                "heartbeats held back: a camera sends more than one every 0.25 s",
                metadata: ["throttled": .stringConvertible(throttle.throttled)])
        }
        guard !rows.isEmpty else { return 0 }
        do {
            try HeartbeatStore(connection: try database.connection()).store(rows)
            stored += rows.count
            return rows.count
        } catch {
            database.reset()
            dropped += rows.count
            logger.warning(
                "heartbeats not stored", metadata: ["error": "\(error)", "count": .stringConvertible(rows.count)])
            return 0
        }
    }

    /// A heartbeat as a `heartbeats` row, or nil when it is not a valid status event of the site
    /// and camera its subject names.
    static func row(_ bytes: [UInt8], subject: String, subjects: ContractSubjects) -> [String?]? {
        guard !IngestLoop.holdsEscapedNUL(bytes), let event = try? EventValidator.parse(bytes),
            let heartbeat = try? StatusEvent.parse(event),
            (try? EventValidator.checkSender(
                site: heartbeat.site, camera: heartbeat.camera, subject: subject, family: .status, subjects: subjects))
                != nil
        else { return nil }
        let status = heartbeat.status
        return [
            heartbeat.eventId, heartbeat.site, heartbeat.camera, status.runId, heartbeat.time.description,
            String(status.fpsIn), String(status.fpsProcessed), String(status.framesDropped), String(status.liveTracks),
            String(status.spoolDepth), status.nats, status.rulesRevision, String(decoding: bytes, as: UTF8.self),
        ]
    }
}
