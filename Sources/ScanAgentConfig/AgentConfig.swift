import ScanCore
import ScanVision

/// The agent's whole configuration (`scan-agent run --config FILE.json`). Every key has a
/// default except `camera.id`; unknown keys are errors. See docs/agent-config.md.
public struct AgentConfig: Sendable, Equatable {
    public var camera: CameraIdentity
    public var source: SourceConfig = SourceConfig()
    public var decoder: DecoderConfig = DecoderConfig()
    public var tracking: TrackingConfig = TrackingConfig()
    public var noread: NoReadConfig = NoReadConfig()
    public var session: SessionConfig = SessionConfig()
    /// Codes grouped into parcels (`parcel` events); off by default.
    public var grouping: GroupingConfig = GroupingConfig()
    /// A divert decision for each parcel (`decision` events); off by default.
    public var decision: DecisionConfig = DecisionConfig()
    public var nats: NATSConfig = NATSConfig()
    public var spool: SpoolConfig
    /// Pictures of parcels and no-reads kept in the images bucket (`images`); off by default.
    public var images = ImagesConfig()
    /// `heartbeatSeconds` in the file.
    public var heartbeat: Duration = .seconds(5)
    /// `metrics.listen`: HOST:PORT of /metrics and /health (nil: not served).
    public var metricsListen: String?
    /// A ruleset file to start with (rules from NATS replace it).
    public var rulesFile: String?
    /// `logLevel`: the log level when neither `--log-level` nor `SCANTRACK_LOG_LEVEL` gives one;
    /// SIGHUP applies a new value (nil: info).
    public var logLevel: String?
    /// The levels `logLevel` takes (swift-log's).
    public static let logLevels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]

    public init(camera: CameraIdentity) {
        self.camera = camera
        self.spool = SpoolConfig(dir: "/var/lib/scantrack/\(camera.id)")
    }
}

public struct SourceConfig: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable { case v4l2, clip, genicam, rtsp }
    public var kind: Kind = .v4l2
    public var device: String = "/dev/video0"
    /// A GenICam camera (GigE Vision, USB3 Vision) by Aravis id, serial, user id or address; nil:
    /// the only one found (several found: an error naming them).
    public var camera: String?
    /// What the GenICam camera must say it is once opened (`source.expect`); a device answering in
    /// its place with another vendor, model or serial is refused.
    public var expect = ExpectedCamera()
    /// An RTSP camera's stream (`rtsp://` or `rtsps://`; a password in it is never logged).
    public var url: RTSPAddress?
    /// RTP over `tcp` (interleaved, no loss: the default) or `udp` (lowest latency).
    public var transport = "tcp"
    /// A file holding the RTSP camera's password (the URL names the user), kept out of the config.
    public var passwordFile: String?
    /// Answer an RTSP camera's Basic challenge over plain `rtsp://`, where the password travels
    /// readable (off: only Digest is answered; over rtsps Basic is always answered).
    public var allowBasicAuth = false
    /// The CA certificates (PEM) an `rtsps://` camera's certificate is verified against
    /// (`source.tls.ca`); nil: the system's store.
    public var tlsCA: String?
    /// What is set on the camera at start and after each reconnect.
    public var controls = CameraControls()
    public var width: Int = 1280
    public var height: Int = 720
    public var fps: Int = 30
    public var path: String?
    /// Pace a clip at its frame rate (as a camera would deliver it); false reads as fast as it decodes.
    public var realtime: Bool = true
    /// A paced clip drops the frames the decoder is not ready for, as a camera does, instead of
    /// waiting for it (for measuring whether an agent keeps up).
    public var dropLate: Bool = false
    /// When a clip's first frame is due (`source.startAt`, RFC 3339): its frames' times are this
    /// plus their offsets, and a paced clip waits for it, so that the recordings of several
    /// cameras of one lane play in step. Nil: when the agent starts.
    public var startAt: Timestamp?
    /// Frames that wait for the decoder. When they are all taken, a camera's oldest waiting frame
    /// is dropped for the new one (a clip waits instead). More absorbs a burst (the first frame,
    /// every label in view new, takes about 90 ms at 4K: three frame times at 30 fps) at the cost
    /// of latency while decoding is behind.
    public var queueFrames: Int = 2
    public init() {}
}

/// The identity a GenICam camera must report after it is opened: each field set must match the
/// camera's own (vendor name, model name, device serial number) exactly. Discovery and `source.camera`
/// go by what answers on the network; this checks what was opened.
public struct ExpectedCamera: Sendable, Equatable {
    public var vendor: String?
    public var model: String?
    public var serial: String?
    public init(vendor: String? = nil, model: String? = nil, serial: String? = nil) {
        self.vendor = vendor
        self.model = model
        self.serial = serial
    }
    public var isEmpty: Bool { vendor == nil && model == nil && serial == nil }

    /// The fields that differ from what the camera reported, as `(name, expected, reported)`.
    public func mismatches(vendor: String, model: String, serial: String) -> [(String, String, String)] {
        [("vendor", self.vendor, vendor), ("model", self.model, model), ("serial", self.serial, serial)]
            .compactMap { name, expected, reported in
                guard let expected, expected != reported else { return nil }
                return (name, expected, reported)
            }
    }
}

/// Labels seen but not decoded (`noread` events).
public struct NoReadConfig: Sendable, Equatable {
    /// Off: code-like regions are still followed, but no `noread` is raised.
    public var enabled: Bool = true
    /// Frames a code-like region must be seen in before its leaving undecoded counts as a no-read
    /// (fewer: a glint, a hand, a label that barely entered the view).
    public var minFrames: Int = 5
    /// Images kept in `imageDir`; the oldest go first.
    public var maxImages: Int = 2_000
    /// Bytes of images kept in `imageDir`; the oldest go first.
    public var maxImageBytes: Int = 200 << 20
    /// Where images are written; nil: `noreads/` in the spool's folder.
    public var imageDir: String?

    public init() {}
}

public struct SessionConfig: Sendable, Equatable {
    public enum Start: String, Sendable, CaseIterable { case continuous, command, firstCode, orderCode }
    public var start: Start = .continuous
    public var stopAfterCodes: Int?
    /// `stopAfterSeconds`, `stopAfterIdleSeconds` and `startDelaySeconds` in the file.
    public var stopAfter: Duration?
    public var stopAfterIdle: Duration?
    public var startDelay: Duration = .zero
    public init() {}
}

public struct NATSConfig: Sendable, Equatable {
    public var url: String = "nats://127.0.0.1:4222"
    public var prefix: String = "scantrack"
    /// Copies a JetStream cluster keeps of the stream and rules bucket this agent creates (nil:
    /// 1 for a new stream; an existing one keeps its own).
    public var replicas: Int?
    /// Credentials and TLS files (over SCANTRACK_NATS_CREDS, _NKEY, _CA, _CERT, _KEY).
    public var credsFile: String?
    public var nkeySeedFile: String?
    public var tlsCA: String?
    public var tlsCert: String?
    public var tlsKey: String?
    /// Where replies to the agent's requests arrive; nil: `_INBOX.<site>.<camera id>` (over
    /// SCANTRACK_NATS_INBOX_PREFIX), so that a camera's NATS user may read its own replies only.
    public var inboxPrefix: String?
    /// A user name with its password in a file, or a token in a file (over SCANTRACK_NATS_USER,
    /// _PASSWORD_FILE, _TOKEN_FILE): no secret in the config or the URL.
    public var user: String?
    public var passwordFile: String?
    public var tokenFile: String?
    public init() {}
}

public struct SpoolConfig: Sendable, Equatable {
    public var dir: String
    public var maxBytes: Int = 1 << 30
    /// What happens to an event that arrives when the spool is full.
    public enum WhenFull: String, Sendable, CaseIterable {
        /// Delete the oldest unsent segment to make room (counted as dropped): keeps what happens now.
        case dropOldest
        /// Refuse the new event (counted as dropped): keeps the oldest history complete.
        case dropNewest
    }
    public var whenFull: WhenFull = .dropOldest
    public init(dir: String) { self.dir = dir }
}

extension AgentConfig {
    static let topKeys = [
        "camera", "source", "decoder", "tracking", "noread", "session", "grouping", "decision", "nats", "spool",
        "images", "heartbeatSeconds",
        "rules",
        "metrics",
        "logLevel",
    ]

    /// Parses and validates a config file's bytes; every problem is listed by JSON path.
    public static func parse(_ bytes: [UInt8], file: String) throws(ConfigErrors) -> AgentConfig {
        let document = try ConfigReader.document(bytes, file: file)
        var reader = ConfigReader()
        let top = reader.object(document, at: "$", allowed: topKeys) ?? [:]
        if case .object = document {} else { throw ConfigErrors(file: file, issues: reader.issues) }

        let cameraKeys = reader.object(top["camera"], at: "camera", allowed: ["id", "site", "lane", "station"])
        let id = reader.token(cameraKeys?["id"], at: "camera.id")
        if cameraKeys?["id"] == nil { reader.fail("camera.id", "required: the camera's unique id, e.g. \"cam-07\"") }
        var camera = CameraIdentity(id: id ?? "camera")
        if let site = reader.token(cameraKeys?["site"], at: "camera.site") { camera.site = site }
        camera.lane = reader.token(cameraKeys?["lane"], at: "camera.lane")
        camera.station = reader.token(cameraKeys?["station"], at: "camera.station")
        var config = AgentConfig(camera: camera)
        // Each part reads its own keys (below), over its defaults.
        config.source.read(top["source"], at: "source", reader: &reader)
        config.decoder.read(top["decoder"], at: "decoder", reader: &reader)
        config.tracking.read(top["tracking"], at: "tracking", reader: &reader)
        config.noread.read(top["noread"], at: "noread", reader: &reader)
        config.grouping.read(top["grouping"], at: "grouping", reader: &reader)
        config.decision.read(top["decision"], at: "decision", reader: &reader)
        if config.decision.enabled && !config.grouping.enabled {
            reader.fail("decision.enabled", "decisions are made per parcel: set grouping.enabled too")
        }
        if config.decision.enabled && camera.lane == nil {
            reader.fail("decision.enabled", "decisions are sent per lane: set camera.lane")
        }
        config.session.read(top["session"], at: "session", reader: &reader)
        config.nats.read(top["nats"], at: "nats", reader: &reader)
        config.spool.read(top["spool"], at: "spool", reader: &reader)
        config.images.read(top["images"], at: "images", reader: &reader)
        if let metrics = reader.object(top["metrics"], at: "metrics", allowed: ["listen"]),
            let listen = reader.string(metrics["listen"], at: "metrics.listen")
        {
            if ListenAddress.parse(listen) != nil {
                config.metricsListen = listen
            } else {
                reader.fail("metrics.listen", "'\(listen)' is not HOST:PORT (e.g. 127.0.0.1:9464)")
            }
        }
        if let seconds = reader.double(top["heartbeatSeconds"], at: "heartbeatSeconds", range: 0.1...3600) {
            config.heartbeat = .seconds(seconds)
        }
        config.rulesFile = reader.string(top["rules"], at: "rules")
        config.logLevel = reader.choice(top["logLevel"], at: "logLevel", allowed: logLevels)

        guard reader.issues.isEmpty else { throw ConfigErrors(file: file, issues: reader.issues) }
        return config
    }
}

extension SourceConfig {
    static let keys = [
        "type", "device", "width", "height", "fps", "path", "realtime", "dropLate", "startAt", "camera", "controls",
        "url", "transport", "passwordFile", "queueFrames", "expect", "allowBasicAuth", "tls",
    ]

    /// Reads the `source` object over these settings; every problem by path.
    mutating func read(_ value: JSONValue?, at path: String, reader: inout ConfigReader) {
        guard let members = reader.object(value, at: path, allowed: Self.keys) else { return }
        if let kind = reader.choice(
            members["type"], at: "source.type", allowed: SourceConfig.Kind.allCases.map(\.rawValue))
        {
            self.kind = SourceConfig.Kind(rawValue: kind) ?? .v4l2
        }
        if let device = reader.string(members["device"], at: "source.device") { self.device = device }
        if let width = reader.int(members["width"], at: "source.width", range: 16...8192) {
            self.width = width
        }
        if let height = reader.int(members["height"], at: "source.height", range: 16...8192) {
            self.height = height
        }
        if let fps = reader.int(members["fps"], at: "source.fps", range: 1...240) { self.fps = fps }
        self.path = reader.string(members["path"], at: "source.path")
        self.camera = reader.string(members["camera"], at: "source.camera")
        if let expect = reader.object(members["expect"], at: "source.expect", allowed: ["vendor", "model", "serial"]) {
            self.expect = ExpectedCamera(
                vendor: reader.string(expect["vendor"], at: "source.expect.vendor"),
                model: reader.string(expect["model"], at: "source.expect.model"),
                serial: reader.string(expect["serial"], at: "source.expect.serial"))
        }
        if let controls = CameraControls.parse(members["controls"], at: "source.controls", reader: &reader) {
            self.controls = controls
        }
        if let realtime = reader.bool(members["realtime"], at: "source.realtime") {
            self.realtime = realtime
        }
        if let dropLate = reader.bool(members["dropLate"], at: "source.dropLate") {
            self.dropLate = dropLate
        }
        if let text = reader.string(members["startAt"], at: "source.startAt") {
            if let time = Timestamp(rfc3339: text) {
                self.startAt = time
            } else {
                reader.fail(
                    "source.startAt", "'\(TerminalText.escaped(text))' is not an RFC 3339 time (2026-11-28T08:00:00Z)")
            }
            if self.kind != .clip { reader.fail("source.startAt", "only for a clip source") }
        }
        if let queueFrames = reader.int(members["queueFrames"], at: "source.queueFrames", range: 1...64) {
            self.queueFrames = queueFrames
        }
        if self.kind == .clip && self.path == nil {
            reader.fail("source.path", "required when source.type is \"clip\"")
        }
        if let url = reader.string(members["url"], at: "source.url") {
            do {
                self.url = try RTSPAddress(url)
            } catch {
                reader.fail("source.url", "\(error)")
            }
        } else if self.kind == .rtsp {
            reader.fail("source.url", "required when source.type is \"rtsp\": rtsp://host[:port]/path")
        }
        if let transport = reader.choice(members["transport"], at: "source.transport", allowed: ["tcp", "udp"]) {
            self.transport = transport
        }
        self.passwordFile = reader.string(members["passwordFile"], at: "source.passwordFile")
        if let allow = reader.bool(members["allowBasicAuth"], at: "source.allowBasicAuth") {
            self.allowBasicAuth = allow
        }
        if let tls = reader.object(members["tls"], at: "source.tls", allowed: ["ca"]) {
            self.tlsCA = reader.string(tls["ca"], at: "source.tls.ca")
            if self.url?.scheme != "rtsps" {
                reader.fail("source.tls", "only for an rtsps:// source.url (the camera's TLS certificate)")
            }
        }
        if self.passwordFile != nil && self.url?.user == nil {
            reader.fail("source.passwordFile", "needs the user in source.url: rtsp://user@host/path")
        }
    }
}

extension DecoderConfig {
    static let keys = [
        "symbologies", "density", "regionOfInterest", "upcAsEAN13", "zxingEveryNthFrame", "secondOpinion",
        "zxingSweep",
        "mode", "threads", "sweepFrames", "sweepDensity", "sweepOverlap", "trackedDensity", "trackedEngine",
        "sweepEngine",
    ]

    /// Reads the `decoder` object over these settings; every problem by path.
    mutating func read(_ value: JSONValue?, at path: String, reader: inout ConfigReader) {
        guard let members = reader.object(value, at: path, allowed: Self.keys) else { return }
        if let mode = reader.choice(
            members["mode"], at: "decoder.mode", allowed: DecoderConfig.Mode.allCases.map(\.rawValue))
        {
            self.mode = DecoderConfig.Mode(rawValue: mode) ?? .guided
        }
        if let threads = reader.int(members["threads"], at: "decoder.threads", range: 1...64) {
            self.threads = threads
        }
        if let frames = reader.int(members["sweepFrames"], at: "decoder.sweepFrames", range: 0...120) {
            self.sweepFrames = frames
        }
        if let step = reader.int(members["sweepDensity"], at: "decoder.sweepDensity", range: 1...32) {
            self.sweepDensity = step
        }
        if let overlap = reader.int(members["sweepOverlap"], at: "decoder.sweepOverlap", range: 0...4096) {
            self.sweepOverlap = overlap
        }
        if let step = reader.int(members["trackedDensity"], at: "decoder.trackedDensity", range: 1...16) {
            self.trackedDensity = step
        }
        if let engine = reader.choice(
            members["trackedEngine"], at: "decoder.trackedEngine",
            allowed: DecoderConfig.TrackedEngine.allCases.map(\.rawValue))
        {
            self.trackedEngine = DecoderConfig.TrackedEngine(rawValue: engine) ?? .zxing
        }
        if let engine = reader.choice(
            members["sweepEngine"], at: "decoder.sweepEngine",
            allowed: DecoderConfig.SweepEngine.allCases.map(\.rawValue))
        {
            self.sweepEngine = DecoderConfig.SweepEngine(rawValue: engine) ?? .zxing
        }
        if let every = reader.int(members["zxingEveryNthFrame"], at: "decoder.zxingEveryNthFrame", range: 1...30) {
            self.zxingEveryNthFrame = every
        }
        if let second = reader.bool(members["secondOpinion"], at: "decoder.secondOpinion") {
            self.secondOpinion = second
        }
        if let symbologies = reader.symbologies(members["symbologies"], at: "decoder.symbologies") {
            if symbologies.isEmpty { reader.fail("decoder.symbologies", "enable at least one symbology") }
            self.symbologies = symbologies
        }
        if let sweep = reader.symbologies(members["zxingSweep"], at: "decoder.zxingSweep") {
            for (index, symbology) in sweep.enumerated() where !self.symbologies.contains(symbology) {
                reader.fail("decoder.zxingSweep[\(index)]", "'\(symbology.rawValue)' is not in decoder.symbologies")
            }
            self.zxingSweep = sweep
        }
        if let density = reader.int(members["density"], at: "decoder.density", range: 1...8) {
            self.density = density
        }
        if let upc = reader.bool(members["upcAsEAN13"], at: "decoder.upcAsEAN13") {
            self.upcAsEAN13 = upc
        }
        if let roi = reader.object(
            members["regionOfInterest"], at: "decoder.regionOfInterest", allowed: ["x", "y", "width", "height"])
        {
            let path = "decoder.regionOfInterest"
            var region = RegionOfInterest()
            if let x = reader.double(roi["x"], at: path + ".x", range: 0...1) { region.x = x }
            if let y = reader.double(roi["y"], at: path + ".y", range: 0...1) { region.y = y }
            if let w = reader.double(roi["width"], at: path + ".width", range: 0.01...1) { region.width = w }
            if let h = reader.double(roi["height"], at: path + ".height", range: 0.01...1) { region.height = h }
            if region.x + region.width > 1.0001 {
                reader.fail(path, "x + width must not exceed 1 (fractions of the frame)")
            }
            if region.y + region.height > 1.0001 {
                reader.fail(path, "y + height must not exceed 1 (fractions of the frame)")
            }
            self.regionOfInterest = region
        }
    }
}

extension TrackingConfig {
    static let keys = ["maxMissedFrames", "minDecodes", "updateIntervalMs"]

    /// Reads the `tracking` object over these settings; every problem by path.
    mutating func read(_ value: JSONValue?, at path: String, reader: inout ConfigReader) {
        guard let members = reader.object(value, at: path, allowed: Self.keys) else { return }
        if let value = reader.int(members["maxMissedFrames"], at: "tracking.maxMissedFrames", range: 0...1000) {
            self.maxMissedFrames = value
        }
        if let value = reader.int(members["minDecodes"], at: "tracking.minDecodes", range: 1...100) {
            self.minDecodes = value
        }
        if let value = reader.int(members["updateIntervalMs"], at: "tracking.updateIntervalMs", range: 0...60_000) {
            self.updateIntervalMilliseconds = value
        }
    }
}

extension NoReadConfig {
    static let keys = ["enabled", "minFrames", "maxImages", "maxImageBytes", "imageDir"]

    /// Reads the `noread` object over these settings; every problem by path.
    mutating func read(_ value: JSONValue?, at path: String, reader: inout ConfigReader) {
        guard let members = reader.object(value, at: path, allowed: Self.keys) else { return }
        if let enabled = reader.bool(members["enabled"], at: "noread.enabled") { self.enabled = enabled }
        if let frames = reader.int(members["minFrames"], at: "noread.minFrames", range: 1...1000) {
            self.minFrames = frames
        }
        if let count = reader.int(members["maxImages"], at: "noread.maxImages", range: 0...1_000_000) {
            self.maxImages = count
        }
        if let bytes = reader.int(members["maxImageBytes"], at: "noread.maxImageBytes", range: 0...1 << 40) {
            self.maxImageBytes = bytes
        }
        self.imageDir = reader.string(members["imageDir"], at: "noread.imageDir")
    }
}

extension GroupingConfig {
    static let keys = ["enabled", "maxGapPixels", "velocityTolerance", "require"]

    /// Reads the `grouping` object over these settings; every problem by path.
    mutating func read(_ value: JSONValue?, at path: String, reader: inout ConfigReader) {
        guard let members = reader.object(value, at: path, allowed: Self.keys) else { return }
        if let enabled = reader.bool(members["enabled"], at: "grouping.enabled") { self.enabled = enabled }
        if let gap = reader.int(members["maxGapPixels"], at: "grouping.maxGapPixels", range: 0...10_000) {
            maxGapPixels = gap
        }
        if let tolerance = reader.double(
            members["velocityTolerance"], at: "grouping.velocityTolerance", range: 0...1_000)
        {
            velocityTolerance = tolerance
        }
        if let names = reader.array(members["require"], at: "grouping.require") {
            require = []
            for (index, element) in names.enumerated() {
                guard let name = reader.string(element, at: "grouping.require[\(index)]") else { continue }
                if let requirement = GroupingConfig.Requirement(name: name) {
                    require.append(requirement)
                } else {
                    reader.fail(
                        "grouping.require[\(index)]",
                        "'\(TerminalText.escaped(name))' is not GS1-128 or a symbology (\(Symbology.allCases.map(\.rawValue).joined(separator: ", ")))"
                    )
                }
            }
        }
    }
}

/// The divert decision the agent makes for each of its parcels, for a lane one camera reads
/// (docs/agent-config.md, "decision"; a lane of several cameras is decided by the aggregator).
public struct DecisionConfig: Sendable, Equatable {
    public var enabled = false
    /// A decision reaches the gateway at most this long after the frame that closes its parcel,
    /// or it says `late`.
    public var deadlineMilliseconds = 200
    /// Belt speed (m/s) and the distance from the read zone's end to the diverter (m): when both
    /// are set, each decision says when its parcel reaches the diverter (`divertAt`).
    public var beltSpeed: Double?
    public var divertDistance: Double?
    /// Reasons that divert a parcel; each other reason is still reported on a `pass`.
    public var divertOn: Set<DecisionReason> = Set(DecisionReason.agentReasons)
    /// Take the belt speed from `<prefix>.v1.belt.<site>.<lane>` (the PLC's speed or encoder
    /// count); `beltSpeed` stands in while none has come for `beltStaleMilliseconds`.
    public var beltFromBus = false
    /// Encoder pulses a metre of belt, for readings that give a count.
    public var pulsesPerMetre: Double?
    public var beltStaleMilliseconds = 2_000

    public init() {}

    static let keys = [
        "enabled", "deadlineMs", "beltSpeed", "divertDistance", "divertOn", "beltFromBus", "pulsesPerMetre",
        "beltStaleMs",
    ]

    mutating func read(_ value: JSONValue?, at path: String, reader: inout ConfigReader) {
        guard let members = reader.object(value, at: path, allowed: Self.keys) else { return }
        if let enabled = reader.bool(members["enabled"], at: "decision.enabled") { self.enabled = enabled }
        if let deadline = reader.int(members["deadlineMs"], at: "decision.deadlineMs", range: 1...60_000) {
            deadlineMilliseconds = deadline
        }
        beltSpeed = reader.double(members["beltSpeed"], at: "decision.beltSpeed", range: 0.01...20) ?? beltSpeed
        divertDistance =
            reader.double(members["divertDistance"], at: "decision.divertDistance", range: 0...1_000) ?? divertDistance
        if let fromBus = reader.bool(members["beltFromBus"], at: "decision.beltFromBus") { beltFromBus = fromBus }
        pulsesPerMetre =
            reader.double(members["pulsesPerMetre"], at: "decision.pulsesPerMetre", range: 0.001...1_000_000)
            ?? pulsesPerMetre
        if let stale = reader.int(members["beltStaleMs"], at: "decision.beltStaleMs", range: 100...600_000) {
            beltStaleMilliseconds = stale
        }
        if let reasons = DecisionReason.read(
            members["divertOn"], at: "decision.divertOn", allowed: DecisionReason.agentReasons, reader: &reader)
        {
            divertOn = reasons
        }
    }
}

extension SessionConfig {
    static let keys = ["start", "stopAfterCodes", "stopAfterSeconds", "stopAfterIdleSeconds", "startDelaySeconds"]

    /// Reads the `session` object over these settings; every problem by path.
    mutating func read(_ value: JSONValue?, at path: String, reader: inout ConfigReader) {
        guard let members = reader.object(value, at: path, allowed: Self.keys) else { return }
        if let start = reader.choice(
            members["start"], at: "session.start", allowed: SessionConfig.Start.allCases.map(\.rawValue))
        {
            self.start = SessionConfig.Start(rawValue: start) ?? .continuous
        }
        self.stopAfterCodes = reader.int(
            members["stopAfterCodes"], at: "session.stopAfterCodes", range: 1...100_000)
        self.stopAfter = reader.double(
            members["stopAfterSeconds"], at: "session.stopAfterSeconds", range: 0.001...86_400
        ).map { .seconds($0) }
        self.stopAfterIdle = reader.double(
            members["stopAfterIdleSeconds"], at: "session.stopAfterIdleSeconds", range: 0.001...86_400
        ).map { .seconds($0) }
        if let delay = reader.double(members["startDelaySeconds"], at: "session.startDelaySeconds", range: 0...3600) {
            self.startDelay = .seconds(delay)
        }
    }
}

extension NATSConfig {
    static let keys = [
        "url", "prefix", "replicas", "credsFile", "nkeySeedFile", "tls", "inboxPrefix", "user", "passwordFile",
        "tokenFile",
    ]

    /// Reads the `nats` object over these settings; every problem by path.
    mutating func read(_ value: JSONValue?, at path: String, reader: inout ConfigReader) {
        guard let members = reader.object(value, at: path, allowed: Self.keys) else { return }
        if let url = reader.string(members["url"], at: "nats.url") {
            // One server, or a cluster's servers separated by commas.
            let servers = url.split(separator: ",", omittingEmptySubsequences: false)
            if let bad = servers.first(where: { !($0.hasPrefix("nats://") || $0.hasPrefix("tls://")) }) {
                // Shown without what stands before an '@': a URL may hold a user and password.
                let shown = bad.lastIndex(of: "@").map { "***" + bad[$0...] } ?? String(bad)
                reader.fail(
                    "nats.url", "'\(shown)' is not a NATS URL (nats://host:port, several separated by commas)")
            } else {
                self.url = url
            }
        }
        if let prefix = reader.subject(members["prefix"], at: "nats.prefix") { self.prefix = prefix }
        if let replicas = reader.int(members["replicas"], at: "nats.replicas", range: 1...5) {
            self.replicas = replicas
        }
        self.credsFile = reader.string(members["credsFile"], at: "nats.credsFile")
        self.nkeySeedFile = reader.string(members["nkeySeedFile"], at: "nats.nkeySeedFile")
        self.inboxPrefix = reader.subject(members["inboxPrefix"], at: "nats.inboxPrefix")
        self.user = reader.string(members["user"], at: "nats.user")
        self.passwordFile = reader.string(members["passwordFile"], at: "nats.passwordFile")
        self.tokenFile = reader.string(members["tokenFile"], at: "nats.tokenFile")
        if self.passwordFile != nil && self.user == nil {
            reader.fail("nats.passwordFile", "goes with nats.user")
        }
        if let tls = reader.object(members["tls"], at: "nats.tls", allowed: ["ca", "cert", "key"]) {
            self.tlsCA = reader.string(tls["ca"], at: "nats.tls.ca")
            self.tlsCert = reader.string(tls["cert"], at: "nats.tls.cert")
            self.tlsKey = reader.string(tls["key"], at: "nats.tls.key")
            if (self.tlsCert == nil) != (self.tlsKey == nil) {
                reader.fail("nats.tls", "cert and key go together (mutual TLS)")
            }
        }
    }
}

extension SpoolConfig {
    static let keys = ["dir", "maxBytes", "whenFull"]

    /// Reads the `spool` object over these settings; every problem by path.
    mutating func read(_ value: JSONValue?, at path: String, reader: inout ConfigReader) {
        guard let members = reader.object(value, at: path, allowed: Self.keys) else { return }
        if let policy = reader.choice(
            members["whenFull"], at: "spool.whenFull", allowed: SpoolConfig.WhenFull.allCases.map(\.rawValue))
        {
            self.whenFull = SpoolConfig.WhenFull(rawValue: policy) ?? .dropOldest
        }
        if let dir = reader.string(members["dir"], at: "spool.dir") { self.dir = dir }
        if let maxBytes = reader.int(members["maxBytes"], at: "spool.maxBytes", range: 1 << 16...1 << 40) {
            self.maxBytes = maxBytes
        }
    }
}
