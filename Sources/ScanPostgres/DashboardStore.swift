import ScanCore

/// What the supervisor dashboard (`scanadmin serve`) shows beyond the report's figures: recent
/// pack records, one pack's lines, a camera's last heartbeats. Read-only queries.
public struct DashboardStore {
    public let connection: PGConnection

    public init(connection: PGConnection) { self.connection = connection }

    /// One pack record.
    public struct Pack: Sendable, Equatable {
        public var sessionId: String
        public var site: String
        public var station: String
        public var camera: String
        public var orderId: String?
        public var verdict: PackVerdict
        public var completedAt: String
        public var items: Int
    }

    /// The packs completed in the period (and site), newest first, at most `limit`.
    public func packs(_ scope: ReportStore.Scope, limit: Int) throws(PGError) -> [Pack] {
        try connection.query(
            """
            SELECT \(Self.packColumns) FROM pack_records
            WHERE completed_at >= $1::timestamptz AND completed_at < $2::timestamptz AND ($3::text IS NULL OR site = $3)
            ORDER BY pack_records.completed_at DESC, session_id LIMIT \(max(0, limit))
            """, [.text(scope.start.description), .text(scope.end.description), .optionalText(scope.site)]
        ).named("recent packs").map(Self.pack)
    }

    /// One pack record by its session id, with its counted lines (nil: no such pack).
    public func pack(sessionId: String) throws(PGError) -> (pack: Pack, lines: [SiteStore.PackedLine])? {
        guard
            let row = try connection.query(
                """
                SELECT \(Self.packColumns) FROM pack_records WHERE session_id = $1
                """, [.text(sessionId)]
            ).named("pack").first
        else { return nil }
        let pack = try Self.pack(row)
        var lines: [SiteStore.PackedLine] = []
        for line in try connection.query(
            "\(SiteStore.PackedLine.selectSQL) WHERE r.session_id = $1 ORDER BY l.position", [.text(sessionId)]
        ).named("pack lines") {
            lines.append(try SiteStore.PackedLine(line))
        }
        return (pack, lines)
    }

    /// What `pack(_:)` reads of a `pack_records` row.
    private static let packColumns = """
        session_id, site, station, camera, order_id, verdict,
        to_char(completed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS completed_at, items
        """

    private static func pack(_ row: PGRow) throws(PGError) -> Pack {
        Pack(
            sessionId: try row.text("session_id"), site: try row.text("site"), station: try row.text("station"),
            camera: try row.text("camera"), orderId: try row.optionalText("order_id"),
            verdict: try row.value("verdict", as: PackVerdict.self),
            completedAt: try row.text("completed_at"), items: try row.int("items"))
    }

    /// One stored heartbeat.
    public struct Heartbeat: Sendable, Equatable {
        public var time: String
        public var runId: String
        public var fpsIn: String?
        public var fpsProcessed: String?
        public var framesDropped: Int?
        public var liveTracks: Int?
        public var spoolDepth: Int?
        public var nats: String?
        public var paused: Bool
        public var sourceState: String?
    }

    /// The last `limit` heartbeats of a camera, newest first.
    public func heartbeats(camera: String, limit: Int) throws(PGError) -> [Heartbeat] {
        var beats: [Heartbeat] = []
        for row in try connection.query(
            """
            SELECT \(SQLText.utc("time")) AS time, run_id,
                   round(fps_in::numeric, 1)::text AS fps_in, round(fps_processed::numeric, 1)::text AS fps_processed,
                   frames_dropped, live_tracks, spool_depth, nats,
                   coalesce(body->>'paused', 'false') = 'true' AS paused, body->'source'->>'state' AS source_state
            FROM heartbeats WHERE camera = $1 ORDER BY heartbeats.time DESC LIMIT \(max(0, limit))
            """, [.text(camera)]
        ).named("heartbeats") {
            beats.append(
                Heartbeat(
                    time: try row.text("time"), runId: try row.text("run_id"), fpsIn: try row.optionalText("fps_in"),
                    fpsProcessed: try row.optionalText("fps_processed"),
                    framesDropped: try row.optionalInt("frames_dropped"),
                    liveTracks: try row.optionalInt("live_tracks"),
                    spoolDepth: try row.optionalInt("spool_depth"), nats: try row.optionalText("nats"),
                    paused: try row.bool("paused"), sourceState: try row.optionalText("source_state")))
        }
        return beats
    }
}
