import ScanCore
import ScanEvents

/// Writes agent events into PostgreSQL: idempotent on the event id, so a redelivery, a second
/// replica or a replay never duplicates a row. Values are always bound parameters.
public struct EventStore {
    public let connection: PGConnection

    public init(connection: PGConnection) { self.connection = connection }

    static let sightingColumns = [
        "event_id", "site", "camera", "track_id", "symbology", "value", "value_encoding", "status", "rule_id", "role",
        "lane",
        "station", "session_id", "gs1", "add_on", "first_seen", "last_seen", "first_frame", "last_frame", "frames",
        "decodes",
        "event_time", "body", "image_object", "trace_id",
    ]

    /// Inserts sightings; rows whose event id is stored already are skipped. Returns rows added.
    /// Call inside a transaction. The common case (nothing stored yet) is one plain COPY into
    /// `sightings`; when that hits a stored event id (a redelivery, a second replica, a replay)
    /// the batch is rolled back to a savepoint and inserted with ON CONFLICT DO NOTHING from one
    /// bound JSON parameter (no temporary table: program roles may not create them). Neither
    /// path puts a value into SQL text.
    @discardableResult
    public func insertSightings(_ batch: [(record: SightingEvent, body: String)]) throws(PGError) -> Int {
        try insertSightings(batch.map { ($0.record, $0.body, nil) })
    }

    /// The same, each with the trace id its message came with (`trace_id`; nil: none).
    @discardableResult
    public func insertSightings(_ batch: [(record: SightingEvent, body: String, traceId: String?)]) throws(PGError)
        -> Int
    {
        guard !batch.isEmpty else { return 0 }
        let columns = Self.sightingColumns.joined(separator: ",")
        let rows: [[String?]] = batch.map { item in
            let r = item.record
            return [
                r.eventId, r.site, r.camera, r.trackId, r.symbology, r.value, r.valueEncoding, r.status.rawValue,
                r.ruleId,
                r.role, r.lane,
                r.station, r.sessionId, r.gs1 ? "true" : "false", r.addOn, r.firstSeen.description,
                r.lastSeen.description,
                String(r.firstFrame), String(r.lastFrame), String(r.frames), String(r.decodes), r.time.description,
                item.body, r.parcelImage, item.traceId,
            ]
        }
        try connection.execute("SAVEPOINT sightings_batch")
        do {
            let added = try connection.copyIn("COPY sightings (\(columns)) FROM STDIN", rows: rows)
            try connection.execute("RELEASE SAVEPOINT sightings_batch")
            return added
        } catch  where error.sqlState == "23505" {
            try connection.execute("ROLLBACK TO SAVEPOINT sightings_batch")
        }
        return try Self.insertSkippingStored(
            connection, table: "sightings", columns: Self.sightingColumns, rows: rows,
            key: "site, camera, event_id, first_seen")
    }

    @discardableResult
    public func insertSessionEvents(_ batch: [(record: SessionEvent, body: String)]) throws(PGError) -> Int {
        try insertSessionEvents(batch.map { ($0.record, $0.body, nil) })
    }

    /// The same, each with the trace id its message came with (`trace_id`; nil: none).
    @discardableResult
    public func insertSessionEvents(_ batch: [(record: SessionEvent, body: String, traceId: String?)]) throws(PGError)
        -> Int
    {
        guard !batch.isEmpty else { return 0 }
        var parameters: [PGValue] = []
        var rows: [String] = []
        for (index, item) in batch.enumerated() {
            let r = item.record
            let base = index * 10
            rows.append("(" + (1...10).map { "$\(base + $0)" }.joined(separator: ",") + ")")
            parameters += [
                .text(r.eventId), .text(r.kind.rawValue), .text(r.envelope.site), .text(r.envelope.camera),
                .text(r.sessionId),
                .text(r.time.description),
                .optionalText(r.reason), .optionalText(r.orderId), .text(item.body), .optionalText(item.traceId),
            ]
        }
        let sql =
            "INSERT INTO session_events (event_id, type, site, camera, session_id, event_time, reason, order_id, body, trace_id) VALUES "
            + rows.joined(separator: ",") + " ON CONFLICT (site, camera, event_id, event_time) DO NOTHING"
        return try connection.query(sql, parameters).affected
    }

    /// Keeps a refused message with its reason: nothing accepted from the bus is lost silently.
    public func insertDeadLetter(subject: String, reason: String, detail: String, payload: [UInt8]) throws(PGError) {
        try connection.query(
            "INSERT INTO dead_letters (subject, reason, detail, payload) VALUES ($1, $2, $3, $4)",
            [
                .text(subject), .text(reason), .text(String(detail.prefix(2000))),
                .bytes(Array(payload.prefix(EventValidator.maxBytes))),
            ])
    }
}

extension EventStore {
    /// Stores no-reads, each once (by event id); returns how many were new. The picture goes
    /// into its own column, the body without it.
    @discardableResult
    public func insertNoReads(_ batch: [NoReadEvent]) throws(PGError) -> Int {
        try insertNoReads(batch.map { ($0, nil) })
    }

    /// The same, each with the trace id its message came with (nil: none).
    @discardableResult
    public func insertNoReads(_ batch: [(record: NoReadEvent, traceId: String?)]) throws(PGError) -> Int {
        var added = 0
        for (r, traceId) in batch {
            var body = r
            body.imagePNG = nil
            added +=
                try connection.query(
                    """
                    INSERT INTO noreads (event_id, site, camera, lane, station, track_id, family, first_seen, last_seen,
                                         frames, session_id, sharpness, image_name, image, body, image_object,
                                         trace_id)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8::timestamptz, $9::timestamptz, $10::integer, $11,
                            $12::double precision, $13, $14::bytea, $15::jsonb, $16, $17)
                    ON CONFLICT (site, camera, event_id, first_seen) DO NOTHING
                    """,
                    [
                        .text(r.eventId), .text(r.site), .text(r.camera), .optionalText(r.lane),
                        .optionalText(r.station),
                        .text(r.trackId), .optionalText(r.family), .text(r.firstSeen.description),
                        .text(r.lastSeen.description), .int(r.frames), .optionalText(r.sessionId),
                        .optionalText(r.sharpness.map { String($0) }), .optionalText(r.image),
                        r.imagePNG.map { .bytes($0) } ?? .null, .text(String(decoding: body.json, as: UTF8.self)),
                        .optionalText(r.imageObject?.name), .optionalText(traceId),
                    ]
                ).affected
        }
        return added
    }

    /// Stores one camera's parcels, each once (by site, camera and event id); returns how many were new.
    public func insertParcels(_ batch: [(record: ParcelEvent, body: String)]) throws(PGError) -> Int {
        try insertParcels(batch.map { ($0.record, $0.body, nil) })
    }

    /// The same, each with the trace id its message came with (nil: none).
    public func insertParcels(_ batch: [(record: ParcelEvent, body: String, traceId: String?)]) throws(PGError) -> Int {
        var added = 0
        for (p, body, traceId) in batch {
            added +=
                try connection.query(
                    """
                    INSERT INTO parcels (event_id, parcel_id, site, camera, lane, station, first_seen, last_seen, codes,
                                         complete, no_read, body, image_object, trace_id)
                    VALUES ($1, $2, $3, $4, $5, $6, $7::timestamptz, $8::timestamptz, $9::integer, $10::boolean,
                            $11::boolean, $12::jsonb, $13, $14)
                    ON CONFLICT (site, camera, event_id, last_seen) DO NOTHING
                    """,
                    [
                        .text(p.eventId), .text(p.parcelId), .text(p.site), .text(p.camera), .optionalText(p.lane),
                        .optionalText(p.station), .text(p.firstSeen.description), .text(p.lastSeen.description),
                        .int(p.codes.count), .text(p.complete ? "true" : "false"), .text(p.noRead ? "true" : "false"),
                        .text(body), .optionalText(p.imageObject?.name), .optionalText(traceId),
                    ]
                ).affected
            // Its codes' sightings (stored before it, in this transaction or an earlier one) name
            // its picture too. The times bound the day partitions searched.
            if let image = p.imageObject, !p.codes.isEmpty {
                _ = try connection.query(
                    """
                    UPDATE sightings SET image_object = $1
                    WHERE site = $2 AND camera = $3 AND event_id = ANY($4::text[])
                      AND first_seen >= $5::timestamptz - interval '1 minute'
                      AND first_seen <= $6::timestamptz + interval '1 minute'
                      AND image_object IS DISTINCT FROM $1
                    """,
                    [
                        .text(image.name), .text(p.site), .text(p.camera),
                        .text(SiteStore.arrayLiteral(p.codes.map { $0.trackId + ".sighting" })),
                        .text(p.firstSeen.description), .text(p.lastSeen.description),
                    ])
            }
        }
        return added
    }

    /// Stores decisions, each once (by site, lane and event id); returns how many were new. `published`: false
    /// for the aggregator's own, stored to be published.
    public func insertDecisions(_ batch: [(record: DecisionEvent, body: String)], published: Bool = true)
        throws(PGError) -> Int
    {
        var added = 0
        for (d, body) in batch {
            added +=
                try connection.query(
                    """
                    INSERT INTO decisions (event_id, parcel_id, site, lane, camera, action, reasons, late, decided_by,
                                           closed_at, deadline, body, published)
                    VALUES ($1, $2, $3, $4, $5, $6, $7::text[], $8::boolean, $9, $10::timestamptz, $11::timestamptz,
                            $12::jsonb, $13::boolean)
                    ON CONFLICT (site, lane, event_id, closed_at) DO NOTHING
                    """,
                    [
                        .text(d.eventId), .text(d.parcelId), .text(d.site), .text(d.lane), .text(d.camera),
                        .text(d.action.rawValue), .text(SiteStore.arrayLiteral(d.reasons.map(\.rawValue))),
                        .text(d.late ? "true" : "false"), .text(d.decidedBy), .text(d.closedAt.description),
                        .text(d.deadline.description), .text(body), .text(published ? "true" : "false"),
                    ]
                ).affected
        }
        return added
    }

    /// Stores measurements, each once (by site, lane and event id); returns how many were new.
    public func insertMeasurements(_ batch: [(record: MeasureEvent, body: String)]) throws(PGError) -> Int {
        var added = 0
        for (m, body) in batch {
            added +=
                try connection.query(
                    """
                    INSERT INTO measurements (event_id, site, lane, device, measured_at, length_mm, width_mm, height_mm,
                                              weight_kg, body)
                    VALUES ($1, $2, $3, $4, $5::timestamptz, $6::double precision, $7::double precision,
                            $8::double precision, $9::double precision, $10::jsonb)
                    ON CONFLICT (site, lane, event_id, measured_at) DO NOTHING
                    """,
                    [
                        .text(m.eventId), .text(m.site), .text(m.lane), .text(m.device), .text(m.time.description),
                        .optionalText(m.length.map { String($0) }), .optionalText(m.width.map { String($0) }),
                        .optionalText(m.height.map { String($0) }), .optionalText(m.weight.map { String($0) }),
                        .text(body),
                    ]
                ).affected
        }
        return added
    }

    /// Stores `reading.paused` / `reading.resumed` events, each once (by site, camera and event
    /// id); returns how many were new.
    public func insertReadings(_ batch: [ReadingEvent]) throws(PGError) -> Int {
        var added = 0
        for r in batch {
            added +=
                try connection.query(
                    """
                    INSERT INTO reading_events (event_id, site, camera, lane, station, type, reason, detail, event_time)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::timestamptz)
                    ON CONFLICT (site, camera, event_id) DO NOTHING
                    """,
                    [
                        .text(r.eventId), .text(r.site), .text(r.camera), .optionalText(r.lane),
                        .optionalText(r.station), .text(r.kind.rawValue), .text(r.reason.rawValue),
                        .optionalText(r.detail), .text(r.time.description),
                    ]
                ).affected
        }
        return added
    }
}

extension EventStore {
    /// Inserts `rows` (text values in `columns` order; `body` is JSON text) into `table`, skipping
    /// those whose `key` is stored already, one of each key kept when the batch repeats it. The
    /// rows travel as one bound jsonb array that `jsonb_populate_recordset` turns into the
    /// table's row type: every value is a parameter, and no staging table is needed.
    static func insertSkippingStored(
        _ connection: PGConnection, table: String, columns: [String], rows: [[String?]], key: String
    ) throws(PGError) -> Int {
        let list = columns.joined(separator: ",")
        return try connection.query(
            "INSERT INTO \(table) (\(list)) SELECT DISTINCT ON (\(key)) \(list)"
                + " FROM jsonb_populate_recordset(NULL::\(table), $1::jsonb) ON CONFLICT (\(key)) DO NOTHING",
            [.text(jsonRows(columns: columns, rows: rows))]
        ).affected
    }

    /// `[{"column": "text", …, "body": {…}}, …]`: each row an object of its columns (null for
    /// nil); `body`, JSON already, goes in as it is.
    static func jsonRows(columns: [String], rows: [[String?]]) -> String {
        var out: [UInt8] = [UInt8(ascii: "[")]
        for (index, row) in rows.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            var writer = JSONWriter()
            for (column, value) in zip(columns, row) {
                if column == "body", let value {
                    writer.raw(column, Array(value.utf8))
                } else {
                    writer.field(column, value)
                }
            }
            out += writer.finished()
        }
        out.append(UInt8(ascii: "]"))
        return String(decoding: out, as: UTF8.self)
    }
}
