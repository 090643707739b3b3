internal import CNATS

/// A cnats call that failed: the function, what it was asked to do, cnats' status text and,
/// for JetStream, the server's error code. Never carries credentials.
public struct NATSError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case connectionFailed
        case timeout
        case notFound
        case jetStream
        case failed
        /// The server refused the credentials (or the connection's permissions): retrying will not help.
        case authorization
    }

    public var code: Code
    public var function: String
    public var input: String
    public var status: String
    public var jetStreamCode: Int

    public var description: String {
        var text = "\(function) (\(input)): \(status)"
        if jetStreamCode != 0 { text += " [JetStream error \(jetStreamCode)]" }
        return text
    }

    init(function: String, input: String, status: natsStatus, jetStreamCode: jsErrCode = jsErrCode(0)) {
        self.function = function
        self.input = input
        self.jetStreamCode = Int(jetStreamCode.rawValue)
        var text = String(cString: natsStatus_GetText(status))
        var lastStatus = NATS_OK
        if let detail = nats_GetLastError(&lastStatus) {
            let detailText = String(cString: detail)
            if !detailText.isEmpty && detailText != text { text += ": " + detailText }
        }
        self.status = text
        switch status {
        case NATS_CONNECTION_AUTH_FAILED, NATS_NOT_PERMITTED: code = .authorization
        case _ where text.localizedCaseInsensitiveContains("authorization violation"): code = .authorization
        case NATS_TIMEOUT: code = .timeout
        case NATS_NOT_FOUND: code = .notFound
        case NATS_NO_SERVER, NATS_CONNECTION_CLOSED, NATS_CONNECTION_DISCONNECTED, NATS_STALE_CONNECTION:
            code = .connectionFailed
        default: code = jetStreamCode.rawValue != 0 ? .jetStream : .failed
        }
    }

    /// A failure found before any cnats call (a file, a setting).
    init(function: String, input: String, message: String) {
        self.function = function
        self.input = input
        self.status = message
        self.jetStreamCode = 0
        self.code = .failed
    }

    /// Runs a cnats call and throws on anything but NATS_OK.
    static func check(_ function: String, _ input: @autoclosure () -> String, _ status: natsStatus) throws(NATSError) {
        guard status == NATS_OK else { throw NATSError(function: function, input: input(), status: status) }
    }

    static func checkJS(
        _ function: String, _ input: @autoclosure () -> String, _ status: natsStatus, _ jsCode: jsErrCode
    ) throws(NATSError) {
        guard status == NATS_OK else {
            throw NATSError(function: function, input: input(), status: status, jetStreamCode: jsCode)
        }
    }
}

/// Removes user and password from a URL before it appears in a message or log.
public func redactedURL(_ url: String) -> String {
    if url.contains(",") {
        return url.split(separator: ",").map { redactedURL(String($0)) }.joined(separator: ",")
    }
    guard let schemeEnd = url.firstRange(of: "://"), let at = url[schemeEnd.upperBound...].lastIndex(of: "@") else {
        return url
    }
    return String(url[..<schemeEnd.upperBound]) + "***@" + String(url[url.index(after: at)...])
}
