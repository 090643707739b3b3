import Foundation
import Logging
import ScanCore
import ScanNATS

/// The agent's side of NATS: one connection that reconnects for ever. Durable events leave the
/// spool for JetStream in order (`Nats-Msg-Id` = event id); track events and heartbeats go out on
/// core NATS, best effort, and are dropped (counted) while NATS is away.
final class Publisher: @unchecked Sendable {
    // @unchecked: cnats objects are thread-safe; counters are guarded by `lock`.
    let connection: NATSConnection
    let jetStream: JetStream
    let subjects: ContractSubjects
    let replicas: Int?
    let spool: Spool
    let logger: Logger
    private let lock = NSLock()
    private var publishedCount = 0
    private var duplicateCount = 0
    private var coreDropped = 0
    private var up = false
    /// True from a failed JetStream publish until the next acknowledgement.
    private var failing = false

    init(config: AgentConfig, spool: Spool, logger: Logger) throws(NATSError) {
        var options = NATSConnection.Options()
        options.name = "scan-agent \(config.camera.site)/\(config.camera.id)"
        options.retryOnFailedConnect = true  // the agent works without NATS and catches up later
        options.connectTimeoutMilliseconds = 1_000
        options.reconnectWaitMilliseconds = 250
        connection = try NATSConnection(url: config.nats.url, options: options)
        jetStream = try connection.jetStream(timeoutMilliseconds: 2_000)
        subjects = ContractSubjects(prefix: config.nats.prefix)
        replicas = config.nats.replicas
        self.spool = spool
        self.logger = logger
    }

    var published: Int { lock.withLock { publishedCount } }
    var duplicates: Int { lock.withLock { duplicateCount } }
    /// `connected`; `degraded` (connected, but JetStream does not acknowledge); `disconnected`.
    var natsState: String {
        guard connection.isConnected else { return "disconnected" }
        return lock.withLock { up || !failing } ? "connected" : "degraded"
    }

    /// Core NATS, no acknowledgement: track events and heartbeats.
    func publishCore(subject: String, bytes: [UInt8]) {
        guard connection.isConnected else {
            lock.withLock { coreDropped += 1 }
            return
        }
        do {
            try connection.publish(subject: subject, bytes: bytes)
        } catch {
            lock.withLock { coreDropped += 1 }
        }
    }

    /// The publisher thread: sends the spool to JetStream until `stop`, then keeps sending until
    /// the spool is empty or `drainSeconds` passed (what is left stays on disk for the next start).
    func run(stop: StopSignal, drainSeconds: Double) {
        var streamChecked = false
        var backoff = 0.25
        var drainDeadline: Date?
        var lastError = ""
        while true {
            if stop.isSet {
                if drainDeadline == nil { drainDeadline = Date(timeIntervalSinceNow: drainSeconds) }
                if spool.depth == 0 || Date() >= drainDeadline! { break }
            }
            if !streamChecked {
                do {
                    try jetStream.ensureStream(subjects.agentStreamSpec(replicas: replicas.map(Int64.init)))
                    streamChecked = true
                } catch {
                    noteDown(error.description, &lastError)
                    if stop.isSet && Date() >= drainDeadline! { break }
                    stop.sleep(seconds: stop.isSet ? 0.1 : backoff)
                    backoff = min(backoff * 2, 2)
                    continue
                }
            }
            let batch = spool.next(limit: 100)
            if batch.isEmpty {
                if stop.isSet { break }
                spool.waitForRecords(seconds: 0.5)
                continue
            }
            var failed = false
            for record in batch {
                if record.subject.isEmpty {  // an unreadable spool line: step over it
                    spool.acknowledge(record)
                    continue
                }
                do {
                    let ack = try jetStream.publish(subject: record.subject, bytes: record.payload, messageID: record.eventId)
                    spool.acknowledge(record)
                    noteUp(&lastError)
                    lock.withLock {
                        publishedCount += 1
                        if ack.duplicate { duplicateCount += 1 }
                    }
                } catch {
                    noteDown(error.description, &lastError)
                    failed = true
                    break
                }
            }
            spool.saveCursor()
            if failed {
                streamChecked = false  // a restarted server may have lost the stream: check it first
                if stop.isSet && Date() >= drainDeadline! { break }
                stop.sleep(seconds: stop.isSet ? 0.1 : backoff)
                backoff = min(backoff * 2, 2)
            } else {
                backoff = 0.25
            }
        }
        spool.saveCursor()
        if spool.depth > 0 {
            logger.warning("stopping with events still in the spool; they are sent at the next start", metadata: ["depth": "\(spool.depth)"])
        }
    }

    private func noteDown(_ failure: String, _ lastError: inout String) {
        let error = connection.isConnected ? failure : "not connected to \(redactedURL(connection.url)) (\(failure))"
        let wasUp = lock.withLock {
            defer {
                up = false
                failing = true
            }
            return up
        }
        if wasUp || lastError.isEmpty {
            logger.warning("JetStream unavailable; events wait in the spool", metadata: ["error": "\(error)", "spool": "\(spool.depth)"])
        }
        lastError = error
    }

    private func noteUp(_ lastError: inout String) {
        let wasUp = lock.withLock {
            defer {
                up = true
                failing = false
            }
            return up
        }
        if !wasUp {
            logger.info("JetStream acknowledges; sending the spool", metadata: ["spool": "\(spool.depth)"])
            lastError = ""
        }
    }
}
