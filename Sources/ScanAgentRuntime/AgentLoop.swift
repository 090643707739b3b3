import Foundation
import Logging
import ScanCore
import ScanServices
import ScanAgentConfig
import ScanEvents
import ScanPipeline
import ScanRules
import ScanVision

/// What other threads hand to the decoding thread, applied between two frames.
public final class Inbox: @unchecked Sendable {
    // @unchecked: guarded by the lock.
    struct PendingCommand {
        var command: AgentCommand
        var reply: @Sendable ([UInt8]) -> Void
    }
    private let lock = NSLock()
    private var commands: [PendingCommand] = []
    private var ruleset: (Ruleset, String)?
    private var belt: [(reading: BeltReading, arrived: Timestamp)] = []

    public init() {}

    /// A belt reading, with when it arrived.
    public func post(belt reading: BeltReading, arrived: Timestamp) {
        lock.withLock {
            belt.append((reading, arrived))
            if belt.count > 64 { belt.removeFirst(belt.count - 64) }  // a burst: the latest count
        }
    }
    func takeBelt() -> [(reading: BeltReading, arrived: Timestamp)] {
        lock.withLock {
            defer { belt.removeAll() }
            return belt
        }
    }

    public func post(_ command: AgentCommand, reply: @escaping @Sendable ([UInt8]) -> Void) {
        lock.withLock { commands.append(PendingCommand(command: command, reply: reply)) }
    }
    public func post(ruleset: Ruleset, source: String) { lock.withLock { self.ruleset = (ruleset, source) } }
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

/// The last status (answered by `status`, written into heartbeats); the rules service notes a
/// refused ruleset here.
public final class StatusBoard: @unchecked Sendable {
    // @unchecked: guarded by the lock.
    private let lock = NSLock()
    private var status = AgentStatus()
    public init() {}
    public var current: AgentStatus { lock.withLock { status } }
    public func update(_ body: (inout AgentStatus) -> Void) { lock.withLock { body(&status) } }
}

/// What the publisher reports for the heartbeat: its link state and what it sent.
public final class DeliveryState: @unchecked Sendable {
    // @unchecked: guarded by the lock.
    private let lock = NSLock()
    private var publishedCount = 0
    private var duplicateCount = 0
    private var acknowledging = false
    private var failing = false
    public init() {}

    public var published: Int { lock.withLock { publishedCount } }
    public var duplicates: Int { lock.withLock { duplicateCount } }

    /// `connected`; `degraded` (connected, but JetStream does not acknowledge); `disconnected`.
    public func linkState(connected: Bool) -> String {
        guard connected else { return LinkState.disconnected.rawValue }
        return (lock.withLock { acknowledging || !failing } ? LinkState.connected : .degraded).rawValue
    }

    /// One acknowledgement; true when the link was down before it.
    func acknowledged(duplicate: Bool) -> Bool {
        lock.withLock {
            publishedCount += 1
            if duplicate { duplicateCount += 1 }
            defer {
                acknowledging = true
                failing = false
            }
            return !acknowledging
        }
    }

    /// One failed publish; true when the link was up before it.
    func failed() -> Bool {
        lock.withLock {
            defer {
                acknowledging = false
                failing = true
            }
            return acknowledging
        }
    }
}

/// The decoding thread's work, one step at a time: a frame, a wait without a frame, the
/// commands and ruleset other threads posted, the heartbeat when due, and the end. Decoding
/// never waits for the network: durable events go to the sink (the spool), the rest to the bus's
/// core publish, which never blocks. `DecodingService` drives it from the frame queue; tests
/// drive it step by step with a manual clock.
public final class AgentLoop: @unchecked Sendable {
    // @unchecked: the mutable state is touched by the decoding thread only; other threads use
    // `inbox` and `board`, which are thread-safe.
    public struct Settings: Sendable {
        public var config: AgentConfig
        public var runId: String
        public var rulesSource: String
        public init(config: AgentConfig, runId: String, rulesSource: String) {
            self.config = config
            self.runId = runId
            self.rulesSource = rulesSource
        }
    }

    public let inbox = Inbox()
    public let board = StatusBoard()
    public let config: AgentConfig
    public let runId: String
    private let subjects: ContractSubjects
    /// This camera's subject of each event family, built once through the checked builder (the
    /// config's ids were checked as tokens when it was read, so none is missing in practice).
    private let ownSubjects: [SubjectFamily: String]
    /// Where this agent's decisions go (its lane's), when it is on a lane.
    public var decisionSubject: String? { ownSubjects[.decision] }
    /// Every subject this agent publishes its durable events on.
    public var publishedSubjects: Set<String> { Set(ownSubjects.values) }
    /// Subjects under these are this agent's too: its pictures' chunks in the images bucket.
    public var publishedPrefixes: [String] { imageBucket == nil ? [] : [ImageBucketWriter.chunkPrefix(config.camera)] }
    /// Keeps parcel and no-read pictures in the images bucket (`images.keep`); nil: none kept.
    public let imageBucket: ImageBucketWriter?
    private let source: any FrameSource
    private let queue: FrameQueue
    private let decoder: any FrameDecoding
    private let sink: any DurableSink
    private let bus: any EventBus
    private let delivery: DeliveryState
    private let clock: any AgentClock
    private let checkpoint: ClipCheckpoint?
    private let images: (any NoReadImages)?
    private let previews: (any PreviewEncoder)?
    /// The last frame taken from the queue, for `snapshot`.
    private var lastFrame: CapturedFrame?
    /// The viewers' leases still running (until when, on `clock.elapsed`) and the last preview sent.
    private var previewLeases: [(until: Duration, lease: PreviewLease)] = []
    private var lastPreview: Duration?
    private let logger: Logger
    private var pipeline: ScanPipeline
    /// The belt's speed from its subject (`decision.beltFromBus`); nil otherwise.
    private var belt: BeltSpeed?
    private var rulesSource: String
    private var paused = false
    /// The camera is lost (its source reconnects): `reading.paused` was sent for it.
    private var sourceLost = false
    private var readingEvents = 0
    /// The time of the last frame: a clip's events keep the clip's times to the end.
    private var lastFrameTime: Timestamp?

    public private(set) var framesProcessed = 0
    public private(set) var sightings = 0
    public private(set) var noReads = 0
    /// Frames the decoder failed on (logged at debug, counted in the heartbeat).
    public private(set) var decodeFailures = 0
    private var heartbeatSequence = 0
    private var nextHeartbeat: Duration
    private var lastCheckpoint: Duration
    private var spoolLossLogged: Duration?
    public let metrics: AgentMetrics
    private var lastHeartbeatStatus: AgentStatus?
    private var window: (frames: Int, received: Int, started: Duration)

    public init(
        settings: Settings, ruleset: Ruleset, source: any FrameSource, queue: FrameQueue, decoder: any FrameDecoding,
        sink: any DurableSink, bus: any EventBus, delivery: DeliveryState, clock: any AgentClock,
        checkpoint: ClipCheckpoint? = nil, images: (any NoReadImages)? = nil,
        previews: (any PreviewEncoder)? = nil, imageEncoder: (any ImageEncoder)? = nil, logger: Logger
    ) {
        let config = settings.config
        self.config = config
        self.runId = settings.runId
        self.rulesSource = settings.rulesSource
        let subjects = ContractSubjects(prefix: config.nats.prefix)
        self.subjects = subjects
        var own = Dictionary(
            uniqueKeysWithValues: (SubjectFamily.agent + SubjectFamily.agentOnRequest).compactMap { family in
                (try? subjects.agent(family, site: config.camera.site, camera: config.camera.id)).map { (family, $0) }
            })
        // Decisions go to the camera's lane.
        if let lane = config.camera.lane {
            own[.decision] = try? subjects.decision(site: config.camera.site, lane: lane)
        }
        self.ownSubjects = own
        self.source = source
        self.queue = queue
        self.decoder = decoder
        self.sink = sink
        self.bus = bus
        self.delivery = delivery
        self.clock = clock
        self.checkpoint = checkpoint
        self.images = images
        self.previews = previews
        self.logger = logger
        self.metrics = AgentMetrics(camera: config.camera)
        self.pipeline = ScanPipeline(
            camera: config.camera, tracking: config.tracking,
            normalizer: CodeNormalizer(upcAsEAN13: config.decoder.upcAsEAN13), session: config.session,
            rules: ruleset, noread: config.noread, grouping: config.grouping, decision: config.decision,
            symbologies: config.decoder.symbologies, idPrefix: "\(config.camera.id)-\(settings.runId)")
        if config.images.keep != .none, let imageEncoder {
            imageBucket = ImageBucketWriter(
                config: config.images, camera: config.camera, encoder: imageEncoder, sink: sink, metrics: metrics,
                logger: logger)
            if config.images.keep.keepsParcels && config.grouping.enabled {
                pipeline.parcelPictures = ParcelPictures(margin: config.images.margin, keep: config.images.keep)
            }
        } else {
            imageBucket = nil
        }
        if config.decision.enabled && config.decision.beltFromBus {
            belt = BeltSpeed(
                pulsesPerMetre: config.decision.pulsesPerMetre,
                staleMilliseconds: Int64(config.decision.beltStaleMilliseconds))
        }
        let start = clock.elapsed
        // The first heartbeat has a full interval to measure.
        self.nextHeartbeat = start + config.heartbeat
        self.lastCheckpoint = start
        self.window = (0, 0, start)
        board.update {
            $0.runId = settings.runId
            $0.sourceType = source.kind.rawValue
            $0.rulesRevision = ruleset.revision
            $0.rulesSource = settings.rulesSource
        }
    }

    /// The running ruleset's revision.
    public var rulesRevision: String { pipeline.rules.revision }
    /// Beats at each turn of the decoding loop (a frame, or 100 ms without one).
    public let pulse = Pulse()
    /// Beats at each frame the source delivered.
    public let framePulse = Pulse()
    /// What the source is doing now (streaming, reconnecting, …).
    public var sourceState: SourceStatus { source.state }
    public var isPaused: Bool { paused }
    public var currentSessionId: String? { pipeline.currentSessionId }
    /// What decoding cost over the run (read once the decoding thread has ended).
    public var decodingSummary: String { decoder.summary }

    /// Event time now: a clip's last frame time, a camera's wall clock.
    private var eventTime: Timestamp {
        if source.kind == .clip, let lastFrameTime { return lastFrameTime }
        return clock.now
    }

    // MARK: steps

    /// Drives the loop from the queue until `stop` or the end of the stream, then ends what is open.
    public func run(stop: StopToken) {
        while !stop.isStopped {
            pulse.beat()
            applyInbox()
            switch queue.take(timeout: .milliseconds(100)) {
            case .ended:
                finish(.streamEnded)
                // The stream's end is seen at once in the status and the metrics (every frame
                // counted), not only when the run closes after the drain.
                heartbeatNow()
                return
            case .timedOut:
                idle()
            case .frame(let frame):
                framePulse.beat()
                handle(frame)
            }
            watchSource()
            heartbeatIfDue()
        }
        finish(.stopped)
    }

    /// One frame: decoded and tracked, or (paused) only the session timers run.
    public func handle(_ frame: CapturedFrame) {
        lastFrameTime = frame.time
        lastFrame = frame
        if paused {
            route(pipeline.tick(time: frame.time))
        } else {
            process(frame)
        }
        previewIfDue()
        if let checkpoint, clock.elapsed - lastCheckpoint > .seconds(1) {
            checkpoint.save(frame: frame.index)
            lastCheckpoint = clock.elapsed
        }
    }

    /// No frame came for a while: a camera's session timers still run (a clip's time stands still).
    public func idle() {
        if source.kind != .clip { route(pipeline.tick(time: clock.now)) }
    }

    /// A camera lost (its source reconnecting) or back: `reading.paused` / `reading.resumed` with
    /// reason `camera`, once per change. A clip is never lost.
    public func watchSource() {
        guard source.kind != .clip else { return }
        switch source.state {
        case .reconnecting where !sourceLost:
            sourceLost = true
            reading(.paused, .camera, detail: source.health.error)
        case .streaming where sourceLost:
            sourceLost = false
            reading(.resumed, .camera)
        default:
            break
        }
    }

    /// Sends `reading.paused` or `reading.resumed` (durable).
    private func reading(_ kind: ReadingEvent.Kind, _ reason: ReadingEvent.Reason, detail: String? = nil) {
        readingEvents += 1
        route([
            ReadingEvent(
                kind: kind, eventId: "\(config.camera.id)-\(runId).reading.\(readingEvents)",
                camera: config.camera, time: eventTime, reason: reason, detail: detail
            ).agentEvent
        ])
    }

    /// The next heartbeat, now.
    private func heartbeatNow() {
        heartbeatSequence += 1
        publishHeartbeat(sequence: heartbeatSequence)
    }

    /// A heartbeat when the interval has passed.
    public func heartbeatIfDue() {
        guard clock.elapsed >= nextHeartbeat else { return }
        heartbeatNow()
        nextHeartbeat = clock.elapsed + config.heartbeat
    }

    /// Ends the open tracks and the session (their events go to the sink): the stream ended, or
    /// the agent stops. The run is closed later (`close`), once the publisher has drained the sink.
    public func finish(_ ending: CandidateTracker.Ending) {
        applyInbox()
        route(pipeline.finish(time: eventTime, ending: ending))
    }

    /// Closes the run once the decoding thread has ended and the publisher has drained: removes
    /// the clip checkpoint (an agent killed before this resumes the same run, whose event ids
    /// JetStream deduplicates) and sends the last heartbeat, which reports what was left.
    public func close() {
        checkpoint?.remove()
        heartbeatNow()
    }

    private func process(_ frame: CapturedFrame) {
        let detections: [Detection]
        do {
            detections = try decoder.decode(frame.image, expected: pipeline.tracker.expected(at: frame.index))
        } catch {
            decodeFailures += 1
            logger.debug(
                "frame not decoded", metadata: ["frame": .stringConvertible(frame.index), LogKey.error: "\(error)"])
            return
        }
        window.frames += 1
        framesProcessed += 1
        pipeline.beltSpeed = belt?.speed(at: clock.now)
        route(pipeline.process(frame: frame.index, time: frame.time, detections: detections, located: decoder.located))
    }

    /// Durable events into the sink (the publisher sends them); the rest straight to core NATS.
    private func route(_ events: [AgentEvent]) {
        for var event in events {
            if let unsaved = event.unsavedNoRead {
                noReads += 1
                metrics.noReads.increment()
                let saved = NoReadPictures.saved(unsaved, into: images, logger: logger)
                event = imageBucket?.noRead(saved, picture: unsaved.picture) ?? saved.agentEvent
            }
            if let unsaved = event.unsavedParcel, let imageBucket { event = imageBucket.parcel(unsaved) }
            guard let subject = ownSubjects[event.subjectFamily] else {
                logger.error(
                    "event not sent: no subject for it",
                    metadata: LogKey.about(agentEvent: event.eventId).merging(["family": "\(event.subjectFamily)"]) {
                        $1
                    })
                continue
            }
            guard event.isDurable else {
                try? bus.publishCore(subject: subject, bytes: event.json)  // best effort; the heartbeat shows the link
                continue
            }
            if event.kind == .sighting {
                sightings += 1
                metrics.sighting(status: event.sightingStatus)
            }
            let droppedBefore = sink.dropped
            sink.append(subject: subject, eventId: event.eventId, payload: event.json)
            let droppedNow = sink.dropped
            if droppedNow > droppedBefore, spoolLossLogged.map({ clock.elapsed - $0 >= .seconds(10) }) ?? true {
                spoolLossLogged = clock.elapsed  // at most one line per 10 s while the spool stays full
                logger.error(
                    "spool full; events lost",
                    metadata: [
                        "lost": "\(droppedNow - droppedBefore)", "lostSinceStart": .stringConvertible(droppedNow),
                        "whenFull": "\(config.spool.whenFull)", "maxBytes": "\(config.spool.maxBytes)",
                    ])
            }
        }
    }

    /// Commands and a new ruleset posted by the command and rules services, between two frames.
    public func applyInbox() {
        if let (ruleset, source) = inbox.takeRuleset() {
            pipeline.rules = ruleset
            rulesSource = source
            logger.info(
                "ruleset swapped", metadata: ["revision": .stringConvertible(ruleset.revision), "source": "\(source)"])
        }
        for pending in inbox.takeCommands() {
            pending.reply(apply(pending.command))
        }
        for (reading, arrived) in inbox.takeBelt() { belt?.add(reading, arrived: arrived) }
    }

    private func apply(_ command: AgentCommand) -> [UInt8] {
        let time = eventTime
        let camera = config.camera
        switch command {
        case .sessionStart(let orderId):
            route(pipeline.startSession(orderId: orderId, at: time))
            let id = pipeline.currentSessionId
            return commandReply(verb: "session.start", camera: camera) {
                $0.field("sessionId", id)
                $0.field("orderId", orderId)
            }
        case .sessionStop:
            guard let id = pipeline.currentSessionId else {
                return CommandError(verb: "session.stop", message: "no session is running").reply(camera: camera)
            }
            route(pipeline.stopSession(at: time))
            return commandReply(verb: "session.stop", camera: camera) { $0.field("sessionId", id) }
        case .pause:
            if !paused {
                route(pipeline.endTracks(time: time))
                reading(.paused, .command)
            }
            paused = true
            return commandReply(verb: "pause", camera: camera) { $0.field("paused", true) }
        case .resume:
            if paused { reading(.resumed, .command) }
            paused = false
            return commandReply(verb: "resume", camera: camera) { $0.field("paused", false) }
        case .status:
            let status = snapshot()
            return commandReply(verb: "status", camera: camera) { status.fields(&$0) }
        case .setControls(let controls):
            switch source.setControls(controls) {
            case .failure(let error): return error.reply(camera: camera)
            case .success(let taken):
                logger.info(
                    "camera controls changed",
                    metadata: Dictionary(uniqueKeysWithValues: taken.map { ($0.name, .string($0.value)) }))
                return commandReply(verb: "set-controls", camera: camera) { writer in
                    writer.raw("controls", AgentStatus.SourceControl.object(taken))
                }
            }
        case .trigger:
            switch source.trigger() {
            case .failure(let error): return error.reply(camera: camera)
            case .success: return commandReply(verb: "trigger", camera: camera) { $0.field("triggered", true) }
            }
        case .snapshot(let maxWidth):
            return snapshotReply(maxWidth: maxWidth)
        case .preview(let lease):
            return previewReply(lease)
        }
    }

    /// At most this many leases are kept (a viewer renews a few times a second at most; beyond
    /// it, the earliest ending go first).
    static let previewLeaseLimit = 64

    private func previewReply(_ lease: PreviewLease) -> [UInt8] {
        let camera = config.camera
        guard previews != nil, let subject = ownSubjects[.preview] else {
            return CommandError(verb: "preview", message: "this agent makes no pictures").reply(camera: camera)
        }
        previewLeases.append((clock.elapsed + .seconds(lease.seconds), lease))
        if previewLeases.count > Self.previewLeaseLimit {
            previewLeases.sort { $0.until > $1.until }
            previewLeases.removeLast(previewLeases.count - Self.previewLeaseLimit)
        }
        return commandReply(verb: "preview", camera: camera) { writer in
            writer.field("subject", subject)
            writer.field("seconds", lease.seconds)
            writer.field("maxWidth", lease.maxWidth)
            writer.field("rate", lease.rate)
        }
    }

    /// A preview on the camera's preview subject when a lease runs and the rate allows; nothing
    /// at all (not even a picture drawn) when no lease does.
    private func previewIfDue() {
        guard !previewLeases.isEmpty else { return }
        let now = clock.elapsed
        previewLeases.removeAll { $0.until <= now }
        guard let rate = previewLeases.map(\.lease.rate).max(),
            let maxWidth = previewLeases.map(\.lease.maxWidth).max(),
            let subject = ownSubjects[.preview]
        else { return }
        if let lastPreview, now - lastPreview < .seconds(1) / rate { return }
        lastPreview = now
        switch picture(maxWidth: maxWidth, verb: "preview") {
        case .failure(let error):
            logger.debug("no preview", metadata: ["error": "\(error.message)"])
        case .success(let fields):
            var writer = JSONWriter()
            writer.field("camera", config.camera.id)
            writer.field("site", config.camera.site)
            fields(&writer)
            try? bus.publishCore(subject: subject, bytes: writer.finished())  // best effort, like heartbeats
        }
    }

    /// What a mark on a preview shows, named on the wire (`marks[].state`) and drawn in its colour.
    enum PreviewState: String {
        case read
        case rejected
        case unconfirmed
        case noReadCandidate = "no-read-candidate"

        var colour: RGB {
            switch self {
            case .read: RGB(0, 200, 0)
            case .rejected: RGB(230, 0, 0)
            case .unconfirmed: RGB(255, 176, 0)
            case .noReadCandidate: RGB(230, 0, 230)
            }
        }
    }

    /// The decoder's region of interest (white) and each parcel's outline (blue) on a picture.
    static let regionColour = RGB(255, 255, 255)
    static let parcelColour = RGB(40, 120, 255)

    /// `[minX, minY, maxX, maxY]`.
    static func json(_ box: Box) -> [UInt8] { Array("[\(box.minX),\(box.minY),\(box.maxX),\(box.maxY)]".utf8) }

    struct PreviewMark {
        var state: PreviewState
        var box: Box
        var track: Track?
    }

    /// The tracks present in frame `index` (read, rejected by a rule, not confirmed yet) and the
    /// code-like regions there nobody read (no-read candidates).
    func previewMarks(frame index: Int) -> [PreviewMark] {
        var marks: [PreviewMark] = []
        for track in pipeline.tracker.live where track.presentFrame == index {
            let state: PreviewState =
                !track.confirmed ? .unconfirmed : track.decision?.accepted == false ? .rejected : .read
            marks.append(PreviewMark(state: state, box: track.presentBox, track: track))
        }
        for candidate in pipeline.candidates?.live ?? [] where candidate.lastFrame == index && !candidate.decoded {
            marks.append(PreviewMark(state: .noReadCandidate, box: candidate.lastBox, track: nil))
        }
        return marks
    }

    private func snapshotReply(maxWidth: Int) -> [UInt8] {
        switch picture(maxWidth: maxWidth, verb: "snapshot") {
        case .failure(let error): error.reply(camera: config.camera)
        case .success(let fields): commandReply(verb: "snapshot", camera: config.camera, fields: fields)
        }
    }

    /// The latest frame at most `maxWidth` wide with every code in it boxed, as the fields of a
    /// snapshot reply or a preview: the picture (JPEG, base64), the marks as data, the frame rate
    /// of the last heartbeat and the controls the camera took.
    private func picture(maxWidth: Int, verb: String) -> Result<(inout JSONWriter) -> Void, CommandError> {
        guard let previews else { return .failure(CommandError(verb: verb, message: "this agent makes no pictures")) }
        guard let frame = lastFrame else {
            return .failure(CommandError(verb: verb, message: "no frame has come from the camera yet"))
        }
        let marks = previewMarks(frame: frame.index)
        let parcels = pipeline.parcels?.outlines(live: pipeline.tracker.live, frame: frame.index) ?? []
        let roi = config.decoder.regionOfInterest
        let region = roi.isWholeFrame ? nil : roi.pixels(width: frame.image.width, height: frame.image.height)
        let factor = FrameOverlay.factor(width: frame.image.width, maxWidth: maxWidth)
        // The region first, the parcels around their codes, the codes on top.
        let drawn =
            (region.map { [FrameOverlay.Mark(box: $0, colour: Self.regionColour)] } ?? [])
            + parcels.map { parcel in
                // A little outside its codes' boxes, so that both show.
                let outside = parcel.box.widened(x: 8, y: 8).clamped(to: frame.image.bounds) ?? parcel.box
                return FrameOverlay.Mark(box: outside, colour: Self.parcelColour)
            }
            + marks.map { FrameOverlay.Mark(box: $0.box, colour: $0.state.colour) }
        let picture = FrameOverlay.draw(frame.image, marks: drawn, factor: factor)
        let jpeg: [UInt8]
        do {
            jpeg = try previews.jpeg(picture)
        } catch {
            return .failure(CommandError(verb: verb, message: "cannot encode the picture: \(error)"))
        }
        // A reply must fit one NATS message (1 MB by default): a smaller picture does.
        guard jpeg.count * 4 / 3 < 900_000 else {
            return .failure(
                CommandError(
                    verb: verb,
                    message:
                        "a \(picture.width)-pixel-wide picture is too large for one NATS message; ask for a smaller maxWidth"
                ))
        }
        let fps = board.current.fpsIn
        let controls = source.health.controls
        return .success { writer in
            writer.field("frame", frame.index)
            writer.field("time", frame.time.description)
            writer.field("width", frame.image.width)
            writer.field("height", frame.image.height)
            writer.field("scale", factor)
            writer.field("fps", fps, decimals: 1)
            writer.raw("controls", AgentStatus.SourceControl.object(controls))
            if let region { writer.raw("region", Self.json(region)) }
            writer.raw(
                "parcels",
                JSONWriter.array(
                    parcels.map { parcel in
                        var entry = JSONWriter()
                        entry.field("parcelId", parcel.id)
                        entry.raw("box", Self.json(parcel.box))
                        return entry.finished()
                    }))
            writer.raw(
                "marks",
                JSONWriter.array(
                    marks.map { mark in
                        var entry = JSONWriter()
                        entry.field("state", mark.state.rawValue)
                        if let track = mark.track {
                            let value = EncodedValue(bytes: track.value)
                            entry.field("trackId", track.id)
                            entry.field("symbology", track.symbology.rawValue)
                            entry.field("value", value.eventString)
                            entry.field("valueEncoding", value.encoding)
                            if let rule = track.decision?.ruleId { entry.field("ruleId", rule) }
                        }
                        entry.raw("box", Self.json(mark.box))
                        return entry.finished()
                    }))
            writer.field("jpeg", Base64.encode(jpeg))
        }
    }

    /// The status now (without the heartbeat window's rates).
    public func snapshot() -> AgentStatus {
        var status = board.current
        status.sourceState = source.state.rawValue
        let health = source.health
        status.sourceIncompleteFrames = health.incompleteFrames
        status.sourceReconnects = health.reconnects
        status.sourceControls = health.controls
        status.sourceError = health.error.map { String($0.prefix(1024)) }
        status.framesIn = queue.received
        status.framesProcessed = framesProcessed
        status.framesDropped = queue.dropped
        status.decodeFailures = decodeFailures
        status.sightings = sightings
        status.noReads = noReads
        status.liveTracks = pipeline.liveTracks
        status.sessionId = pipeline.currentSessionId
        status.paused = paused
        status.spoolDepth = sink.depth
        status.spoolBytes = sink.pendingBytes
        status.spoolDropped = sink.dropped
        status.nats = delivery.linkState(connected: bus.isConnected)
        status.published = delivery.published
        status.rulesRevision = pipeline.rules.revision
        status.rulesSource = rulesSource
        return status
    }

    private func publishHeartbeat(sequence: Int) {
        let elapsed = (clock.elapsed - window.started).seconds
        let received = queue.received
        var status = snapshot()
        if elapsed > 0 {
            status.fpsIn = Double(received - window.received) / elapsed
            status.fpsProcessed = Double(window.frames) / elapsed
        }
        let decoding = decoder.takeWindow()
        if !decoding.latencies.isEmpty {
            let total = decoding.latencies.reduce(0, +)
            status.decodeMillisecondsAverage = total * 1000 / Double(decoding.latencies.count)
            status.decodeMillisecondsMax = (decoding.latencies.max() ?? 0) * 1000
            status.decodeMillisecondsP50 = Self.quantile(decoding.latencies, 0.5) * 1000
            status.decodeMillisecondsP99 = Self.quantile(decoding.latencies, 0.99) * 1000
            status.decodeFps = total > 0 ? Double(decoding.latencies.count) / total : 0
        }
        status.decoderMode = decoding.mode
        status.decoderThreads = decoding.threads
        status.scanned = decoding.scanned
        board.update { $0 = status }
        metrics.heartbeat(status, previous: lastHeartbeatStatus, latencies: decoding.latencies)
        lastHeartbeatStatus = status
        window = (0, received, clock.elapsed)
        let event = pipeline.factory.status(status, time: clock.now, sequence: sequence)
        if let subject = ownSubjects[.status] { try? bus.publishCore(subject: subject, bytes: event.json) }
    }

    /// The q-quantile (0…1) of the values, nearest rank; 0 for none.
    public static func quantile(_ values: [Double], _ q: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let rank = Int((q * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }
}

extension Tracker {
    /// Live tracks and where they should be in `frame`: for guided decoding and the second engine.
    public func expected(at frame: Int) -> [DecodePlanner.TrackedCode] {
        live.map { track in
            DecodePlanner.TrackedCode(
                symbology: track.symbology, value: track.value, box: track.predictedBox(at: frame),
                typicalWidth: track.typicalWidth, typicalHeight: track.typicalHeight, velocityX: track.velocityX,
                velocityY: track.velocityY, readAlongRows: track.readAlongRows, confirmed: track.confirmed,
                framesSinceRead: frame - track.lastFrame, straightened: track.readStraightened)
        }
    }
}

extension AgentLoop {
    /// Whether the agent did its job since the supervisor's last look (systemd's watchdog is fed
    /// only then): the decoding loop went round, and frames came, or the camera is not streaming
    /// (being reopened, starting), or it sends frames only when triggered.
    public static func doingItsJob(looped: Bool, framed: Bool, source: SourceStatus, frameDriven: Bool) -> Bool {
        looped && (framed || source != .streaming || !frameDriven)
    }

    /// The agent's report to systemd (`SupervisorService`): ready once the decoding loop runs,
    /// alive by `doingItsJob`, the status from the last heartbeat. Reads only what is locked.
    public func supervisorReport() -> SupervisorReport {
        let looped = pulse.movedSinceLastLook()
        let framed = framePulse.movedSinceLastLook()
        let state = sourceState
        let frameDriven = (config.source.controls.trigger ?? .freeRun) == .freeRun
        let last = board.current
        return SupervisorReport(
            ready: pulse.count > 0,
            alive: Self.doingItsJob(looped: looped, framed: framed, source: state, frameDriven: frameDriven),
            status: "\(state.rawValue); \(last.framesIn) frames, \(last.sightings) sightings, spool \(last.spoolDepth)")
    }
}
