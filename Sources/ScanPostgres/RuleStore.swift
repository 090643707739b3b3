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
        revision, document, change, author, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), kv_revision
        """

    static func revision(_ row: [String?]) -> Revision {
        Revision(
            revision: Int(row[0] ?? "") ?? 0, document: row[1] ?? "", change: row[2] ?? "", author: row[3] ?? "",
            createdAt: row[4] ?? "",
            kvRevision: row[5].flatMap { Int($0) })
    }

    /// The latest revision, nil before the first change.
    public func current() throws(PGError) -> Revision? {
        try connection.query("SELECT \(Self.columns) FROM ruleset_revisions ORDER BY revision DESC LIMIT 1").rows.first
            .map(Self.revision)
    }

    public func history() throws(PGError) -> [Revision] {
        try connection.query("SELECT \(Self.columns) FROM ruleset_revisions ORDER BY revision").rows.map(Self.revision)
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
                let row = try connection.query(
                    "INSERT INTO ruleset_revisions (document, change, author) VALUES ($1, $2, $3) RETURNING \(Self.columns)",
                    [.text(text), .text(description), .text(author)]
                ).rows[0]
                result = Self.revision(row)
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
