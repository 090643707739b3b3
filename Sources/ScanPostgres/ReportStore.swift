import ScanCore

/// The queries behind `scanadmin report` (and anything that must show the same figures): one
/// period, optionally narrowed to a site, a lane or a camera. Rows are read by column name.
public struct ReportStore {
    public let connection: PGConnection

    public init(connection: PGConnection) { self.connection = connection }

    /// What a report covers.
    public struct Scope: Sendable {
        public var start: Timestamp
        public var end: Timestamp
        public var site: String?
        public var lane: String?
        public var camera: String?
        /// IANA zone of the hourly buckets.
        public var timeZone: String

        public init(start: Timestamp, end: Timestamp, site: String?, lane: String?, camera: String?, timeZone: String) {
            self.start = start
            self.end = end
            self.site = site
            self.lane = lane
            self.camera = camera
            self.timeZone = timeZone
        }

        /// $1 start, $2 end, $3 site, $4 lane, $5 camera.
        var parameters: [PGValue] {
            [
                .text(start.description), .text(end.description), .optionalText(site), .optionalText(lane),
                .optionalText(camera),
            ]
        }
    }

    /// The figures of one period.
    public struct Figures: Sendable, Equatable {
        public var itemPasses = 0
        public var partialPasses = 0
        public var sightings = 0
        public var accepted = 0
        public var rejected = 0
        public var uniqueCodes = 0
        /// Labels seen but not decoded.
        public var noReads = 0
        /// Pack records by verdict (`complete`, `short`, …).
        public var packs: [String: Int] = [:]
        public var topRules: [Count] = []
        public var cameras: [CameraCounts] = []
        /// Decoded and not decoded per lane (a camera's lane: the event's, else the topology's).
        public var lanes: [LaneCounts] = []
        public var hourly: [Hour] = []
        public var health: [CameraHealth] = []

        public struct Count: Sendable, Equatable {
            public var name: String
            public var count: Int
        }
        public struct CameraCounts: Sendable, Equatable {
            public var camera: String
            public var sightings: Int
            public var accepted: Int
            public var rejected: Int
            public var noReads: Int
        }
        public struct LaneCounts: Sendable, Equatable {
            public var site: String
            public var lane: String
            public var sightings: Int
            public var noReads: Int
            public var rejected = 0
            public var itemPasses = 0

            public init(site: String, lane: String, sightings: Int, noReads: Int) {
                self.site = site
                self.lane = lane
                self.sightings = sightings
                self.noReads = noReads
            }
        }
        public struct Hour: Sendable, Equatable {
            public var hour: String
            /// Accepted sightings.
            public var sightings: Int
            public var itemPasses: Int
            /// Every sighting (accepted or rejected) and every no-read: the hour's read rate.
            public var decoded = 0
            public var noReads = 0
        }
        public struct CameraHealth: Sendable, Equatable {
            public var camera: String
            public var heartbeats: Int
            public var maxGapSeconds: Int
            public var framesDropped: Int
        }
    }

    /// Sightings in the period and the filters.
    static let sightingScope = """
        first_seen >= $1::timestamptz AND first_seen < $2::timestamptz AND ($3::text IS NULL OR site = $3)
        AND ($4::text IS NULL OR lane = $4 OR camera IN (SELECT camera FROM lane_cameras WHERE lane = $4 AND ($3::text IS NULL OR site = $3)))
        AND ($5::text IS NULL OR camera = $5)
        """

    /// The lane of a sightings or noreads row `t`: its own, else its camera's in the topology.
    static let resolvedLane = """
        coalesce(t.lane, (SELECT lc.lane FROM lane_cameras lc
                          WHERE lc.site = t.site AND lc.camera = t.camera ORDER BY lc.lane LIMIT 1))
        """

    /// Item passes in the period and the filters.
    static let passScope = """
        p.first_seen >= $1::timestamptz AND p.first_seen < $2::timestamptz AND ($3::text IS NULL OR p.site = $3)
        AND ($4::text IS NULL OR p.lane = $4)
        AND ($5::text IS NULL OR EXISTS (SELECT 1 FROM item_sightings s WHERE s.item_id = p.item_id AND s.camera = $5))
        """

    public func figures(_ scope: Scope) throws(PGError) -> Figures {
        var figures = Figures()
        let parameters = scope.parameters
        if let totals = try connection.query(
            """
            SELECT count(*) AS sightings, count(*) FILTER (WHERE status = 'accepted') AS accepted,
                   count(*) FILTER (WHERE status = 'rejected') AS rejected,
                   count(DISTINCT value) FILTER (WHERE status = 'accepted') AS unique_codes
            FROM sightings WHERE \(Self.sightingScope)
            """, parameters
        ).named("report totals").first {
            figures.sightings = try totals.int("sightings")
            figures.accepted = try totals.int("accepted")
            figures.rejected = try totals.int("rejected")
            figures.uniqueCodes = try totals.int("unique_codes")
        }
        for row in try connection.query(
            """
            SELECT coalesce(rule_id, '(none)') AS rule, count(*) AS n FROM sightings
            WHERE status = 'rejected' AND \(Self.sightingScope) GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5
            """, parameters
        ).named("report rules") {
            figures.topRules.append(Figures.Count(name: try row.text("rule"), count: try row.int("n")))
        }
        for row in try connection.query(
            """
            SELECT camera, count(*) AS sightings, count(*) FILTER (WHERE status = 'accepted') AS accepted,
                   count(*) FILTER (WHERE status = 'rejected') AS rejected
            FROM sightings WHERE \(Self.sightingScope) GROUP BY camera ORDER BY camera
            """, parameters
        ).named("report cameras") {
            figures.cameras.append(
                Figures.CameraCounts(
                    camera: try row.text("camera"), sightings: try row.int("sightings"),
                    accepted: try row.int("accepted"),
                    rejected: try row.int("rejected"), noReads: 0))
        }
        for row in try connection.query(
            "SELECT camera, count(*) AS n FROM noreads WHERE \(Self.sightingScope) GROUP BY camera ORDER BY camera",
            parameters
        ).named("report no-reads by camera") {
            let camera = try row.text("camera")
            let count = try row.int("n")
            figures.noReads += count
            if let index = figures.cameras.firstIndex(where: { $0.camera == camera }) {
                figures.cameras[index].noReads = count
            } else {
                figures.cameras.append(
                    Figures.CameraCounts(camera: camera, sightings: 0, accepted: 0, rejected: 0, noReads: count))
            }
        }
        figures.cameras.sort { $0.camera < $1.camera }
        // Per lane: a sighting's or no-read's lane is the event's, else its camera's in the
        // topology; an item pass belongs to its lane.
        var lanes: [String: Figures.LaneCounts] = [:]
        for (table, noRead) in [("sightings", false), ("noreads", true)] {
            let rejected = noRead ? "0" : "count(*) FILTER (WHERE status = 'rejected')"
            for row in try connection.query(
                """
                SELECT site, \(Self.resolvedLane) AS lane, count(*) AS n, \(rejected) AS rejected
                FROM \(table) t WHERE \(Self.sightingScope) GROUP BY 1, 2
                """, parameters
            ).named("report \(table) by lane") {
                guard let lane = try row.optionalText("lane") else { continue }
                let site = try row.text("site")
                let count = try row.int("n")
                var counts =
                    lanes[site + "\u{0}" + lane] ?? Figures.LaneCounts(site: site, lane: lane, sightings: 0, noReads: 0)
                if noRead { counts.noReads += count } else { counts.sightings += count }
                counts.rejected += try row.int("rejected")
                lanes[site + "\u{0}" + lane] = counts
            }
        }
        for row in try connection.query(
            "SELECT p.site, p.lane, count(*) AS n FROM item_passes p WHERE \(Self.passScope) GROUP BY 1, 2", parameters
        ).named("report passes by lane") {
            let site = try row.text("site")
            let lane = try row.text("lane")
            lanes[site + "\u{0}" + lane, default: Figures.LaneCounts(site: site, lane: lane, sightings: 0, noReads: 0)]
                .itemPasses = try row.int("n")
        }
        figures.lanes = lanes.values.sorted { ($0.site, $0.lane) < ($1.site, $1.lane) }
        if let passes = try connection.query(
            """
            SELECT count(*) AS passes, count(*) FILTER (WHERE p.cameras_seen < p.cameras_expected) AS partial
            FROM item_passes p WHERE \(Self.passScope)
            """, parameters
        ).named("report passes").first {
            figures.itemPasses = try passes.int("passes")
            figures.partialPasses = try passes.int("partial")
        }
        for row in try connection.query(
            """
            SELECT verdict, count(*) AS n FROM pack_records
            WHERE completed_at >= $1::timestamptz AND completed_at < $2::timestamptz
              AND ($3::text IS NULL OR site = $3) AND ($4::text IS NULL OR true)  -- packs are not on a lane
              AND ($5::text IS NULL OR camera = $5) GROUP BY verdict
            """, parameters
        ).named("report packs") {
            figures.packs[try row.text("verdict")] = try row.int("n")
        }

        figures.hourly = try hourly(scope)

        // Camera health: heartbeats heard in the period, the longest silence between two of them,
        // and frames dropped (per agent run: the counter starts again with each run).
        for row in try connection.query(
            """
            WITH beats AS (
                SELECT camera, run_id, time, frames_dropped,
                       lag(time) OVER (PARTITION BY camera ORDER BY time) AS previous
                FROM heartbeats
                WHERE time >= $1::timestamptz AND time < $2::timestamptz AND ($3::text IS NULL OR site = $3)
                  AND ($5::text IS NULL OR camera = $5)
                  AND ($4::text IS NULL OR camera IN (SELECT camera FROM lane_cameras WHERE lane = $4))
            ), runs AS (
                SELECT camera, max(frames_dropped) - min(frames_dropped) AS dropped FROM beats GROUP BY camera, run_id
            )
            SELECT b.camera, count(*) AS heartbeats,
                   coalesce(max(extract(epoch FROM b.time - b.previous)), 0)::bigint AS max_gap,
                   (SELECT coalesce(sum(dropped), 0) FROM runs r WHERE r.camera = b.camera) AS dropped
            FROM beats b GROUP BY b.camera ORDER BY b.camera
            """, parameters
        ).named("report camera health") {
            figures.health.append(
                Figures.CameraHealth(
                    camera: try row.text("camera"), heartbeats: try row.int("heartbeats"),
                    maxGapSeconds: max(0, try row.int("max_gap")), framesDropped: try row.int("dropped")))
        }
        return figures
    }

    /// The period's figures an hour (in the scope's zone): accepted and all sightings, no-reads
    /// and item passes, for hours with any of them.
    public func hourly(_ scope: Scope) throws(PGError) -> [Figures.Hour] {
        try hours(scope, byLane: false)[""] ?? []
    }

    /// `hourly` for every lane of the scope at once (lanes resolved as the report's lane table
    /// resolves them), keyed by lane: the dashboard's trend charts.
    public func hourlyByLane(_ scope: Scope) throws(PGError) -> [String: [Figures.Hour]] {
        try hours(scope, byLane: true)
    }

    /// The hourly figures keyed by lane (`byLane`), or all under "" (rows without a lane are then
    /// left out of the lanes, as in the report's lane table).
    private func hours(_ scope: Scope, byLane: Bool) throws(PGError) -> [String: [Figures.Hour]] {
        let parameters = scope.parameters + [.text(scope.timeZone)]
        var lanes: [String: [String: Figures.Hour]] = [:]
        func add(_ row: PGRow, _ update: (inout Figures.Hour) throws(PGError) -> Void) throws(PGError) {
            guard let lane = byLane ? try row.optionalText("lane") : "" else { return }
            let hour = try row.text("hour")
            var figures = lanes[lane]?[hour] ?? Figures.Hour(hour: hour, sightings: 0, itemPasses: 0)
            try update(&figures)
            lanes[lane, default: [:]][hour] = figures
        }
        let eventLane = byLane ? Self.resolvedLane : "NULL::text"
        let passLane = byLane ? "p.lane" : "NULL::text"
        func hour(_ table: String) -> String {
            "to_char(date_trunc('hour', \(table).first_seen AT TIME ZONE $6), 'YYYY-MM-DD HH24:00')"
        }
        for row in try connection.query(
            """
            SELECT \(eventLane) AS lane, \(hour("t")) AS hour,
                   count(*) FILTER (WHERE status = 'accepted') AS n, count(*) AS decoded
            FROM sightings t WHERE \(Self.sightingScope) GROUP BY 1, 2
            """, parameters
        ).named("report hourly sightings") {
            try add(row) { (figures: inout Figures.Hour) throws(PGError) in
                figures.sightings = try row.int("n")
                figures.decoded = try row.int("decoded")
            }
        }
        for row in try connection.query(
            """
            SELECT \(eventLane) AS lane, \(hour("t")) AS hour, count(*) AS n
            FROM noreads t WHERE \(Self.sightingScope) GROUP BY 1, 2
            """, parameters
        ).named("report hourly no-reads") {
            try add(row) { (figures: inout Figures.Hour) throws(PGError) in figures.noReads = try row.int("n") }
        }
        for row in try connection.query(
            """
            SELECT \(passLane) AS lane, \(hour("p")) AS hour, count(*) AS n
            FROM item_passes p WHERE \(Self.passScope) GROUP BY 1, 2
            """, parameters
        ).named("report hourly passes") {
            try add(row) { (figures: inout Figures.Hour) throws(PGError) in figures.itemPasses = try row.int("n") }
        }
        return lanes.mapValues { $0.values.sorted { $0.hour < $1.hour } }
    }

    /// Each site's time zone.
    public func siteTimeZones() throws(PGError) -> [(site: String, timeZone: String)] {
        var zones: [(site: String, timeZone: String)] = []
        for row in try connection.query("SELECT site, time_zone FROM sites ORDER BY site").named("site time zones") {
            zones.append((try row.text("site"), try row.text("time_zone")))
        }
        return zones
    }
}

extension ReportStore.Figures {
    /// Decoded ÷ (decoded + not decoded); nil when nothing was seen.
    public static func readRate(decoded: Int, noReads: Int) -> Double? {
        decoded + noReads == 0 ? nil : Double(decoded) / Double(decoded + noReads)
    }
}
