import ArgumentParser
import Foundation
import ScanAgentConfig
import ScanCore
import ScanPostgres
import ScanReconciliation
import ScanReports

/// `scanadmin report --shift today`: the end-of-shift report.
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Shift report: item passes, sightings, rules, packs, throughput and camera health per shift.",
        discussion: """
            --shift takes today (the shifts of the current production day that have started: the day \
            the latest shift began, so after midnight, during or after a night shift, still the day \
            before), yesterday (the production day before), current, previous, a shift name (its \
            latest start), or DATE/NAME (2026-11-23/night: a night shift belongs to the day it \
            starts). --from/--to report any range instead (RFC 3339, or a local date YYYY-MM-DD). \
            Shifts: --shifts, else "shifts" in the config file, else early=06:00-14:00,late=14:00-22:00, \
            night=22:00-06:00, in the site's time zone (from the topology; UTC when unknown). \
            Filters: --site, --lane (sightings and item passes of the lane), --camera.

            Exit codes: 0 done, 1 database failure, 64 bad usage (an unknown shift, a bad date).
            """)

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var period: PeriodOptions
    @Option(help: "Only this lane.") var lane: String?
    @Option(help: "Only this camera.") var camera: String?
    @Option(help: "table, csv or json.") var format: ListingFormat = .table
    @Flag(help: "Sum every figure from the stored rows instead of the rollups (slower; to check them).")
    var fromRows = false
    @Flag(
        inversion: .prefixedNo,
        help:
            "Count unique codes (default: for periods of at most 2 days; over the stored rows, slow for long periods).")
    var uniqueCodes: Bool?

    func validate() throws { try period.check(connection: connection) }

    func run() throws {
        try withDatabase(connection, command: "report") { database in
            let (plan, periods) = try period.resolve(database, connection: connection)
            let filter = ReportFilter(
                site: period.site, lane: lane, camera: camera, timeZone: plan.timeZone.identifier, fromRows: fromRows,
                uniqueCodes: uniqueCodes)
            let figures = try periods.map { period throws(PGError) in
                try ShiftFigures.load(database, period: period, filter: filter)
            }
            let text: String =
                switch format {
                case .json: ShiftFigures.json(figures, plan: plan, filter: filter)
                case .csv: ShiftFigures.csv(figures, plan: plan)
                case .table: ShiftFigures.table(figures, plan: plan, filter: filter)
                }
            print(text, terminator: "")
        }
    }
}

/// Which shifts or range a command reports on: `--shift`, or `--from/--to`, in a site's time zone.
struct PeriodOptions: ParsableArguments {
    @Option(help: "today, yesterday, current, previous, NAME or DATE/NAME.") var shift: String?
    @Option(help: "Start of a custom range (RFC 3339 or YYYY-MM-DD).") var from: String?
    @Option(help: "End of a custom range (exclusive).") var to: String?
    @Option(help: "Only this site (its time zone is used).") var site: String?
    @Option(help: "Shift definitions, name=HH:MM-HH:MM,…") var shifts: String?
    @Option(help: "Time zone (IANA), instead of the site's.") var timeZone: String?
    @Option(help: "The time to report at (RFC 3339; default now), for reruns and tests.") var now: String?

    /// What can be checked before the database is asked: the options' combination, the shift
    /// plan, and that `--shift` names one of its shifts (so a bad shift is a usage error with this
    /// command's usage, also when PostgreSQL cannot be reached). The plan's time zone comes from
    /// the site later; names and dates do not depend on it.
    func check(connection: ConnectionOptions) throws {
        if shift != nil && (from != nil || to != nil) { throw ValidationError("use --shift or --from/--to, not both") }
        if (from == nil) != (to == nil) { throw ValidationError("--from and --to go together") }
        let spec = shifts ?? (try? connection.fileSettings())?["shifts"] ?? ShiftPlan.defaultSpec
        let plan = try Self.plan(spec: spec, zone: try timeZone.map(Self.zone(named:)) ?? TimeZone.gmt)
        if let shift {
            do {
                _ = try plan.resolve(ShiftPlan.selection(shift), now: Date())
            } catch {
                throw ValidationError("--shift '\(shift)': \(error)")
            }
        }
    }

    /// The shift plan in the chosen time zone and the periods asked for.
    func resolve(_ database: PGConnection, connection: ConnectionOptions) throws -> (ShiftPlan, [ShiftPlan.Instance]) {
        let reference =
            try now.map { text -> Date in
                guard let instant = Timestamp(rfc3339: text) else {
                    throw ValidationError("--now '\(text)' is not an RFC 3339 time")
                }
                return Date(timeIntervalSince1970: Double(instant.milliseconds) / 1000)
            } ?? Date()
        let spec = try shifts ?? connection.fileSettings()["shifts"] ?? ShiftPlan.defaultSpec
        let plan = try Self.plan(database, spec: spec, timeZone: timeZone, site: site)
        return (plan, try periods(plan, now: reference))
    }

    /// The shift plan `spec` in `timeZone`, else in the site's zone (the only site's when none is
    /// named), else in UTC: the report, the no-reads list and the dashboard resolve it alike.
    static func plan(_ database: PGConnection, spec: String, timeZone: String?, site: String?) throws -> ShiftPlan {
        if let timeZone { return try plan(spec: spec, zone: try zone(named: timeZone)) }
        let zones = try ReportStore(connection: database).siteTimeZones()
        let chosen =
            site.flatMap { wanted in zones.first { $0.site == wanted } } ?? (zones.count == 1 ? zones.first : nil)
        return try plan(spec: spec, zone: siteZone(chosen?.timeZone))
    }

    /// `--time-zone`: an IANA zone, or a usage error naming it.
    static func zone(named name: String) throws -> TimeZone {
        guard let zone = TimeZone(identifier: name) else {
            throw ValidationError("--time-zone '\(name)' is not an IANA time zone")
        }
        return zone
    }

    /// A site's stored zone; UTC when there is none or it is not a zone.
    static func siteZone(_ name: String?) -> TimeZone { name.flatMap { TimeZone(identifier: $0) } ?? TimeZone.gmt }

    /// `--shifts` in `zone`, or a usage error listing what is wrong.
    static func plan(spec: String, zone: TimeZone) throws -> ShiftPlan {
        do {
            return try ShiftPlan.parse(spec, timeZone: zone)
        } catch {
            throw ValidationError("--shifts: \(error.issues.map(\.description).joined(separator: "; "))")
        }
    }

    private func periods(_ plan: ShiftPlan, now: Date) throws -> [ShiftPlan.Instance] {
        if let from, let to {
            let start = try instant(from, plan: plan, option: "--from")
            let end = try instant(to, plan: plan, option: "--to")
            guard start < end else { throw ValidationError("--from must be before --to") }
            return [ShiftPlan.Instance(name: "range", date: plan.localDate(start), start: start, end: end)]
        }
        do {
            return try plan.resolve(ShiftPlan.selection(shift ?? "today"), now: now)
        } catch {
            throw ValidationError("--shift '\(shift ?? "today")': \(error)")
        }
    }

    private func instant(_ text: String, plan: ShiftPlan, option: String) throws -> Date {
        if let time = Timestamp(rfc3339: text) { return Date(timeIntervalSince1970: Double(time.milliseconds) / 1000) }
        if let midnight = plan.instance(ShiftPlan.Shift(name: "day", start: 0, end: 24 * 60), on: text),
            text.count == 10
        {
            return midnight.start
        }
        throw ValidationError("\(option) '\(text)' is not an RFC 3339 time or a date (YYYY-MM-DD)")
    }
}

struct ReportFilter {
    var site: String?
    var lane: String?
    var camera: String?
    var timeZone: String
    /// Every figure from the stored rows, none from the rollups.
    var fromRows = false
    /// Count unique codes (nil: for short periods only).
    var uniqueCodes: Bool? = nil
}

/// Everything the report says about one shift.
struct ShiftFigures {
    var period: ShiftPlan.Instance
    var itemPasses = 0
    var partialPasses = 0
    var sightings = 0
    var accepted = 0
    var rejected = 0
    /// Nil when not counted (long periods).
    var uniqueCodes: Int?
    var noReads = 0
    var noReadReasons: [ReportStore.Figures.NoReadReasonCount] = []
    var codings: [ReportStore.Figures.CodingCounts] = []
    var packs: [PackVerdict: Int] = [:]
    var topRules: [(rule: String, count: Int)] = []
    var cameras: [(camera: String, sightings: Int, accepted: Int, rejected: Int, noReads: Int)] = []
    var lanes: [ReportStore.Figures.LaneCounts] = []
    var hourly: [(hour: String, sightings: Int, itemPasses: Int)] = []
    var health: [(camera: String, heartbeats: Int, maxGapSeconds: Int, framesDropped: Int)] = []
    var parcels = ReportStore.Figures.ParcelCounts()
    var decisions = ReportStore.Figures.DecisionCounts()
    /// Messages refused in the period, by camera and reason: a camera whose events are being
    /// dead-lettered (its place disagrees with the topology, say) is warned of with the reason.
    var deadLetters: [DeadLetterStore.Count] = []

    /// The decision reasons named in the period, in the contract's order.
    var reasons: [(reason: String, count: Int)] {
        DecisionReason.allCases.compactMap { reason in decisions.reasons[reason.rawValue].map { (reason.rawValue, $0) }
        }
    }

    static func load(_ db: PGConnection, period: ShiftPlan.Instance, filter: ReportFilter) throws(PGError)
        -> ShiftFigures
    {
        var scope = ReportStore.Scope(
            start: timestamp(period.start), end: timestamp(period.end), site: filter.site, lane: filter.lane,
            camera: filter.camera, timeZone: filter.timeZone)
        scope.useRollups = !filter.fromRows
        scope.countUniqueCodes = filter.uniqueCodes
        let stored = try ReportStore(connection: db).figures(scope)
        var figures = ShiftFigures(period: period)
        figures.itemPasses = stored.itemPasses
        figures.partialPasses = stored.partialPasses
        figures.sightings = stored.sightings
        figures.accepted = stored.accepted
        figures.rejected = stored.rejected
        figures.uniqueCodes = stored.uniqueCodes
        figures.noReads = stored.noReads
        figures.noReadReasons = stored.noReadReasons
        figures.codings = stored.codings
        for (verdict, count) in stored.packs {
            if let verdict = PackVerdict(rawValue: verdict) { figures.packs[verdict] = count }
        }
        figures.topRules = stored.topRules.map { ($0.name, $0.count) }
        figures.cameras = stored.cameras.map { ($0.camera, $0.sightings, $0.accepted, $0.rejected, $0.noReads) }
        figures.lanes = stored.lanes
        // The report's hours are those with accepted sightings or item passes (the dashboard's
        // trends also chart hours of rejects and no-reads only).
        figures.hourly = stored.hourly.filter { $0.sightings > 0 || $0.itemPasses > 0 }.map {
            ($0.hour, $0.sightings, $0.itemPasses)
        }
        figures.health = stored.health.map { ($0.camera, $0.heartbeats, $0.maxGapSeconds, $0.framesDropped) }
        figures.parcels = stored.parcels
        figures.decisions = stored.decisions
        figures.deadLetters = try DeadLetterStore(connection: db).counts(
            start: scope.start, end: scope.end, camera: filter.camera
        ).filter { count in filter.site.map { count.site == $0 } ?? true }
        return figures
    }

    static func timestamp(_ date: Date) -> Timestamp {
        Timestamp(milliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }

    static func packCount(_ figures: ShiftFigures, _ verdict: PackVerdict) -> Int { figures.packs[verdict] ?? 0 }

    /// The read rate as a percentage with one decimal, "-" when nothing was seen.
    static func percent(_ decoded: Int, _ noReads: Int) -> String {
        ReportStore.Figures.readRate(decoded: decoded, noReads: noReads).map { String(format: "%.1f%%", $0 * 100) }
            ?? "-"
    }

    static func rateField(_ writer: inout JSONWriter, _ decoded: Int, _ noReads: Int) {
        if let rate = ReportStore.Figures.readRate(decoded: decoded, noReads: noReads) {
            writer.field("readRate", rate, decimals: 4)
        } else {
            writer.field("readRate", nil as String?)
        }
    }

    // MARK: output

    static func json(_ all: [ShiftFigures], plan: ShiftPlan, filter: ReportFilter) -> String {
        var shifts: [String] = []
        for f in all {
            var w = JSONWriter()
            w.field("name", f.period.name)
            w.field("date", f.period.date)
            w.field("start", plan.offsetTime(f.period.start))
            w.field("end", plan.offsetTime(f.period.end))
            w.field("itemPasses", f.itemPasses)
            w.field("partialPasses", f.partialPasses)
            w.field("sightings", f.sightings)
            w.field("accepted", f.accepted)
            w.field("rejected", f.rejected)
            if let unique = f.uniqueCodes {
                w.field("uniqueCodes", unique)
            } else {
                w.null("uniqueCodes")
            }
            w.field("noReads", f.noReads)
            rateField(&w, f.sightings, f.noReads)
            var packs = JSONWriter()
            packs.field("complete", packCount(f, .complete))
            packs.field("short", packCount(f, .short))
            packs.field("over", packCount(f, .over))
            packs.field("unexpected", packCount(f, .unexpected))
            packs.field("unknownOrder", packCount(f, .unknownOrder))
            packs.field("total", f.packs.values.reduce(0, +))
            w.raw("packs", packs.finished())
            w.raw(
                "parcels",
                Array(
                    object {
                        $0.field("parcels", f.parcels.parcels)
                        $0.field("complete", f.parcels.complete)
                        $0.field("incomplete", f.parcels.parcels - f.parcels.complete - f.parcels.noRead)
                        $0.field("noRead", f.parcels.noRead)
                        $0.field("codes", f.parcels.codes)
                        if let perParcel = f.parcels.codesPerParcel {
                            $0.field("codesPerParcel", perParcel, decimals: 2)
                        } else {
                            $0.field("codesPerParcel", nil as String?)
                        }
                    }.utf8))
            w.raw(
                "decisions",
                Array(
                    object {
                        $0.field("pass", f.decisions.pass)
                        $0.field("divert", f.decisions.divert)
                        $0.field("late", f.decisions.late)
                        var reasons = JSONWriter()
                        for (reason, count) in f.reasons { reasons.field(reason, count) }
                        $0.raw("reasons", reasons.finished())
                    }.utf8))
            w.raw(
                "topRejectRules",
                array(
                    f.topRules.map { rule in
                        object {
                            $0.field("rule", rule.rule); $0.field("count", rule.count)
                        }
                    }))
            w.raw(
                "cameras",
                array(
                    f.cameras.map { c in
                        object {
                            $0.field("camera", c.camera)
                            $0.field("sightings", c.sightings)
                            $0.field("accepted", c.accepted)
                            $0.field("rejected", c.rejected)
                            $0.field("noReads", c.noReads)
                            rateField(&$0, c.sightings, c.noReads)
                            var reasons = JSONWriter()
                            for r in f.noReadReasons where r.camera == c.camera { reasons.field(r.reason, r.count) }
                            $0.raw("noReadReasons", reasons.finished())
                            // A person's reads apart from the camera's: the keyed rate is of the
                            // labels seen (read by the camera, or not).
                            let coded = f.codings.first { $0.camera == c.camera }
                            $0.field("keyed", coded?.keyed ?? 0)
                            $0.field("resolved", coded?.resolved ?? 0)
                            let keyed = coded?.keyed ?? 0
                            if let rate = ReportStore.Figures.readRate(
                                decoded: keyed, noReads: c.sightings + c.noReads - keyed)
                            {
                                $0.field("keyedRate", rate, decimals: 4)
                            } else {
                                $0.field("keyedRate", nil as String?)
                            }
                            if let coded {
                                $0.field("medianSecondsToResolve", coded.medianSecondsToResolve)
                            } else {
                                $0.field("medianSecondsToResolve", nil as String?)
                            }
                        }
                    }))
            w.raw(
                "lanes",
                array(
                    f.lanes.map { l in
                        object {
                            $0.field("site", l.site)
                            $0.field("lane", l.lane)
                            $0.field("itemPasses", l.itemPasses)
                            $0.field("sightings", l.sightings)
                            $0.field("rejected", l.rejected)
                            $0.field("noReads", l.noReads)
                            rateField(&$0, l.sightings, l.noReads)
                        }
                    }))
            w.raw(
                "hourly",
                array(
                    f.hourly.map { h in
                        object {
                            $0.field("hour", h.hour)
                            $0.field("sightings", h.sightings)
                            $0.field("itemPasses", h.itemPasses)
                        }
                    }))
            w.raw(
                "health",
                array(
                    f.health.map { h in
                        object {
                            $0.field("camera", h.camera)
                            $0.field("heartbeats", h.heartbeats)
                            $0.field("maxGapSeconds", h.maxGapSeconds)
                            $0.field("framesDropped", h.framesDropped)
                        }
                    }))
            w.raw(
                "deadLetters",
                array(
                    f.deadLetters.map { d in
                        object {
                            $0.field("site", orNull: d.site)
                            $0.field("camera", orNull: d.camera)
                            $0.field("reason", d.reason)
                            $0.field("count", d.count)
                            $0.field("last", d.last)
                            $0.field("latestDetail", d.latestDetail)
                        }
                    }))
            shifts.append(w.text)
        }
        var top = JSONWriter()
        top.field("timeZone", plan.timeZone.identifier)
        top.field("site", filter.site)
        top.field("lane", filter.lane)
        top.field("camera", filter.camera)
        top.raw("shifts", Array(("[" + shifts.joined(separator: ",") + "]").utf8))
        return top.text + "\n"
    }

    private static func object(_ fill: (inout JSONWriter) -> Void) -> String {
        var writer = JSONWriter()
        fill(&writer)
        return writer.text
    }

    private static func array(_ items: [String]) -> [UInt8] { Array(("[" + items.joined(separator: ",") + "]").utf8) }

    /// Long format: one figure a row, the same figures as JSON under stable names.
    static func csv(_ all: [ShiftFigures], plan: ShiftPlan) -> String {
        var listing = Listing(columns: ["shift", "start", "end", "section", "key", "figure", "value"])
        for f in all {
            let head = [f.period.label, plan.offsetTime(f.period.start), plan.offsetTime(f.period.end)]
            func add(_ section: String, _ key: String, _ figure: String, _ value: Int) {
                listing.rows.append(head + [section, key, figure, String(value)])
            }
            add("totals", "", "itemPasses", f.itemPasses)
            add("totals", "", "partialPasses", f.partialPasses)
            add("totals", "", "sightings", f.sightings)
            add("totals", "", "accepted", f.accepted)
            add("totals", "", "rejected", f.rejected)
            if let unique = f.uniqueCodes { add("totals", "", "uniqueCodes", unique) }
            add("totals", "", "noReads", f.noReads)
            for (verdict, name) in [
                (PackVerdict.complete, "complete"), (.short, "short"), (.over, "over"), (.unexpected, "unexpected"),
                (.unknownOrder, "unknownOrder"),
            ] {
                add("packs", "", name, packCount(f, verdict))
            }
            add("parcels", "", "parcels", f.parcels.parcels)
            add("parcels", "", "complete", f.parcels.complete)
            add("parcels", "", "noRead", f.parcels.noRead)
            add("parcels", "", "codes", f.parcels.codes)
            add("decisions", "", "pass", f.decisions.pass)
            add("decisions", "", "divert", f.decisions.divert)
            add("decisions", "", "late", f.decisions.late)
            for (reason, count) in f.reasons { add("decisions", reason, "count", count) }
            for rule in f.topRules { add("rejectRules", rule.rule, "count", rule.count) }
            for c in f.cameras {
                add("cameras", c.camera, "sightings", c.sightings)
                add("cameras", c.camera, "accepted", c.accepted)
                add("cameras", c.camera, "rejected", c.rejected)
                add("cameras", c.camera, "noReads", c.noReads)
                for r in f.noReadReasons where r.camera == c.camera {
                    add("cameras", c.camera, "noReads." + r.reason, r.count)
                }
                if let coded = f.codings.first(where: { $0.camera == c.camera }) {
                    add("cameras", c.camera, "keyed", coded.keyed)
                    add("cameras", c.camera, "resolved", coded.resolved)
                    add("cameras", c.camera, "medianSecondsToResolve", coded.medianSecondsToResolve)
                }
            }
            for l in f.lanes {
                add("lanes", "\(l.site)/\(l.lane)", "itemPasses", l.itemPasses)
                add("lanes", "\(l.site)/\(l.lane)", "sightings", l.sightings)
                add("lanes", "\(l.site)/\(l.lane)", "rejected", l.rejected)
                add("lanes", "\(l.site)/\(l.lane)", "noReads", l.noReads)
            }
            for h in f.hourly {
                add("hourly", h.hour, "sightings", h.sightings)
                add("hourly", h.hour, "itemPasses", h.itemPasses)
            }
            for h in f.health {
                add("health", h.camera, "heartbeats", h.heartbeats)
                add("health", h.camera, "maxGapSeconds", h.maxGapSeconds)
                add("health", h.camera, "framesDropped", h.framesDropped)
            }
            for d in f.deadLetters { add("deadLetters", "\(d.camera ?? "")/\(d.reason)", "count", d.count) }
        }
        return listing.render(.csv)
    }

    /// Readable in 80 columns: one block a shift.
    static func table(_ all: [ShiftFigures], plan: ShiftPlan, filter: ReportFilter) -> String {
        var out = ""
        let scope = [
            filter.site.map { "site \($0)" }, filter.lane.map { "lane \($0)" }, filter.camera.map { "camera \($0)" },
        ].compactMap { $0 }
        if all.isEmpty {
            out +=
                "No shift has started yet today (\(plan.timeZone.identifier)); the shift under way is --shift current.\n"
        }
        for f in all {
            out += "Shift \(f.period.label)  \(plan.localTime(f.period.start)) – \(plan.localTime(f.period.end))"
            out += scope.isEmpty ? "\n" : "  (\(scope.joined(separator: ", ")))\n"
            out += String(repeating: "=", count: 78) + "\n"
            let partial = f.partialPasses > 0 ? "  (\(f.partialPasses) seen by only some cameras of their lane)" : ""
            out += "Item passes      \(f.itemPasses)\(partial)\n"
            out +=
                "Sightings        \(f.sightings)  accepted \(f.accepted)  rejected \(f.rejected)  unique codes "
                + (f.uniqueCodes.map(String.init)
                    ?? "not counted (over \(ReportStore.Scope.uniqueCodesMaxDays) days: --unique-codes)") + "\n"
            out += "No-reads         \(f.noReads)  read rate \(percent(f.sightings, f.noReads))\n"
            if !f.topRules.isEmpty {
                out += "Top reject rules " + f.topRules.map { "\($0.rule) \($0.count)" }.joined(separator: ", ") + "\n"
            }
            let total = f.packs.values.reduce(0, +)
            out +=
                "Packs            \(total)  complete \(packCount(f, .complete))  short \(packCount(f, .short))  over \(packCount(f, .over))"
            out += "  unexpected \(packCount(f, .unexpected))  unknown order \(packCount(f, .unknownOrder))\n"
            if f.parcels.parcels > 0 || f.decisions.pass + f.decisions.divert > 0 {
                let p = f.parcels
                out +=
                    "Parcels          \(p.parcels)  complete \(p.complete)  incomplete \(p.parcels - p.complete - p.noRead)"
                    + "  no-read \(p.noRead)  codes a parcel "
                    + (p.codesPerParcel.map { String(format: "%.2f", $0) } ?? "-") + "\n"
                let why = f.reasons.map { "\($0.reason) \($0.count)" }.joined(separator: ", ")
                out +=
                    "Decisions        pass \(f.decisions.pass)  divert \(f.decisions.divert)  late \(f.decisions.late)"
                    + (why.isEmpty ? "" : "  (\(why))") + "\n"
            }
            for d in f.deadLetters {
                // A warning first: events of this camera are not being counted.
                let who = d.camera.map { "camera \(TerminalText.escaped($0))" } ?? "no camera"
                out += "WARNING          \(d.count) message(s) of \(who) dead-lettered: \(d.reason)\n"
                out += "                 latest: \(TerminalText.escaped(String(d.latestDetail.prefix(52))))\n"
            }
            if !f.cameras.isEmpty {
                var cameras = Listing(columns: [
                    "camera", "sightings", "accepted", "rejected", "noread", "rate", "beats", "gap s", "dropped",
                ])
                for c in f.cameras {
                    let health = f.health.first { $0.camera == c.camera }
                    cameras.rows.append([
                        c.camera, String(c.sightings), String(c.accepted), String(c.rejected), String(c.noReads),
                        percent(c.sightings, c.noReads), health.map { String($0.heartbeats) } ?? "0",
                        health.map { String($0.maxGapSeconds) } ?? "-", health.map { String($0.framesDropped) } ?? "-",
                    ])
                }
                for h in f.health where !f.cameras.contains(where: { $0.camera == h.camera }) {
                    cameras.rows.append([
                        h.camera, "0", "0", "0", "0", "-", String(h.heartbeats), String(h.maxGapSeconds),
                        String(h.framesDropped),
                    ])
                }
                out += "\n" + cameras.render(.table)
                // Why each camera's no-reads were not read, commonest first: "too-small" says zoom.
                let reasons = Dictionary(grouping: f.noReadReasons, by: \.camera)
                if !reasons.isEmpty { out += "No-reads by reason\n" }
                for camera in reasons.keys.sorted() {
                    let list = (reasons[camera] ?? []).map { "\(TerminalText.escaped($0.reason)) \($0.count)" }
                    let line = "  \(TerminalText.escaped(camera)): " + list.joined(separator: ", ")
                    out += (line.count > 80 ? String(line.prefix(79)) + "…" : line) + "\n"
                }
                // What people resolved of them: a keyed code is a person's read, not the camera's.
                if !f.codings.isEmpty { out += "No-reads resolved by a person\n" }
                for coded in f.codings {
                    let seen = f.cameras.first { $0.camera == coded.camera }.map { $0.sightings + $0.noReads } ?? 0
                    let line =
                        "  \(TerminalText.escaped(coded.camera)): \(coded.resolved) resolved, \(coded.keyed) keyed ("
                        + percent(coded.keyed, max(0, seen - coded.keyed)) + " of labels), median "
                        + "\(coded.medianSecondsToResolve) s to resolve"
                    out += (line.count > 80 ? String(line.prefix(79)) + "…" : line) + "\n"
                }
            }
            if !f.lanes.isEmpty {
                var lanes = Listing(columns: [
                    "site", "lane", "items", "sightings", "rejected", "no-reads", "read rate",
                ])
                for l in f.lanes {
                    lanes.rows.append([
                        l.site, l.lane, String(l.itemPasses), String(l.sightings), String(l.rejected),
                        String(l.noReads),
                        percent(l.sightings, l.noReads),
                    ])
                }
                out += "\n" + lanes.render(.table)
            }
            if !f.hourly.isEmpty {
                let peak = max(1, f.hourly.map(\.sightings).max() ?? 1)
                out += "\nHour              accepted  items\n"
                for h in f.hourly {
                    let bar = String(repeating: "#", count: Int((Double(h.sightings) / Double(peak) * 40).rounded(.up)))
                    out += "\(h.hour)  " + pad(h.sightings, 8) + "  " + pad(h.itemPasses, 5) + "  " + bar + "\n"
                }
            }
            out += "\n"
        }
        return out
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: " ", count: max(0, width - text.count)) + text
    }
}
