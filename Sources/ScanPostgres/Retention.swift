import ScanCore

/// Day partitions and retention of the time-series tables (migration 0007): which partitions
/// exist, which are past their table's retention, creating days ahead and dropping expired ones.
/// The aggregator runs `maintain` hourly; `scanadmin retention` shows and applies the same plan.
/// Days are UTC days; a table keeps `days` whole days before the current one (0: every day).
public struct Retention {
    public let connection: PGConnection

    public init(connection: PGConnection) { self.connection = connection }

    /// Maintenance runs one at a time across aggregators and scanadmin (advisory lock key).
    static let lockKey = 7_242_027
    /// Days of partitions made ahead of the current one.
    public static let daysAhead = 3

    /// One table's retention.
    public struct Setting: Sendable, Equatable {
        public var table: String
        public var timeColumn: String
        public var days: Int
    }

    /// One day partition, or a table's default partition (`day` nil).
    public struct Partition: Sendable, Equatable {
        public var table: String
        public var name: String
        /// YYYY-MM-DD (UTC).
        public var day: String?
        /// The planner's estimate (ANALYZE), not a count.
        public var estimatedRows: Int
        public var bytes: Int
    }

    /// What retention would remove now.
    public struct Plan: Sendable, Equatable {
        /// The settings and partitions the plan was made from.
        public var settings: [Setting] = []
        public var partitions: [Partition] = []
        /// The first UTC day kept per table (tables that keep every day are absent).
        public var cutoff: [String: String] = [:]
        public var drop: [Partition] = []
        /// Rows of the default partitions older than their table's cutoff.
        public var defaultRows: [String: Int] = [:]
        /// Rollup rows (read, pass and heartbeat rollups) older than the rollups' cutoff.
        public var rollupRows = 0
    }

    /// What `apply` or `maintain` did.
    public struct Outcome: Sendable, Equatable {
        public var dropped: [String] = []
        public var deletedRows = 0
        public var created: [String] = []
    }

    /// The time-series tables (not the rollups).
    public static let tables = [
        "sightings", "noreads", "session_events", "heartbeats", "dead_letters", "parcels", "decisions", "measurements",
    ]

    public func settings() throws(PGError) -> [Setting] {
        try connection.query("SELECT table_name, time_column, days FROM retention_settings ORDER BY table_name")
            .named("retention settings").map { row throws(PGError) in
                Setting(
                    table: try row.text("table_name"), timeColumn: try row.text("time_column"),
                    days: try row.int("days"))
            }
    }

    /// Sets a table's retention (`rollups` for the rollup tables); an unknown table is an error naming the known ones.
    public func set(table: String, days: Int) throws(PGError) {
        guard days >= 0 else {
            throw PGError(
                code: .unexpectedResult, function: "retention set", input: "\(days)",
                message: "days must be 0 (keep every day) or more")
        }
        let updated = try connection.query(
            "SELECT coalesce(scantrack_set_retention($1, $2), false) AS updated", [.text(table), .int(days)]
        ).named("retention set").first?.bool("updated")
        guard updated == true else {
            let known = (Self.tables + ["rollups"]).joined(separator: ", ")
            throw PGError(
                code: .unexpectedResult, function: "retention set", input: table,
                message: "no such table; retention is set for \(known)")
        }
    }

    /// Every partition of the time-series tables, by table and day.
    public func partitions() throws(PGError) -> [Partition] {
        try connection.query(
            """
            SELECT p.relname AS parent, c.relname AS name, greatest(c.reltuples, 0)::bigint AS rows,
                   pg_total_relation_size(c.oid) AS bytes,
                   CASE WHEN c.relname ~ '_[0-9]{8}$'
                        THEN to_char(to_date(right(c.relname, 8), 'YYYYMMDD'), 'YYYY-MM-DD') END AS day
            FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
            WHERE p.relname = ANY($1::text[]) AND p.relnamespace = c.relnamespace
              AND p.relnamespace = 'public'::regnamespace
            ORDER BY p.relname, c.relname
            """, [.text(SiteStore.arrayLiteral(Self.tables))]
        ).named("partitions").map { row throws(PGError) in
            Partition(
                table: try row.text("parent"), name: try row.text("name"), day: try row.optionalText("day"),
                estimatedRows: try row.int("rows"), bytes: try row.int("bytes"))
        }
    }

    /// What retention removes now; `overrides` replace stored settings (table → days).
    public func plan(overrides: [String: Int] = [:]) throws(PGError) -> Plan {
        var plan = Plan(settings: try settings(), partitions: try partitions())
        for setting in plan.settings {
            let days = Self.days(setting, overrides)
            guard days > 0 else { continue }
            let cutoff = try cutoffDay(days: days)
            plan.cutoff[setting.table] = cutoff
            if setting.table == "rollups" {
                plan.rollupRows = try expire(nil, before: cutoff, remove: false)
                continue
            }
            plan.drop += plan.partitions.filter { $0.table == setting.table && ($0.day.map { $0 < cutoff } ?? false) }
            let waiting = try expire(setting.table, before: cutoff, remove: false)
            if waiting > 0 { plan.defaultRows[setting.table] = waiting }
        }
        return plan
    }

    /// Removes what `plan` lists: each partition dropped in a transaction of its own (briefly
    /// locking its table; `lock_timeout` keeps a long report from holding ingest up). Through
    /// the maintenance functions (migration 0008), which touch only day partitions.
    /// `progress` hears each step as it starts.
    public func apply(_ plan: Plan, progress: ((String) -> Void)? = nil) throws(PGError) -> Outcome {
        var outcome = Outcome()
        for (index, partition) in plan.drop.enumerated() {
            guard let day = partition.day else { continue }
            progress?(
                "dropping \(partition.name) (\(index + 1) of \(plan.drop.count), about \(partition.estimatedRows) rows)"
            )
            let dropped = try locked { () throws(PGError) -> Bool in
                try connection.execute("SET LOCAL lock_timeout = '10s'")
                return try connection.query(
                    "SELECT scantrack_drop_day_partition($1, $2::date) AS dropped",
                    [.text(partition.table), .text(day)]
                ).named("drop partition").first?.bool("dropped") ?? false
            }
            if dropped { outcome.dropped.append(partition.name) }
        }
        for (table, cutoff) in plan.cutoff.sorted(by: { $0.key < $1.key }) {
            progress?(
                table == "rollups"
                    ? "deleting rollups before \(cutoff)"
                    : "deleting \(table) rows before \(cutoff) outside day partitions")
            outcome.deletedRows += try locked { () throws(PGError) -> Int in
                try expire(table == "rollups" ? nil : table, before: cutoff, remove: true)
            }
        }
        return outcome
    }

    /// Creates the partitions from yesterday to `daysAhead` days ahead, and one for each day
    /// whose rows wait in a default partition (moving them there) unless retention drops it.
    /// `settings`: as read already (nil: read them).
    public func ensurePartitions(
        overrides: [String: Int] = [:], settings known: [Setting]? = nil, progress: ((String) -> Void)? = nil
    ) throws(PGError) -> [String] {
        var created: [String] = []
        let settings: [Setting]
        if let known { settings = known } else { settings = try self.settings() }
        for setting in settings where Self.tables.contains(setting.table) {
            let days = Self.days(setting, overrides)
            let cutoff = days > 0 ? try cutoffDay(days: days) : "0001-01-01"
            let wanted = try connection.query(
                """
                SELECT to_char(d, 'YYYY-MM-DD') AS day FROM (
                    SELECT generate_series(today - 1, today + $1::int, interval '1 day')::date AS d
                    FROM (SELECT (now() AT TIME ZONE 'UTC')::date AS today) utc
                    UNION
                    SELECT scantrack_default_days($3)
                ) days WHERE d >= $2::date ORDER BY d
                """, [.int(Self.daysAhead), .text(cutoff), .text(setting.table)]
            ).named("partition days").map { row throws(PGError) in try row.text("day") }
            for day in wanted {
                let made = try locked { () throws(PGError) -> Bool in
                    try connection.execute("SET LOCAL lock_timeout = '10s'")
                    return try connection.query(
                        "SELECT scantrack_create_day_partition($1, $2::date) AS made",
                        [.text(setting.table), .text(day)]
                    ).named("create partition").first?.bool("made") ?? false
                }
                if made {
                    let name = setting.table + "_" + day.filter { $0 != "-" }
                    created.append(name)
                    progress?("created \(name)")
                }
            }
        }
        return created
    }

    /// The aggregator's hourly round: expired days dropped, then partitions made ahead.
    /// `plan`: one made already and shown (nil: made now).
    public func maintain(
        overrides: [String: Int] = [:], plan made: Plan? = nil, progress: ((String) -> Void)? = nil
    ) throws(PGError) -> Outcome {
        let plan: Plan
        if let made { plan = made } else { plan = try self.plan(overrides: overrides) }
        var outcome = try apply(plan, progress: progress)
        progress?("making partitions ahead")
        outcome.created = try ensurePartitions(overrides: overrides, settings: plan.settings, progress: progress)
        return outcome
    }

    /// The days a table keeps: an override may keep more than the stored setting (0: every
    /// day), never less, since the maintenance functions derive what they may drop from the stored
    /// setting themselves (migration 0009) and refuse anything newer.
    static func days(_ setting: Setting, _ overrides: [String: Int]) -> Int {
        guard let override = overrides[setting.table], setting.days > 0 else { return setting.days }
        return override == 0 ? 0 : max(override, setting.days)
    }

    /// The first UTC day kept by a retention of `days` days.
    func cutoffDay(days: Int) throws(PGError) -> String {
        try connection.query(
            "SELECT to_char((now() AT TIME ZONE 'UTC')::date - $1::int, 'YYYY-MM-DD') AS day", [.int(days)]
        ).named("retention cutoff").first?.text("day") ?? ""
    }

    /// Rows of `table`'s default partition (nil: of the rollups) before the UTC day `cutoff`:
    /// counted, or deleted (`remove`).
    private func expire(_ table: String?, before cutoff: String, remove: Bool) throws(PGError) -> Int {
        let cutoffTime = "$1::date::timestamp AT TIME ZONE 'UTC'"
        let sql =
            table == nil
            ? "SELECT scantrack_expire_rollups(\(cutoffTime), $2::boolean) AS n"
            : "SELECT scantrack_expire_default($3, \(cutoffTime), $2::boolean) AS n"
        let parameters: [PGValue] =
            [.text(cutoff), .text(remove ? "true" : "false")] + (table.map { [.text($0)] } ?? [])
        return try connection.query(sql, parameters).named("retention rows").first?.int("n") ?? 0
    }

    /// One transaction holding the maintenance lock.
    private func locked<T>(_ body: () throws(PGError) -> T) throws(PGError) -> T {
        try connection.transaction { () throws(PGError) -> T in
            try connection.query("SELECT pg_advisory_xact_lock($1)", [.int(Self.lockKey)])
            return try body()
        }
    }
}
