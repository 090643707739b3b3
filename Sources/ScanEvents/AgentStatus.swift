import ScanCore

/// What an agent reports in its heartbeat on `<prefix>.v1.status.<site>.<camera>` and in reply to
/// the `status` command. Rates are over the last heartbeat interval; counts since the start.
public struct AgentStatus: Sendable, Equatable {
    public var runId: String = ""
    public var sourceType: String = ""
    /// `streaming`, `reconnecting`, `ended`.
    public var sourceState: String = "starting"
    /// A camera's frames that arrived incomplete (GVSP packets lost) and were not decoded, and the
    /// times it was opened again after it went away, since the start.
    public var sourceIncompleteFrames = 0
    public var sourceReconnects = 0
    /// Why the source is not streaming (the camera's last error), while it is not.
    public var sourceError: String?
    /// The controls as the camera took them (GenICam names), when the source sets any.
    public var sourceControls: [SourceControl] = []

    public struct SourceControl: Sendable, Equatable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }

        /// `{"ExposureTime": "1000", …}`: the controls as one JSON object, as the heartbeat,
        /// `set-controls` and pictures carry them.
        public static func object(_ controls: [SourceControl]) -> [UInt8] {
            var writer = JSONWriter()
            for control in controls { writer.field(control.name, control.value) }
            return writer.finished()
        }
    }
    public var fpsIn: Double = 0
    public var fpsProcessed: Double = 0
    public var framesIn: Int = 0
    public var framesProcessed: Int = 0
    /// Frames the bounded queue replaced with a newer one because decoding was behind.
    public var framesDropped: Int = 0
    /// Frames the decoder failed on (an engine error), since the start.
    public var decodeFailures: Int = 0
    /// Sightings (tracks that ended read) and no-reads (code-like regions that left unread),
    /// since the start: the camera's read rate is sightings / (sightings + noReads).
    public var sightings: Int = 0
    public var noReads: Int = 0
    public var decodeMillisecondsAverage: Double = 0
    public var decodeMillisecondsMax: Double = 0
    public var decodeMillisecondsP50: Double = 0
    public var decodeMillisecondsP99: Double = 0
    /// Frames per second the decoder could take at this interval's cost per frame.
    public var decodeFps: Double = 0
    /// `guided` or `full`, and the threads decoding each frame.
    public var decoderMode: String = "guided"
    public var decoderThreads: Int = 1
    /// Share of the region of interest zbar scanned per kind of region (`tracked`, `discovery`,
    /// `sweep`), as a fraction of one scan of every row and every column.
    public var scanned: [ScannedShare] = []

    public struct ScannedShare: Sendable, Equatable {
        public var purpose: String
        public var share: Double
        public init(purpose: String, share: Double) {
            self.purpose = purpose
            self.share = share
        }
    }
    public var liveTracks: Int = 0
    public var sessionId: String?
    public var paused = false
    public var spoolDepth: Int = 0
    public var spoolBytes: Int = 0
    public var spoolDropped: Int = 0
    /// `connected` or `disconnected`.
    public var nats: String = "disconnected"
    public var published: Int = 0
    public var rulesRevision: String = "none"
    /// `default`, `file`, `cache` or `bucket`.
    public var rulesSource: String = "default"
    public var rulesError: String?

    public init() {}

    /// The status fields without the event envelope (the `status` command's reply adds them).
    public func fields(_ writer: inout JSONWriter) {
        writer.field("runId", runId)
        var source = JSONWriter()
        source.field("type", sourceType)
        source.field("state", sourceState)
        source.field("incompleteFrames", sourceIncompleteFrames)
        source.field("reconnects", sourceReconnects)
        source.field("error", sourceError)
        if !sourceControls.isEmpty {
            source.raw("controls", SourceControl.object(sourceControls))
        }
        writer.raw("source", source.finished())
        writer.field("fpsIn", fpsIn, decimals: 1)
        writer.field("fpsProcessed", fpsProcessed, decimals: 1)
        writer.field("framesIn", framesIn)
        writer.field("framesProcessed", framesProcessed)
        writer.field("framesDropped", framesDropped)
        writer.field("decodeFailures", decodeFailures)
        writer.field("sightings", sightings)
        writer.field("noReads", noReads)
        var decode = JSONWriter()
        decode.field("avg", decodeMillisecondsAverage, decimals: 2)
        decode.field("max", decodeMillisecondsMax, decimals: 2)
        decode.field("p50", decodeMillisecondsP50, decimals: 2)
        decode.field("p99", decodeMillisecondsP99, decimals: 2)
        writer.raw("decodeMs", decode.finished())
        var decoder = JSONWriter()
        decoder.field("mode", decoderMode)
        decoder.field("threads", decoderThreads)
        decoder.field("fps", decodeFps, decimals: 1)
        var scannedShares = JSONWriter()
        for entry in scanned { scannedShares.field(entry.purpose, entry.share, decimals: 3) }
        decoder.raw("scanned", scannedShares.finished())
        writer.raw("decoder", decoder.finished())
        writer.field("liveTracks", liveTracks)
        writer.field("sessionId", sessionId)
        writer.field("paused", paused)
        var spool = JSONWriter()
        spool.field("depth", spoolDepth)
        spool.field("bytes", spoolBytes)
        spool.field("dropped", spoolDropped)
        writer.raw("spool", spool.finished())
        writer.field("nats", nats)
        writer.field("published", published)
        var rules = JSONWriter()
        rules.field("revision", rulesRevision)
        rules.field("source", rulesSource)
        rules.field("error", rulesError)
        writer.raw("rules", rules.finished())
    }
}

/// A frame source's state as the heartbeat's `source.state` carries it. The wire type keeps the
/// text (a newer agent may send a state this one does not know); sources and views use these.
public enum SourceStatus: String, Sendable, CaseIterable {
    case starting, streaming, reconnecting, ended
}

/// The agent's NATS link as the heartbeat's `nats` carries it: `degraded` while connected but
/// JetStream does not acknowledge.
public enum LinkState: String, Sendable, CaseIterable {
    case connected, degraded, disconnected
}
