import ScanCore
import ScanEvents

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
        /// False: every figure is summed from the stored rows, none from the rollups (slower; the
        /// same figures when the rollups are right: tests and checks compare the two).
        public var useRollups = true
        /// Whether unique codes are counted (a distinct count over the stored rows: it cannot be
        /// summed from rollups); nil: when the period is at most `uniqueCodesMaxDays` days.
        public var countUniqueCodes: Bool?

        public static let uniqueCodesMaxDays = 2

        var countsUniqueCodes: Bool {
            countUniqueCodes ?? (end.milliseconds - start.milliseconds <= Int64(Self.uniqueCodesMaxDays) * 86_400_000)
        }

        public init(start: Timestamp, end: Timestamp, site: String?, lane: String?, camera: String?, timeZone: String) {
            self.start = start
            self.end = end
            self.site = site
            self.lane = lane
            self.camera = camera
            self.timeZone = timeZone
        }

        /// The whole quarter hours inside the period (read from the rollups), as (start, end);
        /// the rest at both ends is read from the rows. (end, end) when there is none.
        var quarterHours: (start: Timestamp, end: Timestamp) {
            let quarter: Int64 = 900_000
            func floor(_ ms: Int64) -> Int64 { ms - ((ms % quarter) + quarter) % quarter }
            let first = floor(start.milliseconds + quarter - 1)
            let last = floor(end.milliseconds)
            return useRollups && first < last
                ? (Timestamp(milliseconds: first), Timestamp(milliseconds: last)) : (end, end)
        }

        /// $1 start, $2 end, $3 site, $4 lane, $5 camera: `sightingScope`.
        var rowParameters: [PGValue] {
            [
                .text(start.description), .text(end.description), .optionalText(site), .optionalText(lane),
                .optionalText(camera),
            ]
        }

        /// `rowParameters`, then $6 and $7 the whole quarter hours inside.
        var parameters: [PGValue] {
            let middle = quarterHours
            return rowParameters + [.text(middle.start.description), .text(middle.end.description)]
        }
    }

    /// The figures of one period.
    public struct Figures: Sendable, Equatable {
        public var itemPasses = 0
        public var partialPasses = 0
        public var sightings = 0
        public var accepted = 0
        public var rejected = 0
        /// Distinct accepted values; nil when not counted (`Scope.countUniqueCodes`).
        public var uniqueCodes: Int?
        /// Labels seen but not decoded.
        public var noReads = 0
        /// No-reads by camera and reason (`too-small`, `blurred`, …; `unknown` from agents
        /// older than the field), each camera's commonest first.
        public var noReadReasons: [NoReadReasonCount] = []
        /// No-reads of the period a person resolved (`scanadmin noreads resolve`), by camera.
        public var codings: [CodingCounts] = []
        /// Pack records by verdict (`complete`, `short`, …).
        public var packs: [String: Int] = [:]
        public var topRules: [Count] = []
        public var cameras: [CameraCounts] = []
        /// Decoded and not decoded per lane (a camera's lane: the event's, else the topology's).
        public var lanes: [LaneCounts] = []
        public var hourly: [Hour] = []
        public var health: [CameraHealth] = []
        /// Parcels (parcel passes: a lane's cameras' parcels merged), and the divert decisions made.
        public var parcels = ParcelCounts()
        public var decisions = DecisionCounts()

        public struct ParcelCounts: Sendable, Equatable {
            public init(parcels: Int = 0, complete: Int = 0, noRead: Int = 0, codes: Int = 0) {
                self.parcels = parcels
                self.complete = complete
                self.noRead = noRead
                self.codes = codes
            }
            public var parcels = 0
            /// A code read and no required code missing.
            public var complete = 0
            /// No code read.
            public var noRead = 0
            /// Codes in all of them.
            public var codes = 0
            /// Codes per parcel with a code read; nil when none.
            public var codesPerParcel: Double? {
                parcels > noRead ? Double(codes) / Double(parcels - noRead) : nil
            }
        }
        public struct DecisionCounts: Sendable, Equatable {
            public init() {}
            public var pass = 0
            public var divert = 0
            public var late = 0
            /// Decisions naming each reason (a decision may name several).
            public var reasons: [String: Int] = [:]
        }

        public struct Count: Sendable, Equatable {
            public var name: String
            public var count: Int
        }
        public struct NoReadReasonCount: Sendable, Equatable {
            public var camera: String
            public var reason: String
            public var count: Int
        }
        /// A camera's no-reads a person resolved: keyed (a code read by a person, not the camera),
        /// no label, not a parcel; and the median time from first seen to resolved.
        public struct CodingCounts: Sendable, Equatable {
            public var camera: String
            public var keyed: Int
            public var noLabel: Int
            public var notAParcel: Int
            public var medianSecondsToResolve: Int

            public var resolved: Int { keyed + noLabel + notAParcel }
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

    /// Sightings or no-reads (`t`) in the period and the filters; a row's lane is the event's,
    /// else its camera's in the topology (as in the rollups and the report's lane table).
    static let sightingScope = """
        t.first_seen >= $1::timestamptz AND t.first_seen < $2::timestamptz AND \(rowFilters)
        """

    /// The filters on a sightings or noreads row `t`. The lane test is `scantrack_lane(…) = $4`
    /// written so the planner can use it (a camera is on at most one lane of its site).
    static let rowFilters = """
        ($3::text IS NULL OR t.site = $3) AND ($5::text IS NULL OR t.camera = $5)
        AND ($4::text IS NULL OR t.lane = $4 OR (t.lane IS NULL AND EXISTS (
             SELECT 1 FROM lane_cameras lc WHERE lc.site = t.site AND lc.camera = t.camera AND lc.lane = $4)))
        """

    /// Rows of a time column at the ends of the period, outside its whole quarter hours.
    static func ends(_ column: String) -> String {
        """
        ((\(column) >= $1::timestamptz AND \(column) < $6::timestamptz)
         OR (\(column) >= $7::timestamptz AND \(column) < $2::timestamptz))
        """
    }

    /// Rollup rows in the whole quarter hours of the period.
    static let middle = "bucket >= $6::timestamptz AND bucket < $7::timestamptz"

    /// Sightings by status and rule, and no-reads (status `noread`), per site, camera and lane
    /// (`''`: none), with the time they count at: rollup rows for the whole quarter hours,
    /// stored rows at the ends.
    static let reads = """
        SELECT site, camera, lane, status, rule_id, bucket AS at, n FROM read_rollups
        WHERE \(middle) AND ($3::text IS NULL OR site = $3) AND ($4::text IS NULL OR lane = $4)
          AND ($5::text IS NULL OR camera = $5)
        UNION ALL
        SELECT site, camera, scantrack_lane(site, camera, lane), status, coalesce(rule_id, ''), first_seen, 1
        FROM sightings t WHERE \(ends("t.first_seen")) AND \(rowFilters)
        UNION ALL
        SELECT site, camera, scantrack_lane(site, camera, lane), 'noread', '', first_seen, 1
        FROM noreads t WHERE \(ends("t.first_seen")) AND \(rowFilters)
        """

    /// Item passes per site and lane with the time they count at, as `reads`. A camera filter
    /// (passes that camera saw) is not in the rollups: then every pass is read from the rows.
    static let passes = """
        SELECT site, lane, bucket AS at, passes, partial FROM pass_rollups
        WHERE $5::text IS NULL AND \(middle) AND ($3::text IS NULL OR site = $3) AND ($4::text IS NULL OR lane = $4)
        UNION ALL
        SELECT p.site, p.lane, p.first_seen, 1, (p.cameras_seen < p.cameras_expected)::int FROM item_passes p
        WHERE (\(ends("p.first_seen"))
               OR ($5::text IS NOT NULL AND p.first_seen >= $1::timestamptz AND p.first_seen < $2::timestamptz))
          AND ($3::text IS NULL OR p.site = $3) AND ($4::text IS NULL OR p.lane = $4)
          AND ($5::text IS NULL OR EXISTS (SELECT 1 FROM item_sightings s WHERE s.item_id = p.item_id AND s.camera = $5))
        """

    public func figures(_ scope: Scope) throws(PGError) -> Figures {
        var figures = Figures()
        let parameters = scope.parameters
        var rules: [String: Int] = [:]
        var cameras: [String: Figures.CameraCounts] = [:]
        var lanes: [String: Figures.LaneCounts] = [:]
        func lane(_ site: String, _ lane: String) -> String { site + "\u{0}" + lane }
        for row in try connection.query(
            "SELECT site, camera, lane, status, rule_id, sum(n)::bigint AS n FROM (\(Self.reads)) r GROUP BY 1, 2, 3, 4, 5",
            parameters
        ).named("report reads") {
            let (site, camera, laneName) = (try row.text("site"), try row.text("camera"), try row.text("lane"))
            let (status, count) = (try row.text("status"), try row.int("n"))
            var counts =
                cameras[camera]
                ?? Figures.CameraCounts(camera: camera, sightings: 0, accepted: 0, rejected: 0, noReads: 0)
            var laneCounts: Figures.LaneCounts? =
                laneName.isEmpty
                ? nil
                : lanes[lane(site, laneName)]
                    ?? Figures.LaneCounts(site: site, lane: laneName, sightings: 0, noReads: 0)
            switch status {
            case "noread":
                figures.noReads += count
                counts.noReads += count
                laneCounts?.noReads += count
            default:
                figures.sightings += count
                counts.sightings += count
                laneCounts?.sightings += count
                if status == SightingStatus.accepted.rawValue {
                    figures.accepted += count
                    counts.accepted += count
                } else {
                    figures.rejected += count
                    counts.rejected += count
                    laneCounts?.rejected += count
                    rules[try row.text("rule_id"), default: 0] += count
                }
            }
            cameras[camera] = counts
            if let laneCounts { lanes[lane(site, laneName)] = laneCounts }
        }
        figures.topRules = rules.map { Figures.Count(name: $0.key.isEmpty ? "(none)" : $0.key, count: $0.value) }
            .sorted { ($1.count, $0.name) < ($0.count, $1.name) }.prefix(5).map { $0 }
        figures.cameras = cameras.values.sorted { $0.camera < $1.camera }
        // Why they were not read: from the stored events (no rollup keeps the reason; no-reads are
        // few beside sightings).
        for row in try connection.query(
            """
            SELECT camera, coalesce(body->>'reason', 'unknown') AS reason, count(*) AS n FROM noreads t
            WHERE t.first_seen >= $1::timestamptz AND t.first_seen < $2::timestamptz AND \(Self.rowFilters)
            GROUP BY 1, 2 ORDER BY 1, 3 DESC, 2
            """, scope.rowParameters
        ).named("report no-read reasons") {
            figures.noReadReasons.append(
                Figures.NoReadReasonCount(
                    camera: try row.text("camera"), reason: try row.text("reason"), count: try row.int("n")))
        }
        // What people resolved of the period's no-reads (by when the camera saw them).
        for row in try connection.query(
            """
            SELECT camera, count(*) FILTER (WHERE outcome = 'keyed') AS keyed,
                   count(*) FILTER (WHERE outcome = 'no-label') AS no_label,
                   count(*) FILTER (WHERE outcome = 'not-a-parcel') AS not_a_parcel,
                   round(percentile_cont(0.5) WITHIN GROUP (
                       ORDER BY extract(epoch FROM keyed_at - noread_first_seen)))::bigint AS median_seconds
            FROM noread_codings t
            WHERE t.noread_first_seen >= $1::timestamptz AND t.noread_first_seen < $2::timestamptz AND \(Self.rowFilters)
            GROUP BY 1 ORDER BY 1
            """, scope.rowParameters
        ).named("report codings") {
            figures.codings.append(
                Figures.CodingCounts(
                    camera: try row.text("camera"), keyed: try row.int("keyed"), noLabel: try row.int("no_label"),
                    notAParcel: try row.int("not_a_parcel"), medianSecondsToResolve: try row.int("median_seconds")))
        }
        // Unique codes cannot be summed from rollups: counted over the stored sightings.
        if scope.countsUniqueCodes,
            let totals = try connection.query(
                """
                SELECT count(*) AS n FROM (SELECT DISTINCT value FROM sightings t
                                           WHERE status = 'accepted' AND \(Self.sightingScope)) codes
                """, scope.rowParameters
            ).named("report unique codes").first
        {
            figures.uniqueCodes = try totals.int("n")
        }
        for row in try connection.query(
            """
            SELECT site, lane, sum(passes)::bigint AS n, sum(partial)::bigint AS partial FROM (\(Self.passes)) p
            GROUP BY 1, 2 HAVING sum(passes) <> 0
            """,
            parameters
        ).named("report passes") {
            let (site, laneName) = (try row.text("site"), try row.text("lane"))
            let count = try row.int("n")
            figures.itemPasses += count
            figures.partialPasses += try row.int("partial")
            lanes[
                lane(site, laneName), default: Figures.LaneCounts(site: site, lane: laneName, sightings: 0, noReads: 0)
            ]
            .itemPasses = count
        }
        figures.lanes = lanes.values.sorted { ($0.site, $0.lane) < ($1.site, $1.lane) }
        for row in try connection.query(
            """
            SELECT verdict, count(*) AS n FROM pack_records
            WHERE completed_at >= $1::timestamptz AND completed_at < $2::timestamptz
              AND ($3::text IS NULL OR site = $3) AND ($4::text IS NULL OR true)  -- packs are not on a lane
              AND ($5::text IS NULL OR camera = $5) GROUP BY verdict
            """, scope.rowParameters
        ).named("report packs") {
            figures.packs[try row.text("verdict")] = try row.int("n")
        }

        figures.hourly = try hourly(scope)
        figures.health = try health(scope)
        try parcelsAndDecisions(scope, into: &figures)
        return figures
    }

    /// Parcels — the parcel passes, a lane's cameras' parcels merged — by when they were last
    /// seen (a camera filter: the passes that camera saw), decisions by the frame that closed
    /// their parcel, in the period and the filters.
    func parcelsAndDecisions(_ scope: Scope, into figures: inout Figures) throws(PGError) {
        let filters = """
            ($3::text IS NULL OR site = $3) AND ($4::text IS NULL OR lane = $4) AND ($5::text IS NULL OR camera = $5)
            """
        if let row = try connection.query(
            """
            SELECT count(*) AS parcels, count(*) FILTER (WHERE complete) AS complete,
                   count(*) FILTER (WHERE no_read) AS no_read, coalesce(sum(codes), 0)::bigint AS codes
            FROM parcel_passes
            WHERE closed_at IS NOT NULL AND last_seen >= $1::timestamptz AND last_seen < $2::timestamptz
              AND ($3::text IS NULL OR site = $3) AND ($4::text IS NULL OR lane = $4)
              AND ($5::text IS NULL OR members @> jsonb_build_array(jsonb_build_object('camera', $5::text)))
            """, scope.rowParameters
        ).named("report parcels").first {
            figures.parcels = Figures.ParcelCounts(
                parcels: try row.int("parcels"), complete: try row.int("complete"), noRead: try row.int("no_read"),
                codes: try row.int("codes"))
        }
        let decided = "closed_at >= $1::timestamptz AND closed_at < $2::timestamptz AND \(filters)"
        if let row = try connection.query(
            """
            SELECT count(*) FILTER (WHERE action = 'pass') AS pass, count(*) FILTER (WHERE action = 'divert') AS divert,
                   count(*) FILTER (WHERE late) AS late
            FROM decisions WHERE \(decided)
            """, scope.rowParameters
        ).named("report decisions").first {
            figures.decisions.pass = try row.int("pass")
            figures.decisions.divert = try row.int("divert")
            figures.decisions.late = try row.int("late")
        }
        for row in try connection.query(
            "SELECT reason, count(*) AS n FROM decisions, unnest(reasons) AS reason WHERE \(decided) GROUP BY reason",
            scope.rowParameters
        ).named("report decision reasons") {
            figures.decisions.reasons[try row.text("reason")] = try row.int("n")
        }
    }

    /// Camera health: heartbeats heard in the period, the longest silence between two of them,
    /// and frames dropped (per agent run: the counter starts again with each run). Rollup rows
    /// are segments (first and last heartbeat, longest silence inside); a stored heartbeat at the
    /// ends is a segment of one; silences between segments come from their neighbours.
    func health(_ scope: Scope) throws(PGError) -> [Figures.CameraHealth] {
        let filters = """
            ($3::text IS NULL OR site = $3) AND ($5::text IS NULL OR camera = $5)
            AND ($4::text IS NULL OR camera IN (SELECT camera FROM lane_cameras WHERE lane = $4))
            """
        return try connection.query(
            """
            WITH segments AS (
                SELECT camera, min(first_time) AS first_time, max(last_time) AS last_time, max(max_gap) AS gap,
                       sum(beats) AS beats
                FROM heartbeat_rollups WHERE \(Self.middle) AND \(filters) GROUP BY camera, bucket
                UNION ALL
                SELECT camera, time, time, 0, 1 FROM heartbeats WHERE \(Self.ends("time")) AND \(filters)
            ), gaps AS (
                SELECT camera, beats,
                       greatest(gap, extract(epoch FROM first_time - lag(last_time) OVER (PARTITION BY camera ORDER BY first_time))::float8) AS gap
                FROM segments
            ), runs AS (
                SELECT camera, max(high) - min(low) AS dropped FROM (
                    SELECT camera, run_id, min_dropped AS low, max_dropped AS high FROM heartbeat_rollups
                    WHERE \(Self.middle) AND \(filters)
                    UNION ALL
                    SELECT camera, run_id, frames_dropped, frames_dropped FROM heartbeats
                    WHERE \(Self.ends("time")) AND \(filters)) r
                GROUP BY camera, run_id
            )
            SELECT g.camera, sum(g.beats)::bigint AS heartbeats, round(coalesce(max(g.gap), 0))::bigint AS max_gap,
                   (SELECT coalesce(sum(dropped), 0) FROM runs r WHERE r.camera = g.camera)::bigint AS dropped
            FROM gaps g GROUP BY g.camera ORDER BY g.camera
            """, scope.parameters
        ).named("report camera health").map { row throws(PGError) in
            Figures.CameraHealth(
                camera: try row.text("camera"), heartbeats: try row.int("heartbeats"),
                maxGapSeconds: max(0, try row.int("max_gap")), framesDropped: try row.int("dropped"))
        }
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
            let lane = byLane ? try row.text("lane") : ""
            guard !byLane || !lane.isEmpty else { return }
            let hour = try row.text("hour")
            var figures = lanes[lane]?[hour] ?? Figures.Hour(hour: hour, sightings: 0, itemPasses: 0)
            try update(&figures)
            lanes[lane, default: [:]][hour] = figures
        }
        let laneColumn = byLane ? "lane" : "''::text"
        let hour = "to_char(date_trunc('hour', at AT TIME ZONE $8), 'YYYY-MM-DD HH24:00')"
        for row in try connection.query(
            """
            SELECT \(laneColumn) AS lane, \(hour) AS hour, status, sum(n)::bigint AS n FROM (\(Self.reads)) r
            GROUP BY 1, 2, 3
            """, parameters
        ).named("report hourly reads") {
            try add(row) { (figures: inout Figures.Hour) throws(PGError) in
                let count = try row.int("n")
                switch try row.text("status") {
                case "noread": figures.noReads += count
                case SightingStatus.accepted.rawValue:
                    figures.sightings += count
                    figures.decoded += count
                default: figures.decoded += count
                }
            }
        }
        for row in try connection.query(
            """
            SELECT \(laneColumn) AS lane, \(hour) AS hour, sum(passes)::bigint AS n FROM (\(Self.passes)) p
            GROUP BY 1, 2 HAVING sum(passes) <> 0
            """,
            parameters
        ).named("report hourly passes") {
            try add(row) { (figures: inout Figures.Hour) throws(PGError) in figures.itemPasses += try row.int("n") }
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
