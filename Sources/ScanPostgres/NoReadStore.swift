import ScanCore

/// Stored no-reads: `scanadmin noreads` lists them and writes their pictures.
public struct NoReadStore {
    public let connection: PGConnection

    public init(connection: PGConnection) { self.connection = connection }

    /// One stored no-read, without its picture.
    public struct Row: Sendable, Equatable {
        public var id: String
        public var site: String
        public var camera: String
        public var lane: String?
        public var trackId: String
        public var family: String?
        public var firstSeen: String
        public var frames: Int
        public var sharpness: String?
        public var imageBytes: Int
        /// The item pass another camera of the lane read (nil: none, or not settled yet).
        public var itemId: String?
        /// Why it was not read (`too-small`, `blurred`, …); nil from agents older than the field.
        public var reason: String?
        public var pixelsPerModule: String?
        /// What a person said of it (`keyed`, `no-label`, `not-a-parcel`; nil: not resolved), and
        /// the code they keyed.
        public var resolution: String?
        public var keyedCode: String?
    }

    /// The no-reads first seen in the period and scope (`ReportStore.Scope`), oldest first (or
    /// newest first), at most `limit`.
    public func list(_ scope: ReportStore.Scope, limit: Int, newestFirst: Bool = false, unresolvedOnly: Bool = false)
        throws(PGError) -> [Row]
    {
        var rows: [Row] = []
        for row in try connection.query(
            """
            SELECT t.event_id, t.site, t.camera,
                   coalesce(t.lane, (SELECT lc.lane FROM lane_cameras lc
                                     WHERE lc.site = t.site AND lc.camera = t.camera ORDER BY lc.lane LIMIT 1)) AS lane,
                   t.track_id, t.family,
                   \(SQLText.utc("t.first_seen")) AS first_seen, t.frames,
                   round(t.sharpness::numeric, 1)::text AS sharpness, coalesce(octet_length(t.image), 0) AS image_bytes,
                   t.item_id, t.body->>'reason' AS reason,
                   round((t.body->>'pixelsPerModule')::numeric, 1)::text AS pixels_per_module,
                   c.outcome, c.code
            FROM noreads t
            LEFT JOIN noread_codings c ON c.site = t.site AND c.camera = t.camera AND c.noread_id = t.event_id
            WHERE \(ReportStore.sightingScope)\(unresolvedOnly ? " AND c.outcome IS NULL" : "")
            ORDER BY t.first_seen \(newestFirst ? "DESC" : "ASC"), t.event_id LIMIT \(max(0, limit))
            """, scope.rowParameters
        ).named("no-reads") {
            rows.append(
                Row(
                    id: try row.text("event_id"), site: try row.text("site"), camera: try row.text("camera"),
                    lane: try row.optionalText("lane"), trackId: try row.text("track_id"),
                    family: try row.optionalText("family"), firstSeen: try row.text("first_seen"),
                    frames: try row.int("frames"), sharpness: try row.optionalText("sharpness"),
                    imageBytes: try row.int("image_bytes"), itemId: try row.optionalText("item_id"),
                    reason: try row.optionalText("reason"), pixelsPerModule: try row.optionalText("pixels_per_module"),
                    resolution: try row.optionalText("outcome"), keyedCode: try row.optionalText("code")))
        }
        return rows
    }

    /// The picture of no-read `id` (PNG bytes): nil when there is no such no-read, empty when it
    /// came without one.
    public func image(id: String) throws(PGError) -> [UInt8]? {
        guard
            let row = try connection.query(
                "SELECT coalesce(encode(image, 'base64'), '') AS image FROM noreads WHERE event_id = $1", [.text(id)]
            ).named("no-read image").first
        else { return nil }
        let text = try row.text("image").filter { !$0.isWhitespace }
        guard let bytes = Base64.decode(text) else {
            throw PGError(
                code: .unexpectedResult, function: "no-read image", input: id, message: "the stored image is not base64"
            )
        }
        return bytes
    }
}
