import Foundation
import Logging
import ScanCore
import ScanReconciliation
import ScanNATS
import ScanPostgres

/// What one reconciliation round did.
public struct ReconcileCounts: Sendable, Equatable {
    public var sightings = 0
    public var passesOpened = 0
    public var passesClosed = 0
    public var lateSightings = 0
    public var packs = 0
    public var itemsPublished = 0
    public var packsPublished = 0
    /// False when another replica held the reconciliation lock this round.
    public var leader = false
}

/// The aggregator's second loop: stored sightings become item passes, completed pack-station
/// sessions become pack records, and both are published for the WMS. State lives in PostgreSQL
/// only, and one replica at a time does the work (a transaction-scoped advisory lock), so
/// replicas and restarts see the same passes; what was closed but not yet acknowledged by
/// JetStream is published again (deduplicated by message id).
/// Blocking (cnats and libpq): run it on a thread of its own.
public final class Reconciler: @unchecked Sendable {
    // @unchecked: handed to the one thread that runs it and used only there.
    public let settings: IngestSettings
    private let logger: Logger
    private let jetStream: JetStream
    private let database: PGReconnecting
    private var publishFailing = false
    public var batchSize = 2_000
    /// Closed passes stay candidates for late sightings this long (wall time).
    public var lateMinutes = 10
    public private(set) var totals = ReconcileCounts()

    static let lockKey = 0x5CA7_0001

    public init(settings: IngestSettings, logger: Logger) throws {
        self.settings = settings
        self.logger = logger
        database = PGReconnecting(dsn: settings.postgresDSN)
        var options = NATSConnection.Options()
        options.name = "scan-aggregator reconciler"
        jetStream = try NATSConnection(url: settings.natsURL, options: options).jetStream()
        try jetStream.ensureStream(settings.subjects.resultsStreamSpec(replicas: settings.replicas))
    }

    /// One round. A lost PostgreSQL connection is reported as an error; the caller retries.
    @discardableResult
    public func runOnce() throws(PGError) -> ReconcileCounts {
        let db: PGConnection
        do {
            db = try database.connection()
        } catch {
            database.reset()
            throw error
        }
        do {
            let counts = try db.transaction { () throws(PGError) -> ReconcileCounts in
                var counts = ReconcileCounts()
                guard try db.query("SELECT pg_try_advisory_xact_lock($1)", [.int(Self.lockKey)]).rows.first?[0] == "t"
                else {
                    return counts
                }
                counts.leader = true
                let topology = try SiteStore(connection: db).topology()
                try reconcile(db, topology: topology, counts: &counts)
                try pack(db, counts: &counts)
                try publish(db, counts: &counts)
                return counts
            }
            totals.sightings += counts.sightings
            totals.passesOpened += counts.passesOpened
            totals.passesClosed += counts.passesClosed
            totals.lateSightings += counts.lateSightings
            totals.packs += counts.packs
            totals.itemsPublished += counts.itemsPublished
            totals.packsPublished += counts.packsPublished
            return counts
        } catch {
            if !db.isHealthy { database.reset() }
            throw error
        }
    }

    // MARK: item passes

    private func reconcile(_ db: PGConnection, topology: Topology, counts: inout ReconcileCounts) throws(PGError) {
        let rows = try db.query(
            """
            SELECT event_id, site, camera, track_id, symbology, value, value_encoding, status,
                   (extract(epoch FROM first_seen) * 1000)::bigint, (extract(epoch FROM last_seen) * 1000)::bigint
            FROM sightings WHERE NOT reconciled ORDER BY first_seen, event_id LIMIT $1
            """, [.int(batchSize)]
        ).rows
        var done: [String] = []
        var placed: [(sighting: LaneSighting, lane: Topology.Lane)] = []
        for row in rows {
            let eventId = row[0] ?? ""
            done.append(eventId)
            guard row[7] == "accepted", let site = row[1], let camera = row[2],
                let lane = topology.lane(site: site, camera: camera)
            else {
                continue
            }
            let member = PassMember(
                eventId: eventId, camera: camera, trackId: row[3] ?? "",
                firstSeen: Timestamp(milliseconds: Int64(row[8] ?? "") ?? 0),
                lastSeen: Timestamp(milliseconds: Int64(row[9] ?? "") ?? 0))
            placed.append(
                (
                    LaneSighting(
                        site: site, symbology: row[4] ?? "", value: row[5] ?? "", valueEncoding: row[6] ?? "text",
                        member: member), lane
                ))
        }
        counts.sightings = done.count

        // The passes these sightings may join, and every open pass (they may be due).
        var passes = try loadPasses(db, values: Array(Set(placed.map(\.sighting.value))))
        var touched: Set<Int> = []
        var newMembers: [(index: Int, member: PassMember, late: Bool)] = []
        var watermarks: [String: Timestamp] = [:]
        for (sighting, lane) in placed {
            let key = sighting.site + "\u{0}" + lane.id
            watermarks[key] = max(watermarks[key] ?? sighting.member.firstSeen, sighting.member.firstSeen)
            switch Reconciliation.place(
                sighting, lane: lane, passes: &passes.list, newId: { UUID().uuidString.lowercased() })
            {
            case .opened(let index):
                counts.passesOpened += 1
                touched.insert(index)
                newMembers.append((index, sighting.member, false))
            case .joined(let index):
                touched.insert(index)
                newMembers.append((index, sighting.member, false))
            case .late(let index):
                counts.lateSightings += 1
                touched.insert(index)
                newMembers.append((index, sighting.member, true))
            case .known:
                break
            }
        }
        // Watermarks: the latest sighting time per lane, kept across rounds.
        for (key, time) in watermarks {
            let parts = key.split(separator: "\u{0}", omittingEmptySubsequences: false).map(String.init)
            try db.query(
                """
                INSERT INTO lane_watermarks (site, lane, watermark) VALUES ($1, $2, $3)
                ON CONFLICT (site, lane) DO UPDATE SET watermark = greatest(lane_watermarks.watermark, EXCLUDED.watermark)
                """, [.text(parts[0]), .text(parts[1]), .text(time.description)])
        }
        let stored = try db.query(
            "SELECT site, lane, (extract(epoch FROM watermark) * 1000)::bigint FROM lane_watermarks"
        ).rows
        var laneWatermark: [String: Timestamp] = [:]
        for row in stored {
            laneWatermark[(row[0] ?? "") + "\u{0}" + (row[1] ?? "")] = Timestamp(milliseconds: Int64(row[2] ?? "") ?? 0)
        }

        // Close what is due: by event time, or (a lane gone quiet) when nothing joined for as
        // long as the lane's whole window in wall time.
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        for index in passes.list.indices where !passes.list[index].closed {
            let pass = passes.list[index]
            guard let lane = topology.lane(site: pass.site, id: pass.lane) else { continue }
            let watermark = laneWatermark[pass.site + "\u{0}" + pass.lane] ?? Timestamp(milliseconds: 0)
            let quiet =
                !touched.contains(index)
                && now - (passes.updatedAt[pass.itemId] ?? now) > lane.span + lane.windowMilliseconds
                    + lane.graceMilliseconds
            if Reconciliation.isDue(pass, lane: lane, watermark: watermark) || quiet {
                passes.list[index].closed = true
                passes.list[index].revision = 1
                touched.insert(index)
                counts.passesClosed += 1
            }
        }
        try savePasses(db, passes.list, touched: touched, topology: topology)
        try insertMembers(db, newMembers.map { (passes.list[$0.index].itemId, $0.member, $0.late) })
        if !done.isEmpty {
            try db.query(
                "UPDATE sightings SET reconciled = true WHERE event_id = ANY($1::text[])",
                [.text(SiteStore.arrayLiteral(done))])
        }
    }

    private struct LoadedPasses {
        var list: [ItemPass] = []
        var updatedAt: [String: Int64] = [:]
    }

    private func loadPasses(_ db: PGConnection, values: [String]) throws(PGError) -> LoadedPasses {
        let rows = try db.query(
            """
            SELECT item_id, site, lane, symbology, value, value_encoding, closed_at IS NOT NULL, revision,
                   (extract(epoch FROM updated_at) * 1000)::bigint
            FROM item_passes
            WHERE closed_at IS NULL
               OR (value = ANY($1::text[]) AND updated_at > now() - make_interval(mins => $2))
            """, [.text(SiteStore.arrayLiteral(values)), .int(lateMinutes)]
        ).rows
        var loaded = LoadedPasses()
        for row in rows {
            var pass = ItemPass(
                itemId: row[0] ?? "", site: row[1] ?? "", lane: row[2] ?? "", symbology: row[3] ?? "",
                value: row[4] ?? "",
                valueEncoding: row[5] ?? "text")
            pass.closed = row[6] == "t"
            pass.revision = Int(row[7] ?? "") ?? 0
            loaded.updatedAt[pass.itemId] = Int64(row[8] ?? "") ?? 0
            loaded.list.append(pass)
        }
        guard !loaded.list.isEmpty else { return loaded }
        let members = try db.query(
            """
            SELECT item_id, event_id, camera, track_id, (extract(epoch FROM first_seen) * 1000)::bigint,
                   (extract(epoch FROM last_seen) * 1000)::bigint
            FROM item_sightings WHERE item_id = ANY($1::text[]) ORDER BY first_seen
            """, [.text(SiteStore.arrayLiteral(loaded.list.map(\.itemId)))]
        ).rows
        var index: [String: Int] = [:]
        for (i, pass) in loaded.list.enumerated() { index[pass.itemId] = i }
        for row in members {
            guard let i = index[row[0] ?? ""] else { continue }
            loaded.list[i].members.append(
                PassMember(
                    eventId: row[1] ?? "", camera: row[2] ?? "", trackId: row[3] ?? "",
                    firstSeen: Timestamp(milliseconds: Int64(row[4] ?? "") ?? 0),
                    lastSeen: Timestamp(milliseconds: Int64(row[5] ?? "") ?? 0)))
        }
        return loaded
    }

    private func savePasses(_ db: PGConnection, _ passes: [ItemPass], touched: Set<Int>, topology: Topology)
        throws(PGError)
    {
        let rows: [[PGValue]] = touched.sorted().map { index in
            let pass = passes[index]
            let lane = topology.lane(site: pass.site, id: pass.lane)
            let missing = lane.map { pass.missing(on: $0) } ?? []
            return [
                .text(pass.itemId), .text(pass.site), .text(pass.lane), .text(pass.symbology), .text(pass.value),
                .text(pass.valueEncoding),
                .text(pass.firstSeen.description), .text(pass.lastSeen.description), .int(lane?.cameras.count ?? 0),
                .int(Set(pass.members.map(\.camera)).count), .text(SiteStore.arrayLiteral(missing)),
                .int(pass.revision),
                .text(pass.closed ? "true" : "false"),
            ]
        }
        try insertRows(
            db, rows: rows,
            prefix: """
                INSERT INTO item_passes (item_id, site, lane, symbology, value, value_encoding, first_seen, last_seen,
                                         cameras_expected, cameras_seen, missing, revision, closed_at) VALUES
                """,
            row: {
                "($\($0 + 1),$\($0 + 2),$\($0 + 3),$\($0 + 4),$\($0 + 5),$\($0 + 6),$\($0 + 7)::timestamptz,$\($0 + 8)::timestamptz,$\($0 + 9)::int,$\($0 + 10)::int,$\($0 + 11)::text[],$\($0 + 12)::int,CASE WHEN $\($0 + 13)::boolean THEN now() END)"
            },
            suffix: """
                 ON CONFLICT (item_id) DO UPDATE SET first_seen = EXCLUDED.first_seen, last_seen = EXCLUDED.last_seen,
                   cameras_seen = EXCLUDED.cameras_seen, missing = EXCLUDED.missing, revision = EXCLUDED.revision,
                   closed_at = coalesce(item_passes.closed_at, EXCLUDED.closed_at), updated_at = now()
                """)
    }

    private func insertMembers(_ db: PGConnection, _ members: [(itemId: String, member: PassMember, late: Bool)])
        throws(PGError)
    {
        let rows: [[PGValue]] = members.map { item in
            [
                .text(item.member.eventId), .text(item.itemId), .text(item.member.camera), .text(item.member.trackId),
                .text(item.member.firstSeen.description), .text(item.member.lastSeen.description),
                .text(item.late ? "true" : "false"),
            ]
        }
        try insertRows(
            db, rows: rows,
            prefix:
                "INSERT INTO item_sightings (event_id, item_id, camera, track_id, first_seen, last_seen, late) VALUES ",
            row: { "($\($0 + 1),$\($0 + 2),$\($0 + 3),$\($0 + 4),$\($0 + 5),$\($0 + 6),$\($0 + 7))" },
            suffix: " ON CONFLICT (event_id) DO NOTHING")
    }

    /// Multi-row INSERT in chunks that stay under PostgreSQL's 65,535 parameters.
    private func insertRows(
        _ db: PGConnection, rows: [[PGValue]], prefix: String, row: (Int) -> String, suffix: String
    ) throws(PGError) {
        guard let width = rows.first?.count else { return }
        let perChunk = 60_000 / width
        var start = 0
        while start < rows.count {
            let chunk = rows[start..<min(rows.count, start + perChunk)]
            let values = (0..<chunk.count).map { row($0 * width) }.joined(separator: ",")
            try db.query(prefix + values + suffix, chunk.flatMap { $0 })
            start += perChunk
        }
    }

    // MARK: pack records

    private func pack(_ db: PGConnection, counts: inout ReconcileCounts) throws(PGError) {
        let rows = try db.query(
            """
            SELECT event_id, session_id, site, camera, body::text FROM session_events
            WHERE type = 'session.completed' AND NOT packed ORDER BY event_time LIMIT 200
            """
        ).rows
        let sites = SiteStore(connection: db)
        for row in rows {
            let eventId = row[0] ?? ""
            try db.query("UPDATE session_events SET packed = true WHERE event_id = $1", [.text(eventId)])
            guard let body = try? JSONValue.parse(row[4] ?? ""), let station = body["station"]?.stringValue else {
                continue
            }
            let codes = Self.countedCodes(body["codes"])
            let sessionOrder = body["orderId"]?.stringValue
            let orderId = sessionOrder ?? codes.first { $0.role == "order" }?.value
            let lines = try orderId.map { id throws(PGError) in try sites.orderLines(id) } ?? nil
            let result = PackEvaluation.evaluate(sessionOrderId: sessionOrder, codes: codes) { _ in lines }
            let sessionId = row[1] ?? ""
            let started = body["startedAt"]?.stringValue ?? body["time"]?.stringValue ?? ""
            let completed = body["time"]?.stringValue ?? started
            let items = result.lines.reduce(0) { $0 + $1.counted }
            let record: [PGValue] = [
                .text(sessionId), .text(row[2] ?? ""), .text(station), .text(row[3] ?? ""),
                .optionalText(result.orderId),
                .text(result.verdict.rawValue), .text(started), .text(completed), .int(items),
            ]
            let inserted = try db.query(
                """
                INSERT INTO pack_records (session_id, site, station, camera, order_id, verdict, started_at, completed_at, items)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (session_id) DO NOTHING
                """, record
            ).affected
            guard inserted == 1 else { continue }
            counts.packs += 1
            for (position, line) in result.lines.enumerated() {
                let lineNumber: PGValue = line.line.map { PGValue.int($0) } ?? .null
                let values: [PGValue] = [
                    .text(sessionId), .int(position), lineNumber, .text(line.code), .optionalText(line.symbology),
                    .int(line.expected),
                    .int(line.counted), .text(line.verdict.rawValue),
                ]
                try db.query(
                    """
                    INSERT INTO pack_lines (session_id, position, line, code, symbology, expected, counted, verdict)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                    """, values)
            }
        }
    }

    static func countedCodes(_ value: JSONValue?) -> [CountedCode] {
        guard case .array(let items)? = value else { return [] }
        return items.compactMap { item in
            guard let code = item["value"]?.stringValue else { return nil }
            return CountedCode(
                value: code, symbology: item["symbology"]?.stringValue ?? "", count: item["count"]?.intValue ?? 1,
                role: item["role"]?.stringValue)
        }
    }

    // MARK: publishing

    private func publish(_ db: PGConnection, counts: inout ReconcileCounts) throws(PGError) {
        let passes = try db.query(
            """
            SELECT p.item_id, p.site, p.lane, p.symbology, p.value, p.value_encoding, p.revision, p.cameras_expected,
                   array_to_json(p.missing)::text,
                   to_char(p.first_seen AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                   to_char(p.last_seen AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                   (SELECT json_agg(json_build_object('camera', s.camera, 'trackId', s.track_id, 'eventId', s.event_id,
                        'firstSeen', to_char(s.first_seen AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                        'lastSeen', to_char(s.last_seen AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                        'late', s.late) ORDER BY s.first_seen)::text FROM item_sightings s WHERE s.item_id = p.item_id)
            FROM item_passes p WHERE p.published_revision < p.revision ORDER BY p.closed_at LIMIT 500
            """
        ).rows
        for row in passes {
            let itemId = row[0] ?? ""
            let revision = Int(row[6] ?? "") ?? 1
            var writer = JSONWriter()
            writer.field("type", "item")
            writer.field("eventId", "\(itemId).r\(revision)")
            writer.field("itemId", itemId)
            writer.field("site", row[1] ?? "")
            writer.field("lane", row[2] ?? "")
            writer.field("time", row[10] ?? "")
            writer.field("symbology", row[3] ?? "")
            writer.field("value", row[4] ?? "")
            if row[5] == "base64" { writer.field("valueEncoding", "base64") }
            writer.field("firstSeen", row[9] ?? "")
            writer.field("lastSeen", row[10] ?? "")
            writer.field("revision", revision)
            writer.field("camerasExpected", Int(row[7] ?? "") ?? 0)
            writer.raw("cameras", Array((row[11] ?? "[]").utf8))
            writer.raw("missing", Array((row[8] ?? "[]").utf8))
            writer.field("complete", row[8] == "[]" || row[8] == nil)
            let subject = settings.subjects.item(site: row[1] ?? "", lane: row[2] ?? "")
            guard send(subject: subject, bytes: writer.finished(), id: "\(itemId).r\(revision)") else { return }
            try db.query(
                "UPDATE item_passes SET published_revision = $2 WHERE item_id = $1", [.text(itemId), .int(revision)])
            counts.itemsPublished += 1
        }
        let packs = try db.query(
            """
            SELECT r.session_id, r.site, r.station, r.camera, r.order_id, r.verdict, r.items,
                   to_char(r.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                   to_char(r.completed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                   (SELECT json_agg(json_strip_nulls(json_build_object('line', l.line, 'code', l.code, 'symbology', l.symbology,
                        'expected', l.expected, 'counted', l.counted, 'verdict', l.verdict)) ORDER BY l.position)::text
                    FROM pack_lines l WHERE l.session_id = r.session_id)
            FROM pack_records r WHERE NOT r.published ORDER BY r.created_at LIMIT 500
            """
        ).rows
        for row in packs {
            let sessionId = row[0] ?? ""
            var writer = JSONWriter()
            writer.field("type", "pack")
            writer.field("eventId", "\(sessionId).pack")
            writer.field("site", row[1] ?? "")
            writer.field("station", row[2] ?? "")
            writer.field("camera", row[3] ?? "")
            writer.field("time", row[8] ?? "")
            writer.field("sessionId", sessionId)
            writer.field("orderId", row[4])
            writer.field("verdict", row[5] ?? "")
            writer.field("items", Int(row[6] ?? "") ?? 0)
            writer.field("startedAt", row[7] ?? "")
            writer.field("completedAt", row[8] ?? "")
            writer.raw("lines", Array((row[9] ?? "[]").utf8))
            let subject = settings.subjects.pack(site: row[1] ?? "", station: row[2] ?? "")
            guard send(subject: subject, bytes: writer.finished(), id: "\(sessionId).pack") else { return }
            try db.query("UPDATE pack_records SET published = true WHERE session_id = $1", [.text(sessionId)])
            counts.packsPublished += 1
        }
    }

    /// Publishes to JetStream; false (and one warning until it works again) when it is away:
    /// the record stays unpublished in PostgreSQL and goes out in a later round.
    private func send(subject: String, bytes: [UInt8], id: String) -> Bool {
        do {
            _ = try jetStream.publish(subject: subject, bytes: bytes, messageID: id)
            if publishFailing {
                publishFailing = false
                logger.info("JetStream acknowledges results again")
            }
            return true
        } catch {
            if !publishFailing {
                publishFailing = true
                logger.warning("results not published; they are kept and sent later", metadata: ["error": "\(error)"])
            }
            return false
        }
    }
}
