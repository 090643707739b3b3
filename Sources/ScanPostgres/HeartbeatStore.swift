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
        // One statement (so one transaction), the rows one bound jsonb array read by both inserts
        // (program roles may not create temporary tables).
        _ = try connection.query(
            """
            WITH stage AS (SELECT * FROM jsonb_populate_recordset(NULL::heartbeats, $1::jsonb)),
            stored AS (
                INSERT INTO heartbeats SELECT DISTINCT ON (site, camera, event_id, time) * FROM stage
                ON CONFLICT (site, camera, event_id, time) DO NOTHING)
            INSERT INTO cameras (camera, site, lane, station, last_status, last_seen)
            SELECT DISTINCT ON (camera) camera, site, body->>'lane', body->>'station', body, time
            FROM stage ORDER BY camera, time DESC
            ON CONFLICT (camera) DO UPDATE SET site = EXCLUDED.site, lane = EXCLUDED.lane, station = EXCLUDED.station,
                last_status = EXCLUDED.last_status, last_seen = EXCLUDED.last_seen
            WHERE cameras.last_seen IS NULL OR cameras.last_seen <= EXCLUDED.last_seen
            """, [.text(EventStore.jsonRows(columns: Self.columns, rows: rows))])
    }
}
