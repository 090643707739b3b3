import ScanCore

/// `status`: an agent's heartbeat on `<prefix>.v1.status.<site>.<camera>` (core NATS, best
/// effort; docs/integration.md). Written by the agent with `json`; read by the aggregator's
/// heartbeat recorder and the tests with `parse`.
public struct StatusEvent: Sendable, Equatable {
    public var envelope: EventEnvelope
    public var lane: String?
    public var station: String?
    public var status: AgentStatus

    public var eventId: String { envelope.eventId }
    public var site: String { envelope.site }
    public var camera: String { envelope.camera }
    public var time: Timestamp { envelope.time }

    /// Heartbeat number `sequence` of the run.
    public init(status: AgentStatus, camera: CameraIdentity, time: Timestamp, sequence: Int) {
        envelope = EventEnvelope(
            type: "status", eventId: "\(camera.id)-\(status.runId).status.\(sequence)", site: camera.site,
            camera: camera.id,
            time: time)
        lane = camera.lane
        station = camera.station
        self.status = status
    }

    public var json: [UInt8] {
        var writer = envelope.writer()
        writer.field("lane", lane)
        writer.field("station", station)
        status.fields(&writer)
        return writer.finished()
    }

    public var agentEvent: AgentEvent { AgentEvent(kind: .status, eventId: eventId, time: time, json: json) }

    /// A heartbeat read from its JSON; a breach of the contract is a dead letter naming the field.
    /// Parts an older agent does not send (`decodeFailures`, `sightings`, `noReads`, `decoder`)
    /// read as their defaults.
    public static func parse(_ event: JSONValue) throws(DeadLetter) -> StatusEvent {
        let fields = EventFields(event)
        let envelope = try fields.envelope(type: ["status"])
        var status = AgentStatus()
        status.runId = try fields.string("runId", maxLength: 128)
        let source = try object(event, "source")
        status.sourceType = try source.string("type", maxLength: 32)
        status.sourceState = try source.string("state", maxLength: 32)
        if source.event["incompleteFrames"] != nil {
            status.sourceIncompleteFrames = try source.int("incompleteFrames")
        }
        if source.event["reconnects"] != nil { status.sourceReconnects = try source.int("reconnects") }
        status.sourceError = try source.optionalString("error", maxLength: 1024)
        if case .object(let controls)? = source.event["controls"] {
            for (name, value) in controls.prefix(64) {
                guard case .string(let text) = value, text.utf8.count <= 256, name.utf8.count <= 128 else {
                    throw DeadLetter(.badValue, "source.controls.\(name) is not a short string")
                }
                status.sourceControls.append(AgentStatus.SourceControl(name: name, value: text))
            }
        }
        status.fpsIn = try number(fields, "fpsIn")
        status.fpsProcessed = try number(fields, "fpsProcessed")
        status.framesIn = try fields.int("framesIn")
        status.framesProcessed = try fields.int("framesProcessed")
        status.framesDropped = try fields.int("framesDropped")
        status.decodeFailures = event["decodeFailures"] == nil ? 0 : try fields.int("decodeFailures")
        status.sightings = event["sightings"] == nil ? 0 : try fields.int("sightings")
        status.noReads = event["noReads"] == nil ? 0 : try fields.int("noReads")
        let decode = try object(event, "decodeMs")
        status.decodeMillisecondsAverage = try number(decode, "avg")
        status.decodeMillisecondsMax = try number(decode, "max")
        status.decodeMillisecondsP50 = try number(decode, "p50")
        status.decodeMillisecondsP99 = try number(decode, "p99")
        if event["decoder"] != nil {
            let decoder = try object(event, "decoder")
            status.decoderMode = try decoder.string("mode", maxLength: 32)
            status.decoderThreads = try decoder.int("threads")
            status.decodeFps = try number(decoder, "fps")
            if case .object(let shares)? = event["decoder"]?["scanned"] {
                status.scanned = shares.compactMap { purpose, share in
                    share.doubleValue.map { AgentStatus.ScannedShare(purpose: purpose, share: $0) }
                }
            }
        }
        status.liveTracks = try fields.int("liveTracks")
        status.sessionId = try fields.optionalString("sessionId", maxLength: 256)
        status.paused = try fields.bool("paused", default: false)
        let spool = try object(event, "spool")
        status.spoolDepth = try spool.int("depth")
        status.spoolBytes = try spool.int("bytes")
        status.spoolDropped = try spool.int("dropped")
        status.nats = try fields.string("nats", maxLength: 32)
        status.published = try fields.int("published")
        let rules = try object(event, "rules")
        status.rulesRevision = try rules.string("revision", maxLength: 64)
        status.rulesSource = try rules.string("source", maxLength: 32)
        status.rulesError = try rules.optionalString("error")
        return StatusEvent(
            envelope: envelope, lane: try fields.optionalToken("lane"), station: try fields.optionalToken("station"),
            status: status)
    }

    private static func object(_ event: JSONValue, _ key: String) throws(DeadLetter) -> EventFields {
        guard let value = event[key] else { throw DeadLetter(.missingField, key) }
        guard case .object = value else { throw DeadLetter(.wrongType, "\(key) is \(value.typeName), not an object") }
        return EventFields(value, path: key + ".")
    }

    private static func number(_ fields: EventFields, _ key: String) throws(DeadLetter) -> Double {
        guard let value = try fields.optionalDouble(key) else { throw DeadLetter(.missingField, fields.path + key) }
        return value
    }

    init(envelope: EventEnvelope, lane: String?, station: String?, status: AgentStatus) {
        self.envelope = envelope
        self.lane = lane
        self.station = station
        self.status = status
    }
}
