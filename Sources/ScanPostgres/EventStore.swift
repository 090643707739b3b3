import ScanCore

/// Writes agent events into PostgreSQL: idempotent on the event id, so a redelivery, a second
/// replica or a replay never duplicates a row. Values are always bound parameters.
public struct EventStore {
    public let connection: PGConnection

    public init(connection: PGConnection) { self.connection = connection }

    static let sightingColumns = [
        "event_id", "site", "camera", "track_id", "symbology", "value", "value_encoding", "status", "rule_id", "role", "lane",
        "station", "session_id", "gs1", "add_on", "first_seen", "last_seen", "first_frame", "last_frame", "frames", "decodes",
        "event_time", "body",
    ]

    /// Inserts sightings; rows whose event id is stored already are skipped. Returns rows added.
    @discardableResult
    public func insertSightings(_ batch: [(record: SightingRecord, body: String)]) throws(PGError) -> Int {
        guard !batch.isEmpty else { return 0 }
        var parameters: [PGValue] = []
        parameters.reserveCapacity(batch.count * Self.sightingColumns.count)
        var rows: [String] = []
        for (index, item) in batch.enumerated() {
            let r = item.record
            let base = index * Self.sightingColumns.count
            rows.append("(" + (1...Self.sightingColumns.count).map { "$\(base + $0)" }.joined(separator: ",") + ")")
            parameters += [
                .text(r.eventId), .text(r.site), .text(r.camera), .text(r.trackId), .text(r.symbology), .text(r.value),
                .text(r.valueEncoding), .text(r.status), .optionalText(r.ruleId), .optionalText(r.role), .optionalText(r.lane),
                .optionalText(r.station), .optionalText(r.sessionId), .text(r.gs1 ? "true" : "false"), .optionalText(r.addOn),
                .text(r.firstSeen.description), .text(r.lastSeen.description), .int(r.firstFrame), .int(r.lastFrame), .int(r.frames),
                .int(r.decodes), .text(r.time.description), .text(item.body),
            ]
        }
        let sql =
            "INSERT INTO sightings (\(Self.sightingColumns.joined(separator: ","))) VALUES \(rows.joined(separator: ","))"
            + " ON CONFLICT (event_id) DO NOTHING"
        return try connection.query(sql, parameters).affected
    }

    @discardableResult
    public func insertSessionEvents(_ batch: [(record: SessionRecord, body: String)]) throws(PGError) -> Int {
        guard !batch.isEmpty else { return 0 }
        var parameters: [PGValue] = []
        var rows: [String] = []
        for (index, item) in batch.enumerated() {
            let r = item.record
            let base = index * 9
            rows.append("(" + (1...9).map { "$\(base + $0)" }.joined(separator: ",") + ")")
            parameters += [
                .text(r.eventId), .text(r.type), .text(r.site), .text(r.camera), .text(r.sessionId), .text(r.time.description),
                .optionalText(r.reason), .optionalText(r.orderId), .text(item.body),
            ]
        }
        let sql =
            "INSERT INTO session_events (event_id, type, site, camera, session_id, event_time, reason, order_id, body) VALUES "
            + rows.joined(separator: ",") + " ON CONFLICT (event_id) DO NOTHING"
        return try connection.query(sql, parameters).affected
    }

    /// Keeps a refused message with its reason: nothing accepted from the bus is lost silently.
    public func insertDeadLetter(subject: String, reason: String, detail: String, payload: [UInt8]) throws(PGError) {
        try connection.query(
            "INSERT INTO dead_letters (subject, reason, detail, payload) VALUES ($1, $2, $3, $4)",
            [.text(subject), .text(reason), .text(String(detail.prefix(2000))), .bytes(Array(payload.prefix(EventValidator.maxBytes)))])
    }
}
