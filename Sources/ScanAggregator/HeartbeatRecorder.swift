import Foundation
import Logging
import ScanCore
import ScanNATS
import ScanPostgres

/// Listens to agent heartbeats (`<prefix>.v1.status.>`, core NATS) and stores them once a second:
/// every heartbeat in `heartbeats`, the latest per camera in `cameras`. Best effort like the
/// heartbeats themselves: what arrives while PostgreSQL is down is dropped (and counted).
public final class HeartbeatRecorder: @unchecked Sendable {
    // @unchecked: used by the one thread that runs it.
    private let subscription: NATSSubscription
    private let connection: NATSConnection
    private let database: PGReconnecting
    private let logger: Logger
    public private(set) var stored = 0
    public private(set) var dropped = 0

    public init(settings: IngestSettings, logger: Logger) throws {
        var options = NATSConnection.Options()
        options.name = "scan-aggregator heartbeats"
        connection = try NATSConnection(url: settings.natsURL, options: options)
        subscription = try connection.subscribe(subject: "\(settings.prefix).v1.status.>")
        database = PGReconnecting(dsn: settings.postgresDSN)
        self.logger = logger
    }

    /// Collects for up to `seconds`, then stores what came. Returns heartbeats stored.
    @discardableResult
    public func runOnce(seconds: Double = 1) -> Int {
        let deadline = Date(timeIntervalSinceNow: seconds)
        var rows: [[String?]] = []
        while Date() < deadline {
            guard let message = try? subscription.next(timeoutMilliseconds: 100) else { continue }
            if let row = Self.row(message.bytes) { rows.append(row) }
        }
        guard !rows.isEmpty else { return 0 }
        do {
            let db = try database.connection()
            try db.transaction { () throws(PGError) in
                try db.execute(
                    "CREATE TEMP TABLE IF NOT EXISTS heartbeats_stage (LIKE heartbeats) ON COMMIT DELETE ROWS")
                try db.copyIn(
                    "COPY heartbeats_stage (event_id, site, camera, run_id, time, fps_in, fps_processed, frames_dropped, live_tracks, spool_depth, nats, rules_revision, body) FROM STDIN",
                    rows: rows)
                try db.execute(
                    """
                    INSERT INTO heartbeats SELECT DISTINCT ON (event_id) * FROM heartbeats_stage ON CONFLICT (event_id) DO NOTHING;
                    INSERT INTO cameras (camera, site, lane, station, last_status, last_seen)
                    SELECT DISTINCT ON (camera) camera, site, body->>'lane', body->>'station', body, time
                    FROM heartbeats_stage ORDER BY camera, time DESC
                    ON CONFLICT (camera) DO UPDATE SET site = EXCLUDED.site, lane = EXCLUDED.lane, station = EXCLUDED.station,
                        last_status = EXCLUDED.last_status, last_seen = EXCLUDED.last_seen
                    WHERE cameras.last_seen IS NULL OR cameras.last_seen <= EXCLUDED.last_seen
                    """)
            }
            stored += rows.count
            return rows.count
        } catch {
            database.reset()
            dropped += rows.count
            logger.warning("heartbeats not stored", metadata: ["error": "\(error)", "count": "\(rows.count)"])
            return 0
        }
    }

    /// A heartbeat as a `heartbeats` row, or nil when it is not a usable status event.
    static func row(_ bytes: [UInt8]) -> [String?]? {
        guard bytes.count <= EventValidator.maxBytes, !Ingestor.holdsEscapedNUL(bytes),
            let event = try? JSONValue.parse(bytes),
            event["type"] == .string("status"), let eventId = event["eventId"]?.stringValue,
            let site = event["site"]?.stringValue,
            let camera = event["camera"]?.stringValue, let time = event["time"]?.stringValue,
            Timestamp(rfc3339: time) != nil
        else { return nil }
        func number(_ value: JSONValue?) -> String? { value?.doubleValue.map { String($0) } }
        func whole(_ value: JSONValue?) -> String? { value?.intValue.map { String($0) } }
        return [
            eventId, site, camera, event["runId"]?.stringValue ?? "", time, number(event["fpsIn"]),
            number(event["fpsProcessed"]),
            whole(event["framesDropped"]), whole(event["liveTracks"]), whole(event["spool"]?["depth"]),
            event["nats"]?.stringValue,
            event["rules"]?["revision"]?.stringValue, String(decoding: bytes, as: UTF8.self),
        ]
    }
}
