import Foundation

/// The program roles of `migrations/roles/roles.sql` and the logins `scanadmin migrate --login`
/// makes in them.
public struct RoleLogin: Sendable, Equatable {
    /// `writer` (scan-aggregator), `operator` (scanadmin), `reporter` (reports, the dashboard).
    public static let roles = ["writer", "operator", "reporter"]

    public var role: String
    public var name: String
    public var passwordFile: String

    /// `ROLE=NAME:FILE`, e.g. `writer=aggregator:/run/secrets/pg_aggregator_password`.
    public init?(_ text: String) {
        guard let equals = text.firstIndex(of: "="), let colon = text[equals...].firstIndex(of: ":") else {
            return nil
        }
        role = String(text[..<equals])
        name = String(text[text.index(after: equals)..<colon])
        passwordFile = String(text[text.index(after: colon)...])
        guard Self.roles.contains(role), Self.isName(name), !passwordFile.isEmpty else { return nil }
    }

    /// A login name of lower-case letters, digits and `_` (no quoting needed anywhere).
    static func isName(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 63 && text.first?.isLetter == true
            && text.allSatisfy { ($0.isASCII && ($0.isLowercase || $0.isNumber)) || $0 == "_" }
    }
}

extension PGConnection {
    /// The program roles (migrations/roles/roles.sql, in `folder`), then each login: made, or its
    /// password and role updated. The password goes to the server only as a SCRAM-SHA-256
    /// verifier computed here by libpq, so the clear text is in no statement or server log.
    public func applyRoles(folder: String, logins: [RoleLogin]) throws(PGError) {
        try applyRoles(sql: try MigrationsFolder.Source.folder(folder).rolesSQL(), logins: logins)
    }

    /// Applies roles.sql's text (`sql`), then makes or updates each login.
    public func applyRoles(sql: String, logins: [RoleLogin]) throws(PGError) {
        try execute(sql)
        for login in logins {
            let verifier = try scramVerifier(password: try Self.readPassword(login.passwordFile), user: login.name)
            // The names are checked (RoleLogin), and format's %I and %L quote them besides.
            let exists = !(try query("SELECT 1 FROM pg_roles WHERE rolname = $1", [.text(login.name)]).rows.isEmpty)
            let statements = try query(
                """
                SELECT format('\(exists ? "ALTER" : "CREATE") ROLE %I LOGIN PASSWORD %L', $1::text, $2::text) AS login,
                       format('GRANT %I TO %I', $3::text, $1::text) AS grant
                """, [.text(login.name), .text(verifier), .text("scantrack_" + login.role)]
            ).named("role login")
            guard let row = statements.first else { continue }
            try execute(try row.text("login"))
            try execute(try row.text("grant"))
        }
    }
}
