/// A libpq call that failed: what was attempted, PostgreSQL's SQLSTATE and message. The DSN in
/// `input` is always redacted.
public struct PGError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case connectionFailed
        case queryFailed
        case copyFailed
        case unexpectedResult
        case migrationFailed
        case schemaBehind
    }

    public var code: Code
    public var function: String
    public var input: String
    /// Five-character SQLSTATE when the server sent one ("23505" unique violation, …).
    public var sqlState: String?
    public var message: String

    public init(code: Code, function: String, input: String, sqlState: String? = nil, message: String) {
        self.code = code
        self.function = function
        self.input = input
        self.sqlState = sqlState
        self.message = message
    }

    public var description: String {
        var text = "\(function) (\(input)): \(message)"
        if let sqlState { text += " [SQLSTATE \(sqlState)]" }
        return text
    }

    /// True for errors that a retry on a fresh connection may cure (server restart, network).
    public var isConnectionLoss: Bool {
        code == .connectionFailed || sqlState?.hasPrefix("08") == true || sqlState == "57P01" || sqlState == "57P03"
    }
}

/// A DSN with its password replaced, for messages and logs. Handles both `key=value` strings
/// and `postgresql://user:pass@host/db` URIs.
public func redactedDSN(_ dsn: String) -> String {
    if let schemeEnd = dsn.firstRange(of: "://") {
        let rest = dsn[schemeEnd.upperBound...]
        guard let at = rest.firstIndex(of: "@") else { return dsn }
        let userInfo = rest[..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return dsn }
        return String(dsn[..<schemeEnd.upperBound]) + userInfo[..<colon] + ":***" + rest[at...]
    }
    var parts: [String] = []
    for part in dsn.split(separator: " ", omittingEmptySubsequences: true) {
        if part.lowercased().hasPrefix("password=") { parts.append("password=***") } else { parts.append(String(part)) }
    }
    return parts.joined(separator: " ")
}
