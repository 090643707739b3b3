import ScanCore

/// The pictures stored rows name (`parcels.image_object`, `noreads.image_object`): what
/// `scanadmin images list` shows; the pictures themselves are in the images bucket.
public struct ImageRows {
    public struct Row: Sendable, Equatable {
        /// `parcel` or `noread`.
        public var kind: String
        public var eventId: String
        public var site: String
        public var camera: String
        public var lane: String?
        public var time: String
        public var object: String
        /// A parcel's codes, or a no-read's reason.
        public var detail: String
    }

    let connection: PGConnection
    public init(connection: PGConnection) { self.connection = connection }

    /// The pictures of `[start, end)` (a parcel by when it was last seen, a no-read by when it was
    /// first), newest first; `site`, `camera` and `kind` narrow it.
    public func list(
        start: Timestamp, end: Timestamp, site: String?, camera: String?, kind: String?, lane: String? = nil, limit: Int
    ) throws(PGError) -> [Row] {
        var rows: [Row] = []
        for row in try connection.query(
            """
            SELECT kind, event_id, site, camera, lane, \(SQLText.utc("at")) AS at_text, image_object, detail FROM (
                SELECT 'parcel' AS kind, event_id, site, camera, lane, last_seen AS at, image_object,
                       (SELECT coalesce(string_agg(c->>'symbology' || ' ' || (c->>'value'), ', '), '')
                        FROM jsonb_array_elements(body->'codes') c) AS detail
                FROM parcels WHERE image_object IS NOT NULL AND last_seen >= $1::timestamptz AND last_seen < $2::timestamptz
                UNION ALL
                SELECT 'noread', event_id, site, camera, lane, first_seen, image_object, coalesce(body->>'reason', '')
                FROM noreads WHERE image_object IS NOT NULL AND first_seen >= $1::timestamptz AND first_seen < $2::timestamptz
            ) i
            WHERE ($3::text IS NULL OR site = $3) AND ($4::text IS NULL OR camera = $4) AND ($5::text IS NULL OR kind = $5)
              AND ($6::text IS NULL OR lane = $6)
            ORDER BY at DESC, event_id LIMIT \(max(0, limit))
            """,
            [
                .text(start.description), .text(end.description), .optionalText(site), .optionalText(camera),
                .optionalText(kind), .optionalText(lane),
            ]
        ).named("images") {
            rows.append(
                Row(
                    kind: try row.text("kind"), eventId: try row.text("event_id"), site: try row.text("site"),
                    camera: try row.text("camera"), lane: try row.optionalText("lane"),
                    time: try row.text("at_text"), object: try row.text("image_object"), detail: try row.text("detail"))
            )
        }
        return rows
    }
}
