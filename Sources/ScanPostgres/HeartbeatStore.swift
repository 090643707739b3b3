/// Agent heartbeats: every one in `heartbeats`, the latest per camera in `cameras`.
public struct HeartbeatStore {
    public let connection: PGConnection

    public init(connection: PGConnection) { self.connection = connection }

    /// The `heartbeats` columns a row gives, in order.
    public static let columns = [
        "event_id", "site", "camera", "run_id", "time", "fps_in", "fps_processed", "frames_dropped", "live_tracks",
        "spool_depth", "nats", "rules_revision", "body",
    ]

    /// Stores a batch of heartbeat rows (values in `columns` order) in one transaction: a
    /// heartbeat stored already is skipped, and each camera's row keeps its latest heartbeat.
    public func store(_ rows: [[String?]]) throws(PGError) {
        try connection.transaction { () throws(PGError) in
            try connection.execute(
                "CREATE TEMP TABLE IF NOT EXISTS heartbeats_stage (LIKE heartbeats) ON COMMIT DELETE ROWS")
            try connection.copyIn(
                "COPY heartbeats_stage (\(Self.columns.joined(separator: ", "))) FROM STDIN", rows: rows)
            try connection.execute(
                """
                INSERT INTO heartbeats SELECT DISTINCT ON (event_id, time) * FROM heartbeats_stage ON CONFLICT (event_id, time) DO NOTHING;
                INSERT INTO cameras (camera, site, lane, station, last_status, last_seen)
                SELECT DISTINCT ON (camera) camera, site, body->>'lane', body->>'station', body, time
                FROM heartbeats_stage ORDER BY camera, time DESC
                ON CONFLICT (camera) DO UPDATE SET site = EXCLUDED.site, lane = EXCLUDED.lane, station = EXCLUDED.station,
                    last_status = EXCLUDED.last_status, last_seen = EXCLUDED.last_seen
                WHERE cameras.last_seen IS NULL OR cameras.last_seen <= EXCLUDED.last_seen
                """)
        }
    }
}
