import Foundation
import ScanAgentRuntime
import ScanCore
import ScanNATS
import ScanAgentConfig

/// The agent's side of NATS, behind the runtime's ports: one connection that reconnects for
/// ever. Durable events go to JetStream (`Nats-Msg-Id` = event id), track events and heartbeats
/// to core NATS (best effort), commands arrive by request/reply, and the ruleset is read from
/// the rules bucket.
final class NATSAgentLink: EventBus, CommandFeed, RulesFeed, BeltFeed, @unchecked Sendable {
    // @unchecked: cnats objects are thread-safe; `subscription` and `bucket` are guarded by
    // `lock` (each is used by one service thread, made lazily).
    let connection: NATSConnection
    let jetStream: JetStream
    let subjects: ContractSubjects
    let camera: CameraIdentity
    let replicas: Int?
    private let lock = NSLock()
    private var subscription: NATSSubscription?
    private var beltSubscription: NATSSubscription?
    private var bucket: KeyValueBucket?

    init(config: AgentConfig) throws(NATSError) {
        var options = NATSConnection.Options()
        options.name = "scan-agent \(config.camera.site)/\(config.camera.id)"
        options.retryOnFailedConnect = true  // the agent works without NATS and catches up later
        options.connectTimeoutMilliseconds = 1_000
        options.reconnectWaitMilliseconds = 250
        options.security = NATSSecurity.fromEnvironment(ProcessInfo.processInfo.environment).overridden(
            by: NATSSecurity(
                credsFile: config.nats.credsFile, nkeySeedFile: config.nats.nkeySeedFile, caFile: config.nats.tlsCA,
                certFile: config.nats.tlsCert, keyFile: config.nats.tlsKey, inboxPrefix: config.nats.inboxPrefix,
                user: config.nats.user, passwordFile: config.nats.passwordFile, tokenFile: config.nats.tokenFile))
        if options.security.inboxPrefix == nil {
            options.security.inboxPrefix = Self.defaultInboxPrefix(config.camera)
        }
        // One attempt first: a refused login or a bad certificate is an error now, not a retry
        // loop; only a server that is not there yet is waited for.
        var once = options
        once.retryOnFailedConnect = false
        do {
            connection = try NATSConnection(url: config.nats.url, options: once)
        } catch  where error.code == .connectionFailed {
            connection = try NATSConnection(url: config.nats.url, options: options)
        }
        jetStream = try connection.jetStream(timeoutMilliseconds: 2_000)
        subjects = ContractSubjects(prefix: config.nats.prefix)
        camera = config.camera
        replicas = config.nats.replicas
    }

    /// Replies to a camera's requests arrive under `_INBOX.<site>.<camera>`: a server may then
    /// let each camera read its own replies only (docker/nats/nats-server.conf).
    static func defaultInboxPrefix(_ camera: CameraIdentity) -> String { "_INBOX.\(camera.site).\(camera.id)" }

    // MARK: EventBus

    var isConnected: Bool { connection.isConnected }
    var address: String { redactedURL(connection.url) }

    func publishCore(subject: String, bytes: [UInt8]) throws {
        guard connection.isConnected else { throw NotConnected(address: address) }
        try connection.publish(subject: subject, bytes: bytes)
    }

    func prepareStream() throws {
        // The camera's own stream, when the aggregator made one from the topology (docs/security.md,
        // "One sender cannot starve the others"): the agent never makes or changes it.
        let own = try subjects.cameraStream(site: camera.site, camera: camera.id)
        if (try? jetStream.streamFacts(own)) != nil { return }
        let spec = subjects.agentStreamSpec(replicas: replicas.map(Int64.init))
        if (try? jetStream.streamFacts(spec.name))?.subjects == [subjects.retiredAgentStreamSubject] {
            throw NoStreamYet(camera: "\(camera.site)/\(camera.id)", stream: own)
        }
        do {
            try jetStream.ensureStream(spec)
        } catch {
            // With least privilege on the bus (docker/nats/nats-server.conf) a camera may not create
            // or change the stream: the one the aggregator made is used.
            guard (try? jetStream.streamFacts(spec.name)) != nil else { throw error }
        }
    }

    func publishDurable(subject: String, bytes: [UInt8], messageID: String, trace: TraceContext?) throws -> Bool {
        let headers = trace.map { [(name: TraceContext.header, value: $0.traceparent)] } ?? []
        return try jetStream.publish(subject: subject, bytes: bytes, messageID: messageID, headers: headers).duplicate
    }

    func flush(timeout: Duration) {
        try? connection.flush(timeoutMilliseconds: Int64(timeout.seconds * 1000))
    }

    // MARK: CommandFeed

    /// A subscription to `subject`, checked: a denied one would receive nothing, silently, so
    /// the server is asked now and the caller tries again later (permissions may be reloaded).
    private func subscribeChecked(_ subject: String) throws -> NATSSubscription {
        let mark = connection.reportedErrors
        let made = try connection.subscribe(subject: subject)
        try connection.flush()
        if let denied = connection.denial(.subscription, subject: subject, since: mark) { throw denied }
        return made
    }

    func next(timeout: Duration) throws -> IncomingCommand? {
        let listening = try lock.withLock { () throws -> NATSSubscription in
            if let subscription { return subscription }
            let made = try subscribeChecked(try subjects.commands(site: camera.site, camera: camera.id))
            subscription = made
            return made
        }
        guard let message = try listening.next(timeoutMilliseconds: Int64(timeout.seconds * 1000)) else { return nil }
        let verb = subjects.verb(ofCommandSubject: message.subject, site: camera.site, camera: camera.id) ?? ""
        return IncomingCommand(subject: message.subject, verb: verb, body: message.bytes) { bytes in
            try? listening.respond(to: message, bytes: bytes)
        }
    }

    // MARK: BeltFeed

    func nextReading(timeout: Duration) throws -> [UInt8]? {
        let listening = try lock.withLock { () throws -> NATSSubscription in
            if let beltSubscription { return beltSubscription }
            let made = try subscribeChecked(try subjects.belt(site: camera.site, lane: camera.lane ?? ""))
            beltSubscription = made
            return made
        }
        return try listening.next(timeoutMilliseconds: Int64(timeout.seconds * 1000))?.bytes
    }

    // MARK: RulesFeed

    func current() throws -> PublishedRules? {
        guard connection.isConnected else { return nil }
        let mark = connection.reportedErrors
        do {
            let rules = try lock.withLock { () throws -> KeyValueBucket in
                if let bucket { return bucket }
                let made = try jetStream.keyValue(bucket: subjects.rulesBucket, replicas: replicas ?? 1)
                bucket = made
                return made
            }
            guard let entry = try rules.get(ContractSubjects.rulesKey), !entry.deleted else { return nil }
            return PublishedRules(bytes: entry.value, revision: entry.revision)
        } catch {
            lock.withLock { bucket = nil }  // bound again on the next read
            // A missing bucket is created here, which a camera's user may not do (least privilege).
            let create = "$JS.API.STREAM.CREATE.KV_\(subjects.rulesBucket)"
            if let denied = connection.denial(.publish, subject: create, since: mark) {
                throw RulesBucketMissing(bucket: subjects.rulesBucket, denial: denied)
            }
            throw error
        }
    }
}

/// The rules bucket is not there and this user may not create it.
struct RulesBucketMissing: Error, CustomStringConvertible {
    let bucket: String
    let denial: NATSError
    var description: String {
        "the rules bucket \(bucket) does not exist and this user may not create it (\(denial)); "
            + "`scanadmin rules add` or `scanadmin rules publish` makes it"
    }
}

/// A core publish while the connection is down (dropped, not buffered: the heartbeat shows it).
struct NotConnected: Error, CustomStringConvertible {
    let address: String
    var description: String { "not connected to \(address)" }
}

/// The senders have streams of their own and this camera has none yet: it is not in the topology
/// the aggregator follows (or the aggregator has not read it yet). Its events wait in the spool.
struct NoStreamYet: Error, CustomStringConvertible {
    let camera: String
    let stream: String
    var description: String {
        "no stream takes camera \(camera)'s events yet: cameras have streams of their own (\(stream) would be its), "
            + "made by the aggregator for the cameras of its topology; its events wait in the spool"
    }
}
