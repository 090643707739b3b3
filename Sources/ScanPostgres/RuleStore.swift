import ScanCore

/// Ruleset revisions in PostgreSQL (`scanadmin rules`). Each change stores the whole document.
public struct RuleStore {
    public let connection: PGConnection

    public init(connection: PGConnection) { self.connection = connection }

    public struct Revision: Sendable, Equatable {
        public var revision: Int
        public var document: String
        public var change: String
        public var author: String
        public var createdAt: String
        public var kvRevision: Int?
    }

    static let columns = """
        revision, document, change, author,
        to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS created_at, kv_revision
        """

    static func revision(_ row: PGRow) throws(PGError) -> Revision {
        Revision(
            revision: try row.int("revision"), document: try row.text("document"), change: try row.text("change"),
            author: try row.text("author"), createdAt: try row.text("created_at"),
            kvRevision: try row.optionalInt("kv_revision"))
    }

    static func revisions(_ rows: PGRows) throws(PGError) -> [Revision] {
        var revisions: [Revision] = []
        for row in rows.named("ruleset revisions") { revisions.append(try revision(row)) }
        return revisions
    }

    /// The latest revision, nil before the first change.
    public func current() throws(PGError) -> Revision? {
        try Self.revisions(
            try connection.query("SELECT \(Self.columns) FROM ruleset_revisions ORDER BY revision DESC LIMIT 1")
        ).first
    }

    public func history() throws(PGError) -> [Revision] {
        try Self.revisions(try connection.query("SELECT \(Self.columns) FROM ruleset_revisions ORDER BY revision"))
    }

    /// Stores a new revision made from the current document by `change` (nil current: an empty
    /// ruleset), serialised against concurrent changes. `change` returns the new document and a
    /// description, or throws to store nothing.
    public func update<E: Error>(
        author: String, _ change: (JSONValue) throws(E) -> (document: String, description: String)
    ) throws -> Revision {
        var result: Revision?
        var failure: (any Error)?
        try connection.transaction { () throws(PGError) in
            try connection.query("SELECT pg_advisory_xact_lock($1)", [.int(0x5CA7_0002)])
            let base = try current()
            let document =
                base.flatMap { try? JSONValue.parse($0.document) }
                ?? .object([("version", .number(1)), ("rules", .array([]))])
            do {
                let (text, description) = try change(document)
                result = try Self.revisions(
                    try connection.query(
                        "INSERT INTO ruleset_revisions (document, change, author) VALUES ($1, $2, $3) RETURNING \(Self.columns)",
                        [.text(text), .text(description), .text(author)])
                ).first
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        guard let result else {
            throw PGError(
                code: .unexpectedResult, function: "rules update", input: "ruleset_revisions",
                message: "the new revision was not returned")
        }
        return result
    }

    public func markPublished(revision: Int, kvRevision: UInt64) throws(PGError) {
        try connection.query(
            "UPDATE ruleset_revisions SET kv_revision = $2 WHERE revision = $1",
            [.int(revision), .text(String(kvRevision))])
    }
}
