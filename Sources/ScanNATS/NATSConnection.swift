internal import CNATS
import ScanCore
import Synchronization

/// Owns one `natsConnection`. cnats connections are thread-safe, so one may be shared
/// between the capture thread's publisher and the command responder.
public final class NATSConnection: @unchecked Sendable {
    // @unchecked: the only stored state is the cnats handle (thread-safe per cnats' docs) and
    // immutable strings.
    let handle: OpaquePointer
    public let url: String

    public struct Options: Sendable {
        /// Name shown in the server's connection list.
        public var name: String = "scantrack"
        /// How long a connect attempt waits, in milliseconds.
        public var connectTimeoutMilliseconds: Int64 = 2_000
        /// Keep reconnecting for ever (agents and aggregators must outlive a server restart).
        public var reconnectForever: Bool = true
        public var reconnectWaitMilliseconds: Int64 = 250
        /// Bytes cnats buffers while disconnected; 0 disables buffering so that publishes fail fast
        /// and the caller's own durable spool decides.
        public var reconnectBufferBytes: Int32 = 0
        /// Try to connect even when no server answers yet (the connection comes up later).
        public var retryOnFailedConnect: Bool = false
        /// Credentials files and TLS (default: none). A program resolves them (from its flags, the
        /// SCANTRACK_NATS_* environment, its config file) and passes them here; the adapter reads
        /// no environment of its own.
        public var security: NATSSecurity

        public init(security: NATSSecurity = NATSSecurity()) { self.security = security }
    }

    public init(url: String, options: Options = Options()) throws(NATSError) {
        self.url = url
        var opts: OpaquePointer?
        try NATSError.check("natsOptions_Create", "options", natsOptions_Create(&opts))
        guard let opts else {
            throw NATSError(function: "natsOptions_Create", input: "options", status: NATS_NO_MEMORY)
        }
        defer { natsOptions_Destroy(opts) }
        let shown = redactedURL(url)
        let servers = Self.serverList(url)
        if servers.count > 1 {
            // A cluster: connect to any of them; cnats also learns the others from the servers.
            let strings = CStrings()
            try NATSError.check(
                "natsOptions_SetServers", shown,
                natsOptions_SetServers(opts, strings.makeArray(servers), Int32(servers.count)))
        } else {
            try NATSError.check("natsOptions_SetURL", shown, natsOptions_SetURL(opts, url))
        }
        try NATSError.check("natsOptions_SetName", options.name, natsOptions_SetName(opts, options.name))
        try NATSError.check(
            "natsOptions_SetErrorHandler", shown,
            natsOptions_SetErrorHandler(opts, { connection, _, _, _ in ServerErrors.record(connection) }, nil))
        var security = options.security
        if security.inboxPrefix == nil, let user = security.user ?? Self.user(inURL: servers.first ?? url),
            SubjectToken.isValid(user)
        {
            // Replies under the login's own prefix, the one the generated authorization lets it
            // read (docs/security.md): `_INBOX.<user>`.
            security.inboxPrefix = "_INBOX." + user
        }
        try security.apply(to: opts, url: shown)
        try NATSError.check(
            "natsOptions_SetTimeout", shown, natsOptions_SetTimeout(opts, options.connectTimeoutMilliseconds))
        try NATSError.check(
            "natsOptions_SetMaxReconnect", shown, natsOptions_SetMaxReconnect(opts, options.reconnectForever ? -1 : 60))
        try NATSError.check(
            "natsOptions_SetReconnectWait", shown, natsOptions_SetReconnectWait(opts, options.reconnectWaitMilliseconds)
        )
        try NATSError.check(
            "natsOptions_SetReconnectBufSize", shown,
            natsOptions_SetReconnectBufSize(opts, options.reconnectBufferBytes))
        if options.retryOnFailedConnect {
            try NATSError.check(
                "natsOptions_SetRetryOnFailedConnect", shown,
                // With a callback cnats connects in the background and returns at once; without one
                // it would retry inside natsConnection_Connect, for ever when reconnects are unlimited.
                natsOptions_SetRetryOnFailedConnect(opts, true, { _, _ in }, nil))
        }
        var connection: OpaquePointer?
        var status = natsConnection_Connect(&connection, opts)
        // libnats 3.4 sends no signature at all when the nonce's signature begins with a zero
        // byte (its base64 encoder takes a leading 0 for an empty input), so about one NKey or
        // .creds login in 256 is refused. Each attempt signs a new nonce: a few more attempts
        // make that negligible, and credentials that are really wrong still fail every time.
        var attemptsLeft = options.security.signsNonce ? 4 : 0
        while status == NATS_CONNECTION_AUTH_FAILED, attemptsLeft > 0 {
            attemptsLeft -= 1
            connection = nil
            status = natsConnection_Connect(&connection, opts)
        }
        guard status == NATS_OK || (options.retryOnFailedConnect && status == NATS_NOT_YET_CONNECTED),
            let connection
        else {
            throw NATSError(function: "natsConnection_Connect", input: shown, status: status)
        }
        self.handle = connection
        ServerErrors.begin(connection)
    }

    deinit {
        natsConnection_Destroy(handle)
        ServerErrors.forget(handle)
    }

    /// The user of `nats://user:password@host:port`, if the URL names one; nil for a token
    /// (`nats://TOKEN@host`), which must never become part of a subject.
    static func user(inURL url: String) -> String? {
        guard let scheme = url.firstRange(of: "://") else { return nil }
        let rest = url[scheme.upperBound...]
        guard let at = rest.firstIndex(of: "@") else { return nil }
        let credentials = rest[..<at]
        guard let colon = credentials.firstIndex(of: ":") else { return nil }
        let user = credentials[..<colon]
        return user.isEmpty ? nil : String(user)
    }

    /// The servers of a URL that may list several, comma-separated (`nats://a:4222,nats://b:4222`).
    public static func serverList(_ url: String) -> [String] {
        url.split(separator: ",").map { String($0.filter { !$0.isWhitespace }) }.filter { !$0.isEmpty }
    }

    public var isConnected: Bool { natsConnection_Status(handle) == NATS_CONN_STATUS_CONNECTED }

    /// The last error the server reported on this connection, e.g. `Permissions Violation for
    /// Publish to "…"` (a denied publish or subscribe is reported asynchronously); nil when none.
    public var lastError: String? {
        var text: UnsafePointer<CChar>?
        guard natsConnection_GetLastError(handle, &text) != NATS_OK, let text else { return nil }
        let message = String(cString: text)
        return message.isEmpty ? nil : message
    }

    /// What the server may refuse a user (its permissions).
    public enum Permission: String, Sendable {
        case publish = "Publish"
        case subscription = "Subscription"
    }

    /// How many errors the server has reported on this connection so far: a mark for `denial`.
    public var reportedErrors: Int { ServerErrors.count(handle) }

    /// The server's refusal of `subject` reported after `mark` (`reportedErrors` before the call),
    /// as an error that names the subject. A denied publish or subscription is reported
    /// asynchronously: the publish itself only times out, the subscription receives nothing.
    public func denial(_ permission: Permission, subject: String, since mark: Int) -> NATSError? {
        let pattern = "Permissions Violation for \(permission.rawValue) to \"\(subject)\""
        func counted() -> String? {
            let reported = ServerErrors.reported(handle)
            guard reported.count > mark else { return nil }
            return reported.recent.suffix(reported.count - mark).last { $0.contains(pattern) }
        }
        var found = counted()
        // cnats keeps the error's text at once (before the PONG that ends a flush is read) but
        // calls the error handler on its own thread, later. When the connection's last error is a
        // refusal (of this subject, or of another one that came after it), wait up to 1 s for the
        // handler: its count tells a new refusal from an old one.
        if found == nil, lastError?.contains("Permissions Violation") == true {
            for _ in 0..<100 where found == nil {
                nats_Sleep(10)
                found = counted()
            }
        }
        guard let text = found else { return nil }
        var error = NATSError(
            function: permission == .publish ? "publish" : "subscribe", input: subject,
            message: "denied by the server (\(text)): this user's permissions do not allow it")
        error.code = .authorization
        return error
    }

    /// Core NATS publish: best effort, no acknowledgement.
    public func publish(subject: String, bytes: [UInt8]) throws(NATSError) {
        let status = bytes.withUnsafeBytes { raw in
            natsConnection_Publish(handle, subject, raw.baseAddress, Int32(raw.count))
        }
        try NATSError.check("natsConnection_Publish", subject, status)
    }

    public func flush(timeoutMilliseconds: Int64 = 2_000) throws(NATSError) {
        try NATSError.check(
            "natsConnection_FlushTimeout", redactedURL(url), natsConnection_FlushTimeout(handle, timeoutMilliseconds))
    }

    /// Request/reply: sends `bytes` and waits for one answer.
    public func request(subject: String, bytes: [UInt8], timeoutMilliseconds: Int64) throws(NATSError) -> NATSMessage {
        var reply: OpaquePointer?
        let status = bytes.withUnsafeBytes { raw in
            natsConnection_Request(&reply, handle, subject, raw.baseAddress, Int32(raw.count), timeoutMilliseconds)
        }
        try NATSError.check("natsConnection_Request", subject, status)
        guard let reply else { throw NATSError(function: "natsConnection_Request", input: subject, status: NATS_ERR) }
        return NATSMessage(owning: reply)
    }

    /// A synchronous subscription; read it with `next(timeoutMilliseconds:)`.
    public func subscribe(subject: String) throws(NATSError) -> NATSSubscription {
        var sub: OpaquePointer?
        try NATSError.check(
            "natsConnection_SubscribeSync", subject, natsConnection_SubscribeSync(&sub, handle, subject))
        guard let sub else {
            throw NATSError(function: "natsConnection_SubscribeSync", input: subject, status: NATS_ERR)
        }
        return NATSSubscription(owning: sub, subject: subject, connection: self)
    }

    /// A JetStream context on this connection.
    public func jetStream(timeoutMilliseconds: Int64 = 5_000) throws(NATSError) -> JetStream {
        try JetStream(connection: self, timeoutMilliseconds: timeoutMilliseconds)
    }
}

/// Owns one `natsMsg`.
public final class NATSMessage: @unchecked Sendable {
    // @unchecked: the message is immutable after receipt; ack/nak calls are thread-safe in cnats.
    let handle: OpaquePointer

    init(owning handle: OpaquePointer) { self.handle = handle }
    deinit { natsMsg_Destroy(handle) }

    public var subject: String { String(cString: natsMsg_GetSubject(handle)) }
    public var replySubject: String? { natsMsg_GetReply(handle).map { String(cString: $0) } }

    public var bytes: [UInt8] {
        let count = Int(natsMsg_GetDataLength(handle))
        guard count > 0, let data = natsMsg_GetData(handle) else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: count) {
            Array(UnsafeBufferPointer(start: $0, count: count))
        }
    }

    public func header(_ key: String) -> String? {
        var value: UnsafePointer<CChar>?
        guard natsMsgHeader_Get(handle, key, &value) == NATS_OK, let value else { return nil }
        return String(cString: value)
    }
}

/// Owns one synchronous `natsSubscription`.
public final class NATSSubscription: @unchecked Sendable {
    // @unchecked: cnats subscriptions are thread-safe; `next` is meant for one reader.
    let handle: OpaquePointer
    public let subject: String
    private let connection: NATSConnection  // keeps the connection alive as long as the subscription

    init(owning handle: OpaquePointer, subject: String, connection: NATSConnection) {
        self.handle = handle
        self.subject = subject
        self.connection = connection
    }

    deinit {
        natsSubscription_Unsubscribe(handle)
        natsSubscription_Destroy(handle)
    }

    /// The next message, or nil when none arrives in time.
    public func next(timeoutMilliseconds: Int64) throws(NATSError) -> NATSMessage? {
        var message: OpaquePointer?
        let status = natsSubscription_NextMsg(&message, handle, timeoutMilliseconds)
        if status == NATS_TIMEOUT { return nil }
        try NATSError.check("natsSubscription_NextMsg", subject, status)
        return message.map { NATSMessage(owning: $0) }
    }

    /// Answers a request received on this subscription.
    public func respond(to message: NATSMessage, bytes: [UInt8]) throws(NATSError) {
        guard let reply = message.replySubject else { return }
        try connection.publish(subject: reply, bytes: bytes)
    }
}

/// The errors servers report asynchronously (`-ERR`), per connection. cnats keeps only the
/// connection's last text, which stays until the next error, and calls its error handler for each
/// one, so this counts them and keeps their texts. Keyed by the cnats handle, with no closure: a
/// callback that comes after the connection is gone finds nothing to touch.
enum ServerErrors {
    struct Entry {
        var count = 0
        var recent: [String] = []
    }

    static let entries = Mutex<[UInt: Entry]>([:])

    static func key(_ connection: OpaquePointer) -> UInt {
        UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection)))
    }

    static func record(_ connection: OpaquePointer?) {
        guard let connection else { return }
        // cnats hands the handler this error's own text in the thread's last error (the
        // connection's may already hold a later one).
        var status = NATS_OK
        var message = nats_GetLastError(&status).map { String(cString: $0) } ?? ""
        if message.isEmpty {
            var text: UnsafePointer<CChar>?
            _ = natsConnection_GetLastError(connection, &text)
            message = text.map { String(cString: $0) } ?? ""
        }
        entries.withLock { entries in
            // Only connections still open are known: a late callback adds nothing.
            guard var entry = entries[key(connection)] else { return }
            entry.count += 1
            entry.recent.append(message)
            if entry.recent.count > 16 { entry.recent.removeFirst(entry.recent.count - 16) }
            entries[key(connection)] = entry
        }
    }

    static func begin(_ connection: OpaquePointer) {
        entries.withLock { $0[key(connection)] = Entry() }
    }

    static func count(_ connection: OpaquePointer) -> Int {
        entries.withLock { $0[key(connection)]?.count ?? 0 }
    }

    static func reported(_ connection: OpaquePointer) -> Entry {
        entries.withLock { $0[key(connection)] ?? Entry() }
    }

    static func forget(_ connection: OpaquePointer) {
        _ = entries.withLock { $0.removeValue(forKey: key(connection)) }
    }
}
