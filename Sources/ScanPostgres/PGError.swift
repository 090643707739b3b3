import Foundation

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

/// A DSN with its secrets replaced by `***`, for messages and logs: the password in a URI's user
/// part, `password` and `sslpassword` in a URI's query, and in `key=value` strings (spaces around
/// `=`, quoted values with escapes). Something that cannot be read as either form is not shown.
public func redactedDSN(_ dsn: String) -> String {
    let secretKeys: Set<String> = ["password", "sslpassword"]
    if let schemeEnd = dsn.firstRange(of: "://") {
        var rest = Substring(dsn[schemeEnd.upperBound...])
        var head = String(dsn[..<schemeEnd.upperBound])
        // user:password@host — the authority ends at the first '/', '?' or '#'.
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        if let at = rest[..<authorityEnd].lastIndex(of: "@") {
            let userInfo = rest[..<at]
            head += (userInfo.firstIndex(of: ":").map { String(userInfo[..<$0]) + ":***" } ?? String(userInfo))
            rest = rest[at...]
        }
        guard let question = rest.firstIndex(of: "?") else { return head + rest }
        let query = rest[rest.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false).map {
            pair -> String in
            // libpq percent-decodes a query's keys: `pass%77ord` is `password`. A key that does not
            // decode is redacted too.
            let raw = String(pair.prefix { $0 != "=" })
            guard let key = raw.removingPercentEncoding?.lowercased() else { return raw + "=***" }
            return secretKeys.contains(key) ? raw + "=***" : String(pair)
        }
        return head + rest[...question] + query.joined(separator: "&")
    }
    // key = value pairs; a value is a word or a single-quoted string with \' and \\ escapes.
    var out = ""
    var index = dsn.startIndex
    func skipSpaces() { while index < dsn.endIndex, dsn[index].isWhitespace { index = dsn.index(after: index) } }
    while true {
        skipSpaces()
        guard index < dsn.endIndex else { break }
        let keyStart = index
        while index < dsn.endIndex, dsn[index] != "=", !dsn[index].isWhitespace { index = dsn.index(after: index) }
        let key = dsn[keyStart..<index].lowercased()
        skipSpaces()
        guard index < dsn.endIndex, dsn[index] == "=" else { return "(a connection string that cannot be shown)" }
        index = dsn.index(after: index)
        skipSpaces()
        let valueStart = index
        if index < dsn.endIndex, dsn[index] == "'" {
            index = dsn.index(after: index)
            var closed = false
            while index < dsn.endIndex {
                if dsn[index] == "\\" {
                    index = dsn.index(after: index)
                    if index < dsn.endIndex { index = dsn.index(after: index) }
                    continue
                }
                if dsn[index] == "'" {
                    index = dsn.index(after: index)
                    closed = true
                    break
                }
                index = dsn.index(after: index)
            }
            guard closed else { return "(a connection string that cannot be shown)" }
        } else {
            while index < dsn.endIndex, !dsn[index].isWhitespace { index = dsn.index(after: index) }
        }
        if !out.isEmpty { out += " " }
        out += secretKeys.contains(key) ? key + "=***" : key + "=" + dsn[valueStart..<index]
    }
    return out
}
