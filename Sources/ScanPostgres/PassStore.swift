import ScanCore
import ScanReconciliation
import ScanEvents

/// The reconciler's tables: unreconciled sightings, lane watermarks, item passes and their
/// sightings, pack records and lines, and what is still to be published. Every query of the
/// reconciler is here; rows are read by column name. Call inside the reconciler's transaction.
public struct PassStore {
    public let connection: PGConnection

    public init(connection: PGConnection) { self.connection = connection }

    /// Taken by one replica at a time for its round (released at commit).
    public static let lockKey = 0x5CA7_0001

    /// True when this transaction holds the reconciliation lock.
    public func tryLock() throws(PGError) -> Bool {
        let row = try connection.query("SELECT pg_try_advisory_xact_lock($1) AS locked", [.int(Self.lockKey)])
            .named("reconciliation lock").first
        return try row?.bool("locked") ?? false
    }

    /// Taken by one replica's publisher at a time, between rounds (a session lock: rounds run
    /// beside it, and a publisher's lost connection lets it go).
    public static let publisherLockKey = 0x5CA7_0003

    /// True when this session now holds the publisher's lock (`publisherUnlock` lets it go).
    public func tryPublisherLock() throws(PGError) -> Bool {
        let row = try connection.query("SELECT pg_try_advisory_lock($1) AS locked", [.int(Self.publisherLockKey)])
            .named("publisher lock").first
        return try row?.bool("locked") ?? false
    }

    public func publisherUnlock() throws(PGError) {
        _ = try connection.query("SELECT pg_advisory_unlock($1)", [.int(Self.publisherLockKey)])
    }

    public typealias Unreconciled = UnreconciledSighting

    /// The oldest unreconciled sightings, by first sight.
    public func unreconciled(limit: Int) throws(PGError) -> [Unreconciled] {
        let rows = try connection.query(
            """
            SELECT event_id, site, camera, track_id, symbology, value, value_encoding, status,
                   (extract(epoch FROM first_seen) * 1000)::bigint AS first_seen_ms,
                   (extract(epoch FROM last_seen) * 1000)::bigint AS last_seen_ms
            FROM sightings WHERE NOT reconciled ORDER BY first_seen, event_id LIMIT $1
            """, [.int(limit)]
        ).named("unreconciled sightings")
        var result: [Unreconciled] = []
        for row in rows {
            result.append(
                Unreconciled(
                    eventId: try row.text("event_id"), site: try row.text("site"), camera: try row.text("camera"),
                    trackId: try row.text("track_id"), symbology: try row.text("symbology"),
                    value: try row.text("value"),
                    valueEncoding: try row.text("value_encoding"),
                    accepted: try row.text("status") == SightingStatus.accepted.rawValue,
                    firstSeen: try row.milliseconds("first_seen_ms"), lastSeen: try row.milliseconds("last_seen_ms")))
        }
        return result
    }

    /// Seconds since the oldest unreconciled sighting was first seen; 0 when none waits.
    public func reconciliationLagSeconds() throws(PGError) -> Double {
        let row = try connection.query(
            """
            SELECT coalesce(extract(epoch FROM now() - min(first_seen)), 0)::float8::text AS lag
            FROM sightings WHERE NOT reconciled
            """
        ).named("reconciliation lag").first
        return max(0, Double(try row?.text("lag") ?? "0") ?? 0)
    }

    /// Marks sightings reconciled; the batch's time span narrows the update to its day partitions.
    public func markReconciled(_ sightings: [Unreconciled]) throws(PGError) {
        guard let first = sightings.map(\.firstSeen).min(), let last = sightings.map(\.firstSeen).max() else { return }
        try connection.query(
            """
            UPDATE sightings SET reconciled = true
            WHERE event_id = ANY($1::text[]) AND first_seen >= $2::timestamptz AND first_seen <= $3::timestamptz
            """,
            [
                .text(SiteStore.arrayLiteral(sightings.map(\.eventId))),
                .text(first.adding(milliseconds: -1).description), .text(last.adding(milliseconds: 1).description),
            ])
    }

    public typealias LaneKey = ScanReconciliation.LaneKey

    /// Raises each lane's watermark (the latest sighting time seen) to at least the given time.
    public func raiseWatermarks(_ watermarks: [LaneKey: Timestamp]) throws(PGError) {
        for (lane, time) in watermarks {
            try connection.query(
                """
                INSERT INTO lane_watermarks (site, lane, watermark) VALUES ($1, $2, $3)
                ON CONFLICT (site, lane) DO UPDATE SET watermark = greatest(lane_watermarks.watermark, EXCLUDED.watermark)
                """, [.text(lane.site), .text(lane.lane), .text(time.description)])
        }
    }

    public func watermarks() throws(PGError) -> [LaneKey: Timestamp] {
        var result: [LaneKey: Timestamp] = [:]
        for row in try connection.query(
            "SELECT site, lane, (extract(epoch FROM watermark) * 1000)::bigint AS watermark_ms FROM lane_watermarks"
        ).named("lane watermarks") {
            result[LaneKey(site: try row.text("site"), lane: try row.text("lane"))] = try row.milliseconds(
                "watermark_ms")
        }
        return result
    }

    /// Passes a new sighting may join: every open pass, and the closed ones of these values
    /// changed in the last `lateMinutes` (late sightings); with when each was last changed.
    public func candidatePasses(values: [String], lateMinutes: Int) throws(PGError) -> (
        passes: [ItemPass], updatedAt: [String: Timestamp]
    ) {
        var passes: [ItemPass] = []
        var updatedAt: [String: Timestamp] = [:]
        for row in try connection.query(
            """
            SELECT item_id, site, lane, symbology, value, value_encoding, closed_at IS NOT NULL AS closed, revision,
                   (extract(epoch FROM updated_at) * 1000)::bigint AS updated_ms
            FROM item_passes
            WHERE closed_at IS NULL
               OR (value = ANY($1::text[]) AND updated_at > now() - make_interval(mins => $2))
            ORDER BY item_id
            """, [.text(SiteStore.arrayLiteral(values)), .int(lateMinutes)]
        ).named("item passes") {
            var pass = ItemPass(
                itemId: try row.text("item_id"), site: try row.text("site"), lane: try row.text("lane"),
                symbology: try row.text("symbology"), value: try row.text("value"),
                valueEncoding: try row.text("value_encoding"))
            pass.closed = try row.bool("closed")
            pass.revision = try row.int("revision")
            updatedAt[pass.itemId] = try row.milliseconds("updated_ms")
            passes.append(pass)
        }
        try loadMembers(into: &passes)
        return (passes, updatedAt)
    }

    /// Reads the sightings of `passes` into their members.
    func loadMembers(into passes: inout [ItemPass]) throws(PGError) {
        guard !passes.isEmpty else { return }
        var index: [String: Int] = [:]
        for (position, pass) in passes.enumerated() { index[pass.itemId] = position }
        for row in try connection.query(
            """
            SELECT item_id, event_id, camera, track_id, (extract(epoch FROM first_seen) * 1000)::bigint AS first_seen_ms,
                   (extract(epoch FROM last_seen) * 1000)::bigint AS last_seen_ms
            FROM item_sightings WHERE item_id = ANY($1::text[]) ORDER BY first_seen, event_id
            """, [.text(SiteStore.arrayLiteral(passes.map(\.itemId)))]
        ).named("item sightings") {
            guard let position = index[try row.text("item_id")] else { continue }
            passes[position].members.append(
                PassMember(
                    eventId: try row.text("event_id"), camera: try row.text("camera"),
                    trackId: try row.text("track_id"),
                    firstSeen: try row.milliseconds("first_seen_ms"), lastSeen: try row.milliseconds("last_seen_ms")))
        }
    }

    public typealias UnsettledNoRead = ScanReconciliation.UnsettledNoRead

    /// The oldest no-reads not yet settled, at most `limit`.
    public func unsettledNoReads(limit: Int) throws(PGError) -> [UnsettledNoRead] {
        var rows: [UnsettledNoRead] = []
        for row in try connection.query(
            """
            SELECT event_id, site, camera, (extract(epoch FROM first_seen) * 1000)::bigint AS first_seen_ms,
                   (extract(epoch FROM received_at) * 1000)::bigint AS received_ms
            FROM noreads WHERE NOT settled ORDER BY first_seen, event_id LIMIT $1
            """, [.int(limit)]
        ).named("unsettled no-reads") {
            rows.append(
                UnsettledNoRead(
                    eventId: try row.text("event_id"), site: try row.text("site"), camera: try row.text("camera"),
                    firstSeen: try row.milliseconds("first_seen_ms"), received: try row.milliseconds("received_ms")))
        }
        return rows
    }

    /// The passes of a lane first seen between `from` and `to`, with their members.
    public func passes(site: String, lane: String, from: Timestamp, to: Timestamp) throws(PGError) -> [ItemPass] {
        var passes: [ItemPass] = []
        for row in try connection.query(
            """
            SELECT item_id, site, lane, symbology, value, value_encoding, closed_at IS NOT NULL AS closed, revision
            FROM item_passes
            WHERE site = $1 AND lane = $2 AND first_seen >= $3::timestamptz AND first_seen <= $4::timestamptz
            """, [.text(site), .text(lane), .text(from.description), .text(to.description)]
        ).named("lane passes") {
            var pass = ItemPass(
                itemId: try row.text("item_id"), site: try row.text("site"), lane: try row.text("lane"),
                symbology: try row.text("symbology"), value: try row.text("value"),
                valueEncoding: try row.text("value_encoding"))
            pass.closed = try row.bool("closed")
            pass.revision = try row.int("revision")
            passes.append(pass)
        }
        try loadMembers(into: &passes)
        return passes
    }

    /// Settles a no-read: the pass whose item it was (nil: no camera read that item).
    public func settleNoRead(_ noRead: UnsettledNoRead, itemId: String?) throws(PGError) {
        _ = try connection.query(
            """
            UPDATE noreads SET settled = true, item_id = $2
            WHERE event_id = $1 AND first_seen >= $3::timestamptz AND first_seen <= $4::timestamptz
            """,
            [
                .text(noRead.eventId), .optionalText(itemId),
                .text(noRead.firstSeen.adding(milliseconds: -1).description),
                .text(noRead.firstSeen.adding(milliseconds: 1).description),
            ])
    }

    public typealias PassRow = ScanReconciliation.PassRow

    /// Inserts new passes and updates changed ones (a closed pass keeps its first closing time).
    public func savePasses(_ passes: [PassRow]) throws(PGError) {
        let rows: [[PGValue]] = passes.map { row in
            let pass = row.pass
            return [
                .text(pass.itemId), .text(pass.site), .text(pass.lane), .text(pass.symbology), .text(pass.value),
                .text(pass.valueEncoding), .text(pass.firstSeen.description), .text(pass.lastSeen.description),
                .int(row.camerasExpected), .int(Set(pass.members.map(\.camera)).count),
                .text(SiteStore.arrayLiteral(row.missing)), .int(pass.revision), .text(pass.closed ? "true" : "false"),
            ]
        }
        try insertRows(
            rows,
            prefix: """
                INSERT INTO item_passes (item_id, site, lane, symbology, value, value_encoding, first_seen, last_seen,
                                         cameras_expected, cameras_seen, missing, revision, closed_at) VALUES
                """,
            row: { base in
                let p = (1...13).map { "$\(base + $0)" }
                return "(\(p[0]),\(p[1]),\(p[2]),\(p[3]),\(p[4]),\(p[5]),\(p[6])::timestamptz,\(p[7])::timestamptz,"
                    + "\(p[8])::int,\(p[9])::int,\(p[10])::text[],\(p[11])::int,CASE WHEN \(p[12])::boolean THEN now() END)"
            },
            suffix: """
                 ON CONFLICT (item_id) DO UPDATE SET first_seen = EXCLUDED.first_seen, last_seen = EXCLUDED.last_seen,
                   cameras_seen = EXCLUDED.cameras_seen, missing = EXCLUDED.missing, revision = EXCLUDED.revision,
                   closed_at = coalesce(item_passes.closed_at, EXCLUDED.closed_at), updated_at = now()
                """)
    }

    /// Records which sightings made each pass (`late`: joined after it closed).
    public func insertMembers(_ members: [(itemId: String, member: PassMember, late: Bool)]) throws(PGError) {
        let rows: [[PGValue]] = members.map { item in
            [
                .text(item.member.eventId), .text(item.itemId), .text(item.member.camera), .text(item.member.trackId),
                .text(item.member.firstSeen.description), .text(item.member.lastSeen.description),
                .text(item.late ? "true" : "false"),
            ]
        }
        try insertRows(
            rows,
            prefix:
                "INSERT INTO item_sightings (event_id, item_id, camera, track_id, first_seen, last_seen, late) VALUES ",
            row: { base in "(" + (1...7).map { "$\(base + $0)" }.joined(separator: ",") + ")" },
            suffix: " ON CONFLICT (event_id) DO NOTHING")
    }

    /// Multi-row INSERT in chunks that stay under PostgreSQL's 65,535 parameters.
    private func insertRows(_ rows: [[PGValue]], prefix: String, row: (Int) -> String, suffix: String) throws(PGError) {
        guard let width = rows.first?.count else { return }
        let perChunk = 60_000 / width
        var start = 0
        while start < rows.count {
            let chunk = rows[start..<min(rows.count, start + perChunk)]
            let values = (0..<chunk.count).map { row($0 * width) }.joined(separator: ",")
            try connection.query(prefix + values + suffix, chunk.flatMap { $0 })
            start += perChunk
        }
    }

    // MARK: pack records

    public typealias CompletedSession = ScanReconciliation.CompletedSession

    /// Up to `limit` completed sessions not taken yet, oldest first (a body that no longer reads
    /// as a session event comes with `event` nil).
    public func completedSessions(limit: Int) throws(PGError) -> [CompletedSession] {
        var sessions: [CompletedSession] = []
        for row in try connection.query(
            """
            SELECT event_id, site, camera, body::text AS body FROM session_events
            WHERE type = 'session.completed' AND NOT packed ORDER BY event_time, event_id LIMIT $1
            """, [.int(limit)]
        ).named("completed sessions") {
            let body = try row.text("body")
            let event = (try? JSONValue.parse(Array(body.utf8))).flatMap { try? SessionEvent.parse($0) }
            sessions.append(
                CompletedSession(
                    eventId: try row.text("event_id"), site: try row.text("site"), camera: try row.text("camera"),
                    event: event))
        }
        return sessions
    }

    /// Marks completed sessions taken: made into pack records, or passed over.
    public func markSessionsTaken(eventIds: [String]) throws(PGError) {
        guard !eventIds.isEmpty else { return }
        try connection.query(
            "UPDATE session_events SET packed = true WHERE type = 'session.completed' AND event_id = ANY($1::text[])",
            [.text(SiteStore.arrayLiteral(eventIds))])
    }

    /// The session ids among these that have a pack record.
    public func packedSessions(_ sessionIds: [String]) throws(PGError) -> Set<String> {
        guard !sessionIds.isEmpty else { return [] }
        var packed: Set<String> = []
        for row in try connection.query(
            "SELECT session_id FROM pack_records WHERE session_id = ANY($1::text[])",
            [.text(SiteStore.arrayLiteral(sessionIds))]
        ).named("pack records") {
            packed.insert(try row.text("session_id"))
        }
        return packed
    }

    /// The database's clock, which stamps every row's `received_at` and `updated_at`.
    public func now() throws(PGError) -> Timestamp {
        guard
            let row = try connection.query("SELECT floor(extract(epoch FROM now()) * 1000)::bigint AS now").named(
                "now"
            ).first
        else { throw PGError(code: .queryFailed, function: "now", input: "", message: "no row") }
        return try row.milliseconds("now")
    }

    /// Stores a pack record and its lines; false when the session has one already.
    public func insertPack(
        sessionId: String, site: String, station: String, camera: String, startedAt: Timestamp, completedAt: Timestamp,
        result: PackResult
    ) throws(PGError) -> Bool {
        let items = result.lines.reduce(0) { $0 + $1.counted }
        let inserted = try connection.query(
            """
            INSERT INTO pack_records (session_id, site, station, camera, order_id, verdict, started_at, completed_at, items)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (session_id) DO NOTHING
            """,
            [
                .text(sessionId), .text(site), .text(station), .text(camera), .optionalText(result.orderId),
                .text(result.verdict.rawValue), .text(startedAt.description), .text(completedAt.description),
                .int(items),
            ]
        ).affected
        guard inserted == 1 else { return false }
        for (position, line) in result.lines.enumerated() {
            try connection.query(
                """
                INSERT INTO pack_lines (session_id, position, line, code, symbology, expected, counted, verdict)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                """,
                [
                    .text(sessionId), .int(position), line.line.map { PGValue.int($0) } ?? .null, .text(line.code),
                    .optionalText(line.symbology), .int(line.expected), .int(line.counted),
                    .text(line.verdict.rawValue),
                ])
        }
        return true
    }

    // MARK: results to publish

    /// Closed (or changed) passes whose revision the WMS has not received yet, oldest first, as
    /// the `item` results they become: typed rows, the JSON is the event's own.
    public func unpublishedPasses(limit: Int) throws(PGError) -> [ItemPassEvent] {
        var passes: [ItemPassEvent] = []
        for row in try connection.query(
            """
            WITH p AS (
                SELECT item_id, site, lane, symbology, value, value_encoding, revision, cameras_expected, closed_at,
                       array_to_string(missing, ' ') AS missing,
                       floor(extract(epoch FROM first_seen) * 1000)::bigint AS first_seen,
                       floor(extract(epoch FROM last_seen) * 1000)::bigint AS last_seen
                FROM item_passes WHERE published_revision < revision ORDER BY closed_at, item_id LIMIT $1)
            SELECT p.*, s.camera, s.track_id, s.event_id, s.late, x.trace_id, coalesce(x.gs1, false) AS gs1,
                   floor(extract(epoch FROM s.first_seen) * 1000)::bigint AS camera_first_seen,
                   floor(extract(epoch FROM s.last_seen) * 1000)::bigint AS camera_last_seen
            FROM p LEFT JOIN item_sightings s ON s.item_id = p.item_id
            LEFT JOIN sightings x ON x.site = p.site AND x.camera = s.camera AND x.event_id = s.event_id
                                 AND x.first_seen = s.first_seen
            ORDER BY p.closed_at, p.item_id, s.first_seen, s.event_id
            """, [.int(limit)]
        ).named("passes to publish") {
            let itemId = try row.text("item_id")
            if passes.last?.itemId != itemId {
                let encoding = try row.text("value_encoding")
                passes.append(
                    ItemPassEvent(
                        itemId: itemId, site: try row.text("site"), lane: try row.text("lane"),
                        symbology: try row.text("symbology"), value: try row.text("value"),
                        valueEncoding: encoding == "text" ? nil : encoding,
                        firstSeen: try row.milliseconds("first_seen"), lastSeen: try row.milliseconds("last_seen"),
                        revision: try row.int("revision"), camerasExpected: try row.int("cameras_expected"),
                        cameras: [],
                        // Camera ids are subject tokens: no spaces.
                        missing: try row.text("missing").split(separator: " ").map(String.init)))
            }
            guard let camera = try row.optionalText("camera") else { continue }  // a pass without sightings
            // The pass continues the trace of its first sighting that has one (a sighting whose
            // day was dropped by retention has no row left, and no trace).
            if passes[passes.count - 1].traceId == nil {
                passes[passes.count - 1].traceId = try row.optionalText("trace_id")
            }
            // GS1 data when a camera's sighting of it said so (the value is the same on each).
            if try row.bool("gs1") { passes[passes.count - 1].gs1 = true }
            passes[passes.count - 1].cameras.append(
                ItemPassEvent.CameraSighting(
                    camera: camera, trackId: try row.text("track_id"), eventId: try row.text("event_id"),
                    firstSeen: try row.milliseconds("camera_first_seen"),
                    lastSeen: try row.milliseconds("camera_last_seen"), late: try row.bool("late")))
        }
        return passes
    }

    public func markPassPublished(itemId: String, revision: Int) throws(PGError) {
        try connection.query(
            "UPDATE item_passes SET published_revision = $2 WHERE item_id = $1", [.text(itemId), .int(revision)])
    }

    /// Pack records the WMS has not received yet, oldest first, as the `pack` results they become.
    public func unpublishedPacks(limit: Int) throws(PGError) -> [PackRecordEvent] {
        var packs: [PackRecordEvent] = []
        for row in try connection.query(
            """
            WITH r AS (
                SELECT session_id, site, station, camera, order_id, verdict, items, created_at,
                       floor(extract(epoch FROM started_at) * 1000)::bigint AS started_at,
                       floor(extract(epoch FROM completed_at) * 1000)::bigint AS completed_at,
                       (SELECT e.trace_id FROM session_events e
                        WHERE e.site = pack_records.site AND e.camera = pack_records.camera
                          AND e.session_id = pack_records.session_id AND e.trace_id IS NOT NULL
                        ORDER BY e.event_time, e.type DESC LIMIT 1) AS trace_id
                FROM pack_records WHERE NOT published ORDER BY created_at, session_id LIMIT $1)
            SELECT r.*, l.line, l.code, l.symbology, l.expected, l.counted, l.verdict AS line_verdict
            FROM r LEFT JOIN pack_lines l ON l.session_id = r.session_id
            ORDER BY r.created_at, r.session_id, l.position
            """, [.int(limit)]
        ).named("packs to publish") {
            let sessionId = try row.text("session_id")
            if packs.last?.sessionId != sessionId {
                packs.append(
                    PackRecordEvent(
                        sessionId: sessionId, site: try row.text("site"), station: try row.text("station"),
                        camera: try row.text("camera"), orderId: try row.optionalText("order_id"),
                        verdict: try row.value("verdict", as: PackVerdict.self), items: try row.int("items"),
                        startedAt: try row.milliseconds("started_at"),
                        completedAt: try row.milliseconds("completed_at"),
                        lines: []))
                // The session's first event with a trace: its session.started (type DESC puts it
                // before a session.completed of the same millisecond).
                packs[packs.count - 1].traceId = try row.optionalText("trace_id")
            }
            guard let code = try row.optionalText("code") else { continue }  // a record without lines
            packs[packs.count - 1].lines.append(
                PackRecordEvent.Line(
                    line: try row.optionalInt("line"), code: code, symbology: try row.optionalText("symbology"),
                    expected: try row.int("expected"), counted: try row.int("counted"),
                    verdict: try row.value("line_verdict", as: PackVerdict.self)))
        }
        return packs
    }

    public func markPackPublished(sessionId: String) throws(PGError) {
        try connection.query("UPDATE pack_records SET published = true WHERE session_id = $1", [.text(sessionId)])
    }
}
