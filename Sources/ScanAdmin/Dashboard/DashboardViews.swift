import Foundation
import ScanCore
import ScanPostgres
import ScanReports
import ScanEvents
import ScanReconciliation

/// What `scanadmin serve` is told at start.
struct DashboardSettings: Sendable {
    /// Shift definitions (`name=HH:MM-HH:MM,…`), as `scanadmin report --shifts`.
    var shiftSpec: String
    /// A zone for every site instead of each site's own.
    var timeZone: String?
    /// Only this site.
    var site: String?
    var refreshSeconds: Double
    /// Seconds without a heartbeat after which a camera is silent (as `scanadmin cameras`).
    var silentAfter: Double
    /// Shifts in a trend chart: the current one and those before it.
    var trendShifts: Int
    /// A fixed time to show (tests, screenshots); nil: the clock.
    var fixedNow: Date?
    /// Whether the live pages (`/cameras/SITE/CAMERA/live`) and the coding desk (`/coding`) are
    /// served: the camera and lane pages link to them.
    var liveView = false
    var codingDesk = false

    var now: Date { fixedNow ?? Date() }
}

/// The dashboard's pages and fragments, rendered on the database thread from the same queries
/// as `scanadmin report` (`ShiftFigures.load`), so the page and the report never disagree.
struct DashboardViews {
    let database: PGConnection
    let settings: DashboardSettings
    /// The sites to show, read once per request.
    let sites: [SiteShift]

    init(database: PGConnection, settings: DashboardSettings) throws {
        self.database = database
        self.settings = settings
        self.sites = try Self.sites(database, settings)
    }

    /// A site with its shift plan (the site's zone) and the shift running now (nil: none is).
    struct SiteShift {
        var site: Topology.Site
        var plan: ShiftPlan
        var shift: ShiftPlan.Instance?

        func scope(lane: String? = nil, camera: String? = nil, period: ShiftPlan.Instance? = nil) -> ReportStore.Scope?
        {
            guard let period = period ?? shift else { return nil }
            return ReportStore.Scope(
                start: ShiftFigures.timestamp(period.start), end: ShiftFigures.timestamp(period.end), site: site.id,
                lane: lane, camera: camera, timeZone: plan.timeZone.identifier)
        }

        func filter(lane: String?) -> ReportFilter {
            ReportFilter(site: site.id, lane: lane, camera: nil, timeZone: plan.timeZone.identifier)
        }
    }

    /// The topology's sites (`--site`: that one), each with its shift plan in its own zone (as
    /// `scanadmin report --site` resolves it) unless `--time-zone` names one.
    private static func sites(_ database: PGConnection, _ settings: DashboardSettings) throws -> [SiteShift] {
        var sites = try SiteStore(connection: database).topology().sites
        if let only = settings.site {
            sites = sites.filter { $0.id == only }
            if sites.isEmpty { sites = [Topology.Site(id: only)] }
        }
        let fixedZone = try settings.timeZone.map { try PeriodOptions.zone(named: $0) }
        return try sites.sorted { $0.id < $1.id }.map { site in
            let plan = try PeriodOptions.plan(
                spec: settings.shiftSpec, zone: fixedZone ?? PeriodOptions.siteZone(site.timeZone))
            return SiteShift(site: site, plan: plan, shift: try? plan.resolve(.current, now: settings.now).first)
        }
    }

    func site(_ id: String) -> SiteShift? { sites.first { $0.site.id == id } }

    // MARK: now

    /// Per site: the current shift's tiles, its lanes, its recent packs and its cameras.
    func now() throws -> HTMLText {
        if sites.isEmpty {
            return
                "<section><p>No site yet: load a topology (<code>scanadmin topology load FILE</code>) or start agents.</p></section>"
        }
        var out: HTMLText = ""
        for site in sites {
            out += "<section class=\"site\" data-scope=\"site:\(site.site.id)\">"
            out += "<h2>Site \(site.site.id) · \(shiftTitle(site))</h2>"
            guard let shift = site.shift else {
                out += "<p class=\"muted\">No shift is running now.</p></section>"
                continue
            }
            let figures = try ShiftFigures.load(database, period: shift, filter: site.filter(lane: nil))
            out += tiles(figures, packs: true)
            out += deadLetterWarnings(figures.deadLetters)
            var lanes = site.site.lanes.map(\.id)
            for lane in figures.lanes where lane.site == site.site.id && !lanes.contains(lane.lane) {
                lanes.append(lane.lane)
            }
            if !lanes.isEmpty {
                out += "<h3>Lanes</h3><table class=\"lanes\"><thead><tr><th>lane</th>"
                out += header(["item passes", "sightings", "read rate", "no-reads", "rejects"], numeric: true)
                out += "</tr></thead><tbody>"
                // The report's lane table: one grouped query for every lane of the site.
                for lane in lanes {
                    let counts =
                        figures.lanes.first { $0.site == site.site.id && $0.lane == lane }
                        ?? ReportStore.Figures.LaneCounts(site: site.site.id, lane: lane, sightings: 0, noReads: 0)
                    out += "<tr data-scope=\"lane:\(site.site.id)/\(lane)\">"
                    out += "<td><a href=\"\(lanePath(site.site.id, lane))\">\(lane)</a></td>"
                    out += figureCell("itemPasses", counts.itemPasses)
                    out += figureCell("sightings", counts.sightings)
                    out += rateCell(counts.sightings, counts.noReads)
                    out += figureCell("noReads", counts.noReads)
                    out += figureCell("rejected", counts.rejected)
                    out += "</tr>"
                }
                out += "</tbody></table>"
            }
            if let scope = site.scope() {
                out += packsTable(try DashboardStore(connection: database).packs(scope, limit: 12), plan: site.plan)
            }
            out += camerasTable(try CameraStore(connection: database).cameras(site: site.site.id))
            out += "</section>"
        }
        return out
    }

    /// One warning a camera and reason whose messages the aggregator refused this shift (as the
    /// report's): their events are not counted anywhere on this page.
    private func deadLetterWarnings(_ counts: [DeadLetterStore.Count]) -> HTMLText {
        var out: HTMLText = ""
        for count in counts {
            let who: HTMLText = count.camera.map { "camera \($0)" } ?? "no camera"
            out += "<p class=\"dead-letters\" data-scope=\"deadletters:\(count.camera ?? "")\">"
            out += "<span class=\"alert\">\(count.count) message(s) of \(who) dead-lettered: \(count.reason)</span> "
            out += "latest: \(String(count.latestDetail.prefix(200))) (<code>scanadmin deadletters</code>)</p>"
        }
        return out
    }

    private func shiftTitle(_ site: SiteShift) -> HTMLText {
        guard let shift = site.shift else { return "no shift running" }
        return "shift \(shift.label) \(site.plan.localTime(shift.start)) – "
            + "\(site.plan.localTime(shift.end))"
    }

    private func tiles(_ f: ShiftFigures, packs: Bool) -> HTMLText {
        var out: HTMLText = "<div class=\"tiles\">"
        func tile(_ name: String, _ label: String, _ value: Int) {
            out +=
                "<div class=\"tile\"><b data-figure=\"\(name)\" data-value=\"\(value)\">\(value)</b><span>\(label)</span></div>"
        }
        tile("itemPasses", "item passes", f.itemPasses)
        tile("sightings", "sightings", f.sightings)
        let rate = ReportStore.Figures.readRate(decoded: f.sightings, noReads: f.noReads)
        out +=
            "<div class=\"tile\"><b data-figure=\"readRate\" data-value=\"\(rate.map { String(format: "%.4f", $0) } ?? "")\""
        out +=
            " class=\"\(rateClass(rate))\">\(ShiftFigures.percent(f.sightings, f.noReads))</b><span>read rate</span></div>"
        tile("noReads", "no-reads", f.noReads)
        tile("rejected", "rejects", f.rejected)
        if f.parcels.parcels > 0 || f.decisions.pass + f.decisions.divert > 0 {
            tile("parcels", "parcels", f.parcels.parcels)
            tile("parcels.complete", "parcels complete", f.parcels.complete)
            tile("parcels.noRead", "no-read parcels", f.parcels.noRead)
            tile("decisions.divert", "diverted", f.decisions.divert)
            tile("decisions.late", "late decisions", f.decisions.late)
        }
        if packs {
            tile("packs.complete", "packs complete", ShiftFigures.packCount(f, .complete))
            tile("packs.short", "packs short", ShiftFigures.packCount(f, .short))
            tile("packs.over", "packs over", ShiftFigures.packCount(f, .over))
            tile("packs.unexpected", "unexpected items", ShiftFigures.packCount(f, .unexpected))
            tile("packs.unknownOrder", "unknown order", ShiftFigures.packCount(f, .unknownOrder))
        }
        return out + "</div>"
    }

    /// Green from 99 %, amber from 95 %, red below: a lane that reads less than 95 % of its labels
    /// needs someone now.
    private func rateClass(_ rate: Double?) -> String {
        guard let rate else { return "muted" }
        return rate >= 0.99 ? "rate-good" : rate >= 0.95 ? "rate-fair" : "rate-poor"
    }

    private func header(_ names: [String], numeric: Bool) -> HTMLText {
        names.map { "<th\(numeric ? " class=\"n\"" : "")>\($0)</th>" }.joined()
    }

    private func figureCell(_ name: String, _ value: Int) -> HTMLText {
        "<td class=\"n\" data-figure=\"\(name)\" data-value=\"\(value)\">\(value)</td>"
    }

    private func rateCell(_ decoded: Int, _ noReads: Int) -> HTMLText {
        let rate = ReportStore.Figures.readRate(decoded: decoded, noReads: noReads)
        return
            "<td class=\"n \(rateClass(rate))\" data-figure=\"readRate\" data-value=\"\(rate.map { String(format: "%.4f", $0) } ?? "")\">"
            + "\(ShiftFigures.percent(decoded, noReads))</td>"
    }

    private func lanePath(_ site: String, _ lane: String) -> String {
        "/lanes/\(HTML.segment(site))/\(HTML.segment(lane))"
    }

    private func packsTable(_ packs: [DashboardStore.Pack], plan: ShiftPlan) -> HTMLText {
        var out: HTMLText = "<h3>Packs this shift</h3>"
        if packs.isEmpty { return out + "<p class=\"muted\">No pack completed yet.</p>" }
        out += "<table class=\"packs\"><thead><tr><th>completed</th><th>station</th><th>order</th><th>verdict</th>"
        out += "<th class=\"n\">items</th></tr></thead><tbody>"
        for pack in packs {
            out +=
                "<tr data-pack=\"\(pack.sessionId)\"><td>\(localTime(pack.completedAt, plan))</td>"
            out += "<td>\(pack.station)</td>"
            out +=
                "<td><a href=\"/packs/\(HTML.segment(pack.sessionId))\">\(pack.orderId ?? "(no order)")</a></td>"
            out += "<td class=\"verdict-\(pack.verdict.rawValue)\">\(pack.verdict.rawValue)</td>"
            out += "<td class=\"n\">\(pack.items)</td></tr>"
        }
        return out + "</tbody></table>"
    }

    private func localTime(_ utc: String, _ plan: ShiftPlan) -> String {
        Timestamp(rfc3339: utc).map { plan.localTime(Date(timeIntervalSince1970: Double($0.milliseconds) / 1000)) }
            ?? utc
    }

    /// The source states an agent reports (`source.state` of its heartbeat); anything else a
    /// camera sends shows as "unknown".
    static let sourceStates = Set(SourceStatus.allCases.map(\.rawValue) + ["paused"])

    /// streaming, paused, starting, reconnecting or ended while heard; ended too when the last
    /// heartbeat said so (a clip played to its end, an agent stopped), however long ago; silent
    /// when not heard for `silentAfter` seconds otherwise; never heard; unknown for a state
    /// outside that list (as `scanadmin cameras`).
    func state(_ camera: CameraStore.Camera) -> String {
        guard let ago = secondsAgo(camera) else { return "never heard" }
        if Double(ago) > settings.silentAfter {
            return camera.saidItEnded ? SourceStatus.ended.rawValue : "silent"
        }
        if camera.paused { return "paused" }
        return camera.sourceState.map { Self.sourceStates.contains($0) ? $0 : "unknown" } ?? "streaming"
    }

    /// Seconds since the camera's last heartbeat, at the dashboard's time (a fixed `--now` too).
    func secondsAgo(_ camera: CameraStore.Camera) -> Int? {
        guard let fixed = settings.fixedNow else { return camera.secondsAgo }
        return camera.lastSeen.flatMap(Timestamp.init(rfc3339:)).map {
            Int((fixed.timeIntervalSince1970 - Double($0.milliseconds) / 1000).rounded())
        }
    }

    private func camerasTable(_ cameras: [CameraStore.Camera]) -> HTMLText {
        var out: HTMLText = "<h3>Cameras</h3>"
        if cameras.isEmpty { return out + "<p class=\"muted\">No camera known.</p>" }
        out += "<table class=\"cameras\"><thead><tr><th>camera</th><th>place</th><th>state</th>"
        out += header(["heard s ago", "fps", "frames dropped", "live tracks", "spool"], numeric: true)
        out += "<th>nats</th></tr></thead><tbody>"
        for camera in cameras {
            let place = [
                camera.lane.isEmpty ? "" : "lane \(camera.lane)",
                camera.station.isEmpty ? "" : "station \(camera.station)",
            ].filter { !$0.isEmpty }.joined(separator: " ")
            let state = state(camera)
            out += "<tr data-camera=\"\(camera.camera)\">"
            out += "<td><a href=\"/cameras/\(HTML.segment(camera.camera))\">\(camera.camera)</a></td>"
            out += "<td>\(place)</td>"
            out += "<td class=\"state-\(state.replacingOccurrences(of: " ", with: "-"))\" data-state>\(state)</td>"
            out += "<td class=\"n\">\(secondsAgo(camera).map(String.init) ?? "-")</td>"
            out += "<td class=\"n\">\(camera.fps ?? "-")</td>"
            out += "<td class=\"n\">\(camera.framesDropped ?? "-")</td>"
            out += "<td class=\"n\">\(camera.liveTracks ?? "-")</td>"
            out += "<td class=\"n\">\(camera.spoolDepth ?? "-")</td>"
            out += "<td>\(camera.nats ?? "-")</td></tr>"
        }
        return out + "</tbody></table>"
    }

    // MARK: trends

    /// The current shift and those before it, oldest first.
    func trendShifts(_ site: SiteShift) -> [ShiftPlan.Instance] {
        guard let current = site.shift else { return [] }
        var shifts = [current]
        while shifts.count < max(1, settings.trendShifts),
            let previous = try? site.plan.resolve(.previous, now: shifts[0].start).first
        {
            shifts.insert(previous, at: 0)
        }
        return shifts
    }

    /// The trend's period: from the start of its first shift to the end of the current one.
    func trendScope(_ site: SiteShift, lane: String? = nil) -> (shifts: [ShiftPlan.Instance], scope: ReportStore.Scope)?
    {
        let shifts = trendShifts(site)
        guard let first = shifts.first, let last = shifts.last,
            let scope = site.scope(
                lane: lane,
                period: ShiftPlan.Instance(name: "trend", date: first.date, start: first.start, end: last.end))
        else { return nil }
        return (shifts, scope)
    }

    /// One chart for a lane over the trend's shifts (`known`: its hours when loaded already).
    func chart(_ site: SiteShift, lane: String, hours known: [ReportStore.Figures.Hour]? = nil) throws -> HTMLText {
        guard let (shifts, scope) = trendScope(site, lane: lane), let first = shifts.first, let last = shifts.last
        else { return "" }
        var figures: TrendChart.Figures = [:]
        for hour in try known ?? ReportStore(connection: database).hourly(scope) {
            figures[hour.hour] = (hour.itemPasses, hour.decoded, hour.noReads)
        }
        return TrendChart(shifts: shifts, zone: site.plan.timeZone, figures: figures).svg(
            title:
                "Lane \(site.site.id)/\(lane): item passes and read rate an hour, shifts \(first.label) to \(last.label)"
        )
    }

    /// Every lane's chart, per site.
    func trends() throws -> HTMLText {
        var out: HTMLText = ""
        for site in sites {
            guard let (_, scope) = trendScope(site) else { continue }
            // Every lane's hours in three grouped queries, not three a lane.
            let hours = try ReportStore(connection: database).hourlyByLane(scope)
            let lanes =
                site.site.lanes.map(\.id)
                + hours.keys.sorted().filter { lane in !site.site.lanes.contains { $0.id == lane } }
            guard !lanes.isEmpty else { continue }
            out += "<section class=\"trends\"><h2>Trends · site \(site.site.id)</h2>"
            for lane in lanes {
                out += "<h3><a href=\"\(lanePath(site.site.id, lane))\">Lane \(lane)</a></h3>"
                out += try chart(site, lane: lane, hours: hours[lane] ?? [])
            }
            out += "</section>"
        }
        return out
    }

    // MARK: drill-down

    /// A lane's figures this shift and its recent no-reads with their pictures (nil: no such site).
    func lane(site id: String, lane: String) throws -> HTMLText? {
        guard let site = site(id) else { return nil }
        var out: HTMLText = "<section data-scope=\"lane:\(id)/\(lane)\">"
        out += "<h2>Lane \(lane) · site \(id) · \(shiftTitle(site))</h2>"
        if let shift = site.shift {
            let figures = try ShiftFigures.load(database, period: shift, filter: site.filter(lane: lane))
            out += tiles(figures, packs: false)
            // Why each camera's no-reads were not read this shift: "too-small" says zoom.
            if !figures.noReadReasons.isEmpty {
                out += "<table class=\"reasons\"><thead><tr><th>camera</th><th>no-read reason</th>"
                out += "<th class=\"num\">no-reads</th></tr></thead><tbody>"
                for count in figures.noReadReasons {
                    out += "<tr data-reason=\"\(count.camera)/\(count.reason)\"><td>\(count.camera)</td>"
                    out += "<td>\(count.reason)</td><td class=\"num\">\(count.count)</td></tr>"
                }
                out += "</tbody></table>"
            }
        }
        out += "</section><section><h2>Recent no-reads</h2>"
        let shifts = trendShifts(site)
        guard let first = shifts.first, let last = shifts.last,
            let scope = site.scope(
                lane: lane,
                period: ShiftPlan.Instance(name: "recent", date: first.date, start: first.start, end: last.end))
        else { return out + "<p class=\"muted\">No shift is running now.</p></section>" }
        let noReads = try NoReadStore(connection: database).list(scope, limit: 60, newestFirst: true)
        if noReads.isEmpty { out += "<p class=\"muted\">None in the last \(shifts.count) shift(s).</p>" }
        out += "<div class=\"noreads\">"
        for noRead in noReads {
            out += "<figure data-noread=\"\(noRead.id)\">" + Self.picture(noRead)
            out += "<figcaption>\(localTime(noRead.firstSeen, site.plan)) · \(noRead.camera)"
            out += " · \(noRead.family ?? "unknown") · \(noRead.frames) frames"
            if let reason = noRead.reason { out += " · \(reason)" }
            if let size = noRead.pixelsPerModule { out += " · \(size) px/module" }
            if let item = noRead.itemId { out += " · item \(item)" } else { out += " · no other camera read it" }
            if let resolution = noRead.resolution {
                out += " · resolved: \(resolution)"
                if let code = noRead.keyedCode { out += " \(code)" }
            }
            out += "</figcaption></figure>"
        }
        return out + "</div></section>"
    }

    /// A no-read's picture (served by `/noreads/ID`), or that it came without one.
    static func picture(_ noRead: NoReadStore.Row) -> HTMLText {
        noRead.imageBytes > 0
            ? "<img src=\"/noreads/\(HTML.segment(noRead.id))\" alt=\"no-read \(noRead.id)\">"
            : "<p class=\"muted\">(no picture)</p>"
    }

    /// The lane page: live figures and no-reads, and the lane's chart.
    func lanePage(site id: String, lane: String) throws -> HTMLText? {
        guard let live = try self.lane(site: id, lane: lane), let site = site(id) else { return nil }
        let fragment = "/fragments/lanes/\(HTML.segment(id))/\(HTML.segment(lane))"
        let desk: HTMLText =
            settings.codingDesk
            ? "<p><a data-link=\"coding\" href=\"/coding/\(HTML.segment(id))/\(HTML.segment(lane))\">Resolve this lane's no-reads at the coding desk</a></p>"
            : ""
        let body: HTMLText =
            "<div id=\"lane\">\(live)</div>\(desk)\(try parcelPictures(site, lane: lane))<section><h2>Trend</h2>\(try chart(site, lane: lane))</section>"
        return HTML.page(title: "Lane \(id)/\(lane)", body: body, live: [("lane", fragment, settings.refreshSeconds)])
    }

    /// The lane's latest parcel pictures in the images bucket (`images.keep`), served by
    /// `/images/…`; none without the live view (the dashboard then reads no NATS).
    func parcelPictures(_ site: SiteShift, lane: String) throws -> HTMLText {
        guard settings.liveView else { return "" }
        let shifts = trendShifts(site)
        guard let first = shifts.first, let last = shifts.last else { return "" }
        let rows = try ImageRows(connection: database).list(
            start: ShiftFigures.timestamp(first.start), end: ShiftFigures.timestamp(last.end), site: site.site.id,
            camera: nil, kind: ImageObject.Kind.parcel.rawValue, lane: lane, limit: 12)
        guard !rows.isEmpty else { return "" }
        var out: HTMLText = "<section><h2>Parcel pictures</h2><div class=\"noreads\">"
        for row in rows {
            let path = row.object.split(separator: "/").map { HTML.segment(String($0)) }.joined(separator: "/")
            out += "<figure data-image=\"\(row.object)\"><img src=\"/images/\(path)\" alt=\"parcel \(row.eventId)\">"
            out +=
                "<figcaption>\(localTime(row.time, site.plan)) · \(row.camera) · \(row.detail.isEmpty ? "no code read" : row.detail)"
            out += "</figcaption></figure>"
        }
        return out + "</div></section>"
    }

    /// A pack's counted lines against its order (nil: no such pack).
    func pack(sessionId: String) throws -> HTMLText? {
        guard let (pack, lines) = try DashboardStore(connection: database).pack(sessionId: sessionId) else {
            return nil
        }
        let plan =
            try site(pack.site)?.plan
            ?? PeriodOptions.plan(database, spec: settings.shiftSpec, timeZone: settings.timeZone, site: pack.site)
        var out: HTMLText =
            "<section data-scope=\"pack:\(pack.sessionId)\"><h2>Pack \(pack.sessionId)</h2><p>Order <b>\(pack.orderId ?? "(none)")</b>"
        out += " · station \(pack.station) (camera \(pack.camera))"
        out += " · completed \(localTime(pack.completedAt, plan))"
        out +=
            " · verdict <b class=\"verdict-\(pack.verdict.rawValue)\" data-figure=\"verdict\">\(pack.verdict.rawValue)</b></p>"
        out += "<table><thead><tr><th class=\"n\">line</th><th>code</th>"
        out += header(["expected", "counted"], numeric: true) + "<th>verdict</th></tr></thead><tbody>"
        for line in lines {
            out +=
                "<tr data-line><td class=\"n\">\(line.line.map(String.init) ?? "-")</td><td><code>\(line.code)</code></td>"
            out += "<td class=\"n\">\(line.expected)</td><td class=\"n\">\(line.counted)</td>"
            out += "<td class=\"verdict-\(line.verdict)\">\(line.verdict)</td></tr>"
        }
        return HTML.page(title: "Pack \(pack.sessionId)", body: out + "</tbody></table></section>")
    }

    /// A camera's last heartbeats (nil: no such camera).
    func camera(_ id: String) throws -> HTMLText? {
        guard let camera = try CameraStore(connection: database).cameras(site: nil).first(where: { $0.camera == id })
        else { return nil }
        let beats = try DashboardStore(connection: database).heartbeats(camera: id, limit: 60)
        var out: HTMLText =
            "<section data-scope=\"camera:\(id)\"><h2>Camera \(id) · site \(camera.site)</h2>"
        out +=
            "<p>State <b class=\"state-\(state(camera).replacingOccurrences(of: " ", with: "-"))\" data-figure=\"state\">\(state(camera))</b>"
        out +=
            " · <span data-figure=\"heartbeats\" data-value=\"\(beats.count)\">\(beats.count)</span> heartbeat(s) shown"
        if let seen = camera.lastSeen { out += " · last heard \(seen)" }
        if let revision = camera.rulesRevision { out += " · rules \(revision)" }
        if settings.liveView {
            out +=
                " · <a data-link=\"live\" href=\"/cameras/\(HTML.segment(camera.site))/\(HTML.segment(id))/live\">live view</a>"
        }
        out += "</p><h3>Last heartbeats</h3><table><thead><tr><th>time (UTC)</th><th>source</th>"
        out += header(["fps in", "fps processed", "frames dropped", "live tracks", "spool"], numeric: true)
        out += "<th>nats</th></tr></thead><tbody>"
        for beat in beats {
            // The run id is not shown: event ids are made from it, and they must not be guessable.
            out += "<tr><td>\(beat.time)</td>"
            let source = beat.sourceState.map { Self.sourceStates.contains($0) ? $0 : "unknown" } ?? "-"
            out += "<td>\(beat.paused ? "paused" : source)</td>"
            for value in [beat.fpsIn, beat.fpsProcessed] { out += "<td class=\"n\">\(value ?? "-")</td>" }
            for value in [beat.framesDropped, beat.liveTracks, beat.spoolDepth] {
                out += "<td class=\"n\">\(value.map(String.init) ?? "-")</td>"
            }
            out += "<td>\(beat.nats ?? "-")</td></tr>"
        }
        if beats.isEmpty { out += "<tr><td colspan=\"8\" class=\"muted\">No heartbeat stored.</td></tr>" }
        return HTML.page(title: "Camera \(id)", body: out + "</tbody></table></section>")
    }
}
