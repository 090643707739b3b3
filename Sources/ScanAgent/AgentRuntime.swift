import Foundation
import Logging
import ScanCore
import ScanNATS
import ScanZBar

/// What other threads hand to the decoding thread, applied between two frames.
final class Inbox: @unchecked Sendable {
    // @unchecked: guarded by the lock.
    struct PendingCommand {
        var command: AgentCommand
        var reply: @Sendable ([UInt8]) -> Void
    }
    private let lock = NSLock()
    private var commands: [PendingCommand] = []
    private var ruleset: (Ruleset, String)?

    func post(_ command: AgentCommand, reply: @escaping @Sendable ([UInt8]) -> Void) {
        lock.withLock { commands.append(PendingCommand(command: command, reply: reply)) }
    }
    func post(ruleset: Ruleset, source: String) { lock.withLock { self.ruleset = (ruleset, source) } }
    func takeCommands() -> [PendingCommand] {
        lock.withLock {
            defer { commands.removeAll() }
            return commands
        }
    }
    func takeRuleset() -> (Ruleset, String)? {
        lock.withLock {
            defer { ruleset = nil }
            return ruleset
        }
    }
}

/// The last status, for the `status` command (answered on the command thread).
final class StatusBoard: @unchecked Sendable {
    // @unchecked: guarded by the lock.
    private let lock = NSLock()
    private var status = AgentStatus()
    var current: AgentStatus { lock.withLock { status } }
    func update(_ body: (inout AgentStatus) -> Void) { lock.withLock { body(&status) } }
}

/// `scan-agent run`: one camera. Threads: capture (the source), decoding (the caller's thread:
/// decode, track, rules, sessions, spool), publisher (spool → JetStream), commands (request/reply)
/// and rules (the bucket, polled). Decoding never waits for the network: durable events are
/// appended to the spool, core NATS publishes never block.
final class AgentRuntime: @unchecked Sendable {
    // @unchecked: the mutable decoding state (pipeline, decoder, counters, `paused`) is touched by
    // the decoding thread only; the command and rules threads use only the thread-safe members
    // (inbox, board, publisher, stop) and immutable settings.
    let config: AgentConfig
    let logger: Logger
    let subjects: ContractSubjects
    let stop = StopSignal()
    /// Set only once the decoding thread has routed its last events: a publisher that stopped
    /// with `stop` could leave the tracks ended at shutdown in the spool.
    private let publisherStop = StopSignal()
    let inbox = Inbox()
    let board = StatusBoard()
    let spool: Spool
    let publisher: Publisher
    let source: any FrameSource
    let queue: FrameQueue
    let runId: String
    let drainSeconds: Double
    private var pipeline: ScanPipeline
    private let decoder: CameraDecoder
    private let checkpoint: ClipCheckpoint?
    private var rulesSource: String
    private var paused = false
    private var lastTime: Timestamp

    init(
        config: AgentConfig, ruleset: Ruleset, rulesSource: String, spool: Spool, publisher: Publisher,
        source: any FrameSource, runId: String, checkpoint: ClipCheckpoint?, drainSeconds: Double, logger: Logger
    ) throws {
        self.config = config
        self.logger = logger
        self.subjects = ContractSubjects(prefix: config.nats.prefix)
        self.spool = spool
        self.publisher = publisher
        self.source = source
        self.runId = runId
        self.checkpoint = checkpoint
        self.drainSeconds = drainSeconds
        self.rulesSource = rulesSource
        self.queue = FrameQueue(capacity: 2, blocking: source.blocking)
        self.decoder = try CameraDecoder(config: config.decoder, camera: config.camera.id)
        self.pipeline = ScanPipeline(
            camera: config.camera, tracking: config.tracking,
            normalizer: CodeNormalizer(upcAsEAN13: config.decoder.upcAsEAN13), session: config.session,
            rules: ruleset, idPrefix: "\(config.camera.id)-\(runId)")
        self.lastTime = wallClock()
        board.update {
            $0.runId = runId
            $0.sourceType = source.kind
            $0.rulesRevision = ruleset.revision
            $0.rulesSource = rulesSource
        }
    }

    /// Runs until a signal or the end of the stream; returns once events are flushed or spooled.
    func run() {
        let threads = [
            startThread("capture") { [source, queue, stop] in source.capture(into: queue, stop: stop) },
            startThread("publisher") { [publisher, publisherStop, drainSeconds] in
                publisher.run(stop: publisherStop, drainSeconds: drainSeconds)
            },
            startThread("commands") { [self] in self.serveCommands() },
            startThread("rules") { [self] in self.watchRules() },
        ]
        logger.info(
            "scan-agent running",
            metadata: [
                "camera": "\(config.camera.id)", "site": "\(config.camera.site)", "source": "\(source.kind)",
                "runId": "\(runId)", "nats": "\(redactedURL(publisher.connection.url))", "spool": "\(spool.directory)",
                "rules": "\(pipeline.rules.revision)",
            ])
        decodeLoop()
        // End what is open, then let the publisher drain (bounded) and the other threads go.
        let time = source.kind == "clip" ? lastTime : wallClock()
        route(pipeline.finish(time: time))
        stop.set()
        publisherStop.set()
        queue.finish()
        spool.wake()
        for thread in threads { thread.wait() }
        checkpoint?.remove()
        publishHeartbeat(sequence: heartbeatSequence + 1)
        try? publisher.connection.flush(timeoutMilliseconds: 500)
        logger.info(
            "scan-agent stopped",
            metadata: [
                "frames": "\(framesProcessed)", "sightings": "\(sightings)", "published": "\(publisher.published)",
                "duplicates": "\(publisher.duplicates)", "spool": "\(spool.depth)", "spoolDropped": "\(spool.dropped)",
                "framesDropped": "\(queue.dropped)", "decoding": "\(decoder.profile.summary)",
            ])
    }

    func requestStop() {
        stop.set()
        queue.finish()
    }

    // MARK: decoding thread

    private var framesProcessed = 0
    private var spoolLossLogged: Date?
    private var sightings = 0
    private var heartbeatSequence = 0
    private var window = (frames: 0, received: 0, started: ContinuousClock.now)

    private func decodeLoop() {
        let interval = Duration.milliseconds(Int64(config.heartbeatSeconds * 1000))
        var nextHeartbeat = ContinuousClock.now + interval  // the first one has a full interval to measure
        var lastCheckpoint = ContinuousClock.now
        while !stop.isSet {
            applyInbox()
            switch queue.take(timeout: 0.1) {
            case .ended:
                return
            case .timedOut:
                if source.kind != "clip" { route(pipeline.tick(time: wallClock())) }
            case .frame(let frame):
                lastTime = frame.time
                if paused {
                    route(pipeline.tick(time: frame.time))
                } else {
                    process(frame)
                }
                if let checkpoint, ContinuousClock.now - lastCheckpoint > .seconds(1) {
                    checkpoint.save(frame: frame.index)
                    lastCheckpoint = .now
                }
            }
            if ContinuousClock.now >= nextHeartbeat {
                heartbeatSequence += 1
                publishHeartbeat(sequence: heartbeatSequence)
                nextHeartbeat = .now + interval
            }
        }
    }

    private func process(_ frame: CapturedFrame) {
        let detections: [Detection]
        do {
            detections = try decoder.decode(frame.image, expected: pipeline.tracker.expected(at: frame.index))
        } catch {
            logger.error("frame not decoded", metadata: ["frame": "\(frame.index)", "error": "\(error)"])
            return
        }
        window.frames += 1
        framesProcessed += 1
        route(pipeline.process(frame: frame.index, time: frame.time, detections: detections))
    }

    /// Durable events into the spool (the publisher sends them); the rest straight to core NATS.
    private func route(_ events: [AgentEvent]) {
        let camera = config.camera
        for event in events {
            let subject = subjects.agent(event.subjectFamily, site: camera.site, camera: camera.id)
            if event.isDurable {
                if event.kind == .sighting { sightings += 1 }
                let droppedBefore = spool.dropped
                _ = spool.append(subject: subject, eventId: event.eventId, payload: event.json)
                let droppedNow = spool.dropped
                if droppedNow > droppedBefore, spoolLossLogged.map({ Date().timeIntervalSince($0) >= 10 }) ?? true {
                    spoolLossLogged = Date()  // at most one line per 10 s while the spool stays full
                    logger.error(
                        "spool full; events lost",
                        metadata: [
                            "lost": "\(droppedNow - droppedBefore)", "lostSinceStart": "\(droppedNow)",
                            "whenFull": "\(config.spool.whenFull)", "maxBytes": "\(config.spool.maxBytes)",
                        ])
                }
            } else {
                publisher.publishCore(subject: subject, bytes: event.json)
            }
        }
    }

    private func applyInbox() {
        if let (ruleset, source) = inbox.takeRuleset() {
            pipeline.rules = ruleset
            rulesSource = source
            logger.info("ruleset swapped", metadata: ["revision": "\(ruleset.revision)", "source": "\(source)"])
        }
        for pending in inbox.takeCommands() {
            let time = source.kind == "clip" ? lastTime : wallClock()
            let camera = config.camera
            switch pending.command {
            case .sessionStart(let orderId):
                route(pipeline.startSession(orderId: orderId, at: time))
                let id = pipeline.currentSessionId
                pending.reply(commandReply(verb: "session.start", camera: camera) { $0.field("sessionId", id); $0.field("orderId", orderId) })
            case .sessionStop:
                guard let id = pipeline.currentSessionId else {
                    pending.reply(CommandError(verb: "session.stop", message: "no session is running").reply(camera: camera))
                    continue
                }
                route(pipeline.stopSession(at: time))
                pending.reply(commandReply(verb: "session.stop", camera: camera) { $0.field("sessionId", id) })
            case .pause:
                if !paused { route(pipeline.endTracks(time: time)) }
                paused = true
                pending.reply(commandReply(verb: "pause", camera: camera) { $0.field("paused", true) })
            case .resume:
                paused = false
                pending.reply(commandReply(verb: "resume", camera: camera) { $0.field("paused", false) })
            case .status:
                let status = snapshot()
                pending.reply(commandReply(verb: "status", camera: camera) { status.fields(&$0) })
            }
        }
    }

    private func snapshot() -> AgentStatus {
        var status = board.current
        status.sourceState = source.state
        status.framesIn = queue.received
        status.framesProcessed = framesProcessed
        status.framesDropped = queue.dropped
        status.liveTracks = pipeline.liveTracks
        status.sessionId = pipeline.currentSessionId
        status.paused = paused
        status.spoolDepth = spool.depth
        status.spoolBytes = spool.pendingBytes
        status.spoolDropped = spool.dropped
        status.nats = publisher.natsState
        status.published = publisher.published
        status.rulesRevision = pipeline.rules.revision
        status.rulesSource = rulesSource
        return status
    }

    private func publishHeartbeat(sequence: Int) {
        let elapsed = (ContinuousClock.now - window.started).seconds
        let received = queue.received
        var status = snapshot()
        if elapsed > 0 {
            status.fpsIn = Double(received - window.received) / elapsed
            status.fpsProcessed = Double(window.frames) / elapsed
        }
        let decoding = decoder.profile.window
        if !decoding.latencies.isEmpty {
            let total = decoding.latencies.reduce(0, +)
            status.decodeMillisecondsAverage = total * 1000 / Double(decoding.latencies.count)
            status.decodeMillisecondsMax = (decoding.latencies.max() ?? 0) * 1000
            status.decodeMillisecondsP50 = DecodeProfile.quantile(decoding.latencies, 0.5) * 1000
            status.decodeMillisecondsP99 = DecodeProfile.quantile(decoding.latencies, 0.99) * 1000
            status.decodeFps = total > 0 ? Double(decoding.latencies.count) / total : 0
        }
        status.decoderMode = config.decoder.mode.rawValue
        status.decoderThreads = decoder.threads
        status.scanned = DecodeProfile.coverage(decoding.scanned, areaPixels: decoding.areaPixels).map {
            AgentStatus.ScannedShare(purpose: $0.0.rawValue, share: $0.1)
        }
        board.update { $0 = status }
        window = (0, received, ContinuousClock.now)
        decoder.resetProfileWindow()
        let event = status.event(factory: pipeline.factory, time: wallClock(), sequence: sequence)
        publisher.publishCore(subject: subjects.agent("status", site: config.camera.site, camera: config.camera.id), bytes: event.json)
    }

    // MARK: command thread

    private func serveCommands() {
        let camera = config.camera
        var subscribed: NATSSubscription?
        var lastError = ""
        while subscribed == nil && !stop.isSet {
            do {
                subscribed = try publisher.connection.subscribe(subject: subjects.commands(site: camera.site, camera: camera.id))
            } catch {
                if error.description != lastError {
                    logger.warning("cannot listen for commands yet; retrying", metadata: ["error": "\(error)"])
                    lastError = error.description
                }
                stop.sleep(seconds: 1)
            }
        }
        guard let subscription = subscribed else { return }
        while !stop.isSet {
            let message: NATSMessage?
            do {
                message = try subscription.next(timeoutMilliseconds: 250)
            } catch {
                stop.sleep(seconds: 0.25)
                continue
            }
            guard let message else { continue }
            let verb = subjects.verb(ofCommandSubject: message.subject, site: camera.site, camera: camera.id) ?? ""
            let reply: @Sendable ([UInt8]) -> Void = { bytes in try? subscription.respond(to: message, bytes: bytes) }
            switch AgentCommand.parse(verb: verb, body: message.bytes) {
            case .failure(let error):
                logger.warning("bad command", metadata: ["subject": "\(message.subject)", "error": "\(error.message)"])
                reply(error.reply(camera: camera))
            case .success(let command):
                inbox.post(command, reply: reply)
            }
        }
    }

    // MARK: rules thread

    /// Polls the rules bucket every 2 s (a watch is an ordered consumer that must be rebuilt after
    /// every reconnect; one `get` at this rate costs nothing and cannot fall behind).
    private func watchRules() {
        var bucket: KeyValueBucket?
        var seen: UInt64 = ruleCache.revision ?? 0
        var lastError = ""
        while !stop.isSet {
            if publisher.connection.isConnected {
                do {
                    if bucket == nil { bucket = try publisher.jetStream.keyValue(bucket: subjects.rulesBucket, replicas: publisher.replicas ?? 1) }
                    if let entry = try bucket?.get(ContractSubjects.rulesKey), !entry.deleted, entry.revision != seen {
                        seen = entry.revision
                        apply(entry)
                    }
                    lastError = ""
                } catch {
                    if error.description != lastError {
                        logger.warning("cannot read the rules bucket", metadata: ["error": "\(error)"])
                        lastError = error.description
                    }
                    bucket = nil
                }
            }
            stop.sleep(seconds: 2)
        }
    }

    private var ruleCache: RuleCache { RuleCache(directory: config.spool.dir) }

    private func apply(_ entry: KeyValueEntry) {
        let revision = String(entry.revision)
        do {
            let ruleset = try Ruleset.parse(entry.value, file: "\(subjects.rulesBucket)/\(ContractSubjects.rulesKey)", revision: revision)
            ruleCache.save(entry.value, revision: entry.revision)
            inbox.post(ruleset: ruleset, source: "bucket")
            board.update { $0.rulesError = nil }
        } catch {
            // Keep running the last good ruleset, and say why the new one was refused.
            logger.error("ruleset refused; keeping the running one", metadata: ["revision": "\(revision)", "error": "\(error.description)"])
            board.update { $0.rulesError = "revision \(revision): \(error.description)" }
        }
    }
}
