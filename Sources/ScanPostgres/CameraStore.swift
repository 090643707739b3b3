import ScanEvents

/// What the fleet's cameras last said: `scanadmin cameras` (and the dashboard) read it here.
public struct CameraStore {
    public let connection: PGConnection

    public init(connection: PGConnection) { self.connection = connection }

    /// One camera known from the topology or from its heartbeats.
    public struct Camera: Sendable, Equatable {
        public var camera: String
        public var site: String
        public var lane: String
        public var station: String
        /// The last heartbeat: when, how long ago, and what it said (nil: never heard).
        public var lastSeen: String?
        public var secondsAgo: Int?
        public var fps: String?
        public var framesDropped: String?
        public var liveTracks: String?
        public var spoolDepth: String?
        public var nats: String?
        public var rulesRevision: String?
        public var sourceState: String?
        /// The last heartbeat said the source ended (a clip played to its end, the agent
        /// stopped): a camera not heard since has ended, it is not silent.
        public var saidItEnded: Bool { sourceState == SourceStatus.ended.rawValue }
        /// The agent said it was paused (`scanadmin agent pause`).
        public var paused = false
        /// A camera's incomplete frames and reconnects since the agent started, and the controls
        /// it took (`Name=value …`), from the last heartbeat.
        public var incompleteFrames: String?
        public var reconnects: String?
        public var controls: String?
    }

    /// Every known camera of `site` (all sites when nil), by site and camera.
    public func cameras(site: String?) throws(PGError) -> [Camera] {
        var cameras: [Camera] = []
        for row in try connection.query(
            """
            WITH known AS (
                SELECT camera, site FROM cameras
                UNION SELECT camera, site FROM lane_cameras
                UNION SELECT unnest(cameras), site FROM stations
            )
            SELECT k.camera, k.site, coalesce(c.lane, l.lane, '') AS lane, coalesce(c.station, s.station, '') AS station,
                   to_char(c.last_seen AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS last_seen,
                   extract(epoch FROM now() - c.last_seen)::bigint AS seconds_ago,
                   c.last_status->>'fpsProcessed' AS fps, c.last_status->>'framesDropped' AS frames_dropped,
                   c.last_status->>'liveTracks' AS live_tracks, c.last_status->'spool'->>'depth' AS spool_depth,
                   c.last_status->>'nats' AS nats, c.last_status->'rules'->>'revision' AS rules_revision,
                   c.last_status->'source'->>'state' AS source_state,
                   coalesce(c.last_status->>'paused', 'false') = 'true' AS paused,
                   c.last_status->'source'->>'incompleteFrames' AS incomplete_frames,
                   c.last_status->'source'->>'reconnects' AS reconnects,
                   (SELECT string_agg(key || '=' || value, ' ' ORDER BY key)
                    FROM jsonb_each_text(CASE WHEN jsonb_typeof(c.last_status->'source'->'controls') = 'object'
                                              THEN c.last_status->'source'->'controls' END)) AS controls
            FROM (SELECT DISTINCT ON (camera) camera, site FROM known ORDER BY camera, site) k
            LEFT JOIN cameras c ON c.camera = k.camera
            LEFT JOIN lane_cameras l ON l.camera = k.camera AND l.site = k.site
            LEFT JOIN LATERAL (SELECT station FROM stations WHERE site = k.site AND k.camera = ANY(cameras) LIMIT 1) s ON true
            WHERE ($1::text IS NULL OR k.site = $1)
            ORDER BY k.site, k.camera
            """, [.optionalText(site)]
        ).named("cameras") {
            cameras.append(
                Camera(
                    camera: try row.text("camera"), site: try row.text("site"), lane: try row.text("lane"),
                    station: try row.text("station"), lastSeen: try row.optionalText("last_seen"),
                    secondsAgo: try row.optionalInt("seconds_ago"), fps: try row.optionalText("fps"),
                    framesDropped: try row.optionalText("frames_dropped"),
                    liveTracks: try row.optionalText("live_tracks"),
                    spoolDepth: try row.optionalText("spool_depth"), nats: try row.optionalText("nats"),
                    rulesRevision: try row.optionalText("rules_revision"),
                    sourceState: try row.optionalText("source_state"), paused: try row.bool("paused"),
                    incompleteFrames: try row.optionalText("incomplete_frames"),
                    reconnects: try row.optionalText("reconnects"), controls: try row.optionalText("controls")))
        }
        return cameras
    }
}
