import ScanCore

/// Stored dead letters (messages the aggregator could not use, with the reason): `scanadmin
/// deadletters` lists and counts them, the report warns of the cameras that have them. Site and
/// camera come from the subject an agent published on (`<prefix>.v1.<kind>.<site>.<camera>`);
/// other subjects (orders, a stranger's) have none.
public struct DeadLetterStore {
    public let connection: PGConnection

    public init(connection: PGConnection) { self.connection = connection }

    /// One dead letter, without its payload.
    public struct Row: Sendable, Equatable {
        public var id: Int
        public var receivedAt: String
        public var subject: String
        public var site: String?
        public var camera: String?
        public var reason: String
        public var detail: String
        public var bytes: Int
    }

    /// Dead letters of one camera (or of no camera) for one reason in a period.
    public struct Count: Sendable, Equatable {
        public var site: String?
        public var camera: String?
        public var reason: String
        public var count: Int
        public var first: String
        public var last: String
        /// The detail of the latest one (what an operator reads first).
        public var latestDetail: String
    }

    /// Site and camera of an agent subject, as SQL: $-free expressions over `subject`.
    static let agentSubject = "split_part(subject, '.', -4) = 'v1' AND split_part(subject, '.', -1) <> ''"
    static let site = "CASE WHEN \(agentSubject) THEN split_part(subject, '.', -2) END"
    static let camera = "CASE WHEN \(agentSubject) THEN split_part(subject, '.', -1) END"

    /// $1 start, $2 end, $3 camera (nil: any), $4 reason (nil: any).
    static let filters = """
        received_at >= $1::timestamptz AND received_at < $2::timestamptz
        AND ($3::text IS NULL OR \(camera) = $3) AND ($4::text IS NULL OR reason = $4)
        """

    /// The dead letters received in `[start, end)`, oldest first, at most `limit`.
    public func list(start: Timestamp, end: Timestamp, camera: String?, reason: String?, limit: Int) throws(PGError)
        -> [Row]
    {
        var rows: [Row] = []
        for row in try connection.query(
            """
            SELECT id, \(SQLText.utc("received_at")) AS received, subject,
                   \(Self.site) AS site, \(Self.camera) AS camera, reason, detail, octet_length(payload) AS bytes
            FROM dead_letters WHERE \(Self.filters)
            ORDER BY received_at, id LIMIT \(max(0, limit))
            """,
            [.text(start.description), .text(end.description), .optionalText(camera), .optionalText(reason)]
        ).named("dead letters") {
            rows.append(
                Row(
                    id: try row.int("id"), receivedAt: try row.text("received"), subject: try row.text("subject"),
                    site: try row.optionalText("site"), camera: try row.optionalText("camera"),
                    reason: try row.text("reason"), detail: try row.text("detail"), bytes: try row.int("bytes")))
        }
        return rows
    }

    /// How many dead letters each camera (and the messages of no camera) had for each reason in
    /// `[start, end)`, the most first.
    public func counts(start: Timestamp, end: Timestamp, camera: String? = nil) throws(PGError) -> [Count] {
        var counts: [Count] = []
        for row in try connection.query(
            """
            SELECT \(Self.site) AS site, \(Self.camera) AS camera, reason, count(*) AS n,
                   \(SQLText.utc("min(received_at)")) AS first,
                   \(SQLText.utc("max(received_at)")) AS last,
                   (array_agg(detail ORDER BY received_at DESC, id DESC))[1] AS latest
            FROM dead_letters WHERE \(Self.filters)
            GROUP BY 1, 2, 3 ORDER BY n DESC, 2 NULLS LAST, 3
            """,
            [.text(start.description), .text(end.description), .optionalText(camera), .null]
        ).named("dead-letter counts") {
            counts.append(
                Count(
                    site: try row.optionalText("site"), camera: try row.optionalText("camera"),
                    reason: try row.text("reason"), count: try row.int("n"), first: try row.text("first"),
                    last: try row.text("last"), latestDetail: try row.text("latest")))
        }
        return counts
    }
}
