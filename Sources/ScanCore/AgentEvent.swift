/// One event of the contract (docs/integration.md): what `scan-agent replay` prints and what
/// the agent publishes.
public struct AgentEvent: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case sighting
        case trackAdded = "track.added"
        case trackUpdated = "track.updated"
        case trackRemoved = "track.removed"
        case sessionStarted = "session.started"
        case sessionCompleted = "session.completed"
        case status
    }

    public var kind: Kind
    public var eventId: String
    public var time: Timestamp
    /// The object as one line of JSON.
    public var json: [UInt8]

    /// NATS subject family: `sighting`, `session`, `track` or `status`.
    public var subjectFamily: String {
        switch kind {
        case .sighting: "sighting"
        case .sessionStarted, .sessionCompleted: "session"
        case .trackAdded, .trackUpdated, .trackRemoved: "track"
        case .status: "status"
        }
    }

    /// True for events that must reach the aggregator (JetStream, spooled); false for best-effort ones.
    public var isDurable: Bool { kind == .sighting || kind == .sessionStarted || kind == .sessionCompleted }
}

/// Builds the contract's JSON for each kind of event.
public struct EventFactory: Sendable {
    public var camera: CameraIdentity

    public init(camera: CameraIdentity) { self.camera = camera }

    private func common(_ kind: AgentEvent.Kind, eventId: String, time: Timestamp) -> JSONWriter {
        var writer = JSONWriter()
        writer.field("type", kind.rawValue)
        writer.field("eventId", eventId)
        writer.field("site", camera.site)
        writer.field("camera", camera.id)
        writer.field("time", time.description)
        return writer
    }

    private func codeFields(_ writer: inout JSONWriter, _ track: Track) {
        writer.field("trackId", track.id)
        writer.field("symbology", track.symbology.rawValue)
        let value = EncodedValue(bytes: track.value)
        writer.field("value", value.eventString)
        if value.encoding == "base64" { writer.field("valueEncoding", "base64") }
    }

    private func boxJSON(_ track: Track) -> [UInt8] {
        var box = JSONWriter()
        box.raw("first", JSONWriter.points(track.firstBox.corners))
        box.raw("last", JSONWriter.points(track.lastBox.corners))
        return box.finished()
    }

    /// The one sighting of a confirmed track, when it ends.
    public func sighting(_ track: Track, time: Timestamp, sessionId: String?) -> AgentEvent {
        let eventId = track.id + ".sighting"
        var writer = common(.sighting, eventId: eventId, time: time)
        codeFields(&writer, track)
        let decision = track.decision ?? .acceptedByDefault
        writer.field("status", decision.accepted ? "accepted" : "rejected")
        writer.field("ruleId", decision.ruleId)
        writer.field("role", decision.role)
        writer.field("firstSeen", track.firstSeen.description)
        writer.field("lastSeen", track.lastSeen.description)
        writer.field("firstFrame", track.firstFrame)
        writer.field("lastFrame", track.lastFrame)
        writer.field("frames", track.frames)
        writer.field("decodes", track.decodes)
        writer.raw("box", boxJSON(track))
        writer.field("lane", camera.lane)
        writer.field("station", camera.station)
        writer.field("sessionId", sessionId)
        if track.isGS1 { writer.field("gs1", true) }
        writer.field("addOn", track.addOn)
        writer.field("velocity", track.velocityPixelsPerSecond, decimals: 1)
        return AgentEvent(kind: .sighting, eventId: eventId, time: time, json: writer.finished())
    }

    public func sessionStarted(_ session: Session) -> AgentEvent {
        let eventId = session.id + ".started"
        var writer = common(.sessionStarted, eventId: eventId, time: session.startedAt)
        writer.field("sessionId", session.id)
        writer.field("trigger", session.trigger)
        writer.field("orderId", session.orderId)
        writer.field("lane", camera.lane)
        writer.field("station", camera.station)
        return AgentEvent(kind: .sessionStarted, eventId: eventId, time: session.startedAt, json: writer.finished())
    }

    /// Exactly one per session, listing its accepted codes counted by tracks.
    public func sessionCompleted(_ session: Session, reason: SessionStopReason, at time: Timestamp) -> AgentEvent {
        let eventId = session.id + ".completed"
        var writer = common(.sessionCompleted, eventId: eventId, time: time)
        writer.field("sessionId", session.id)
        writer.field("reason", reason.rawValue)
        writer.field("startedAt", session.startedAt.description)
        writer.field("trigger", session.trigger)
        writer.field("orderId", session.orderId)
        writer.field("lane", camera.lane)
        writer.field("station", camera.station)
        var codes: [UInt8] = [UInt8(ascii: "[")]
        for (index, code) in session.codes.enumerated() {
            if index > 0 { codes.append(UInt8(ascii: ",")) }
            var entry = JSONWriter()
            entry.field("value", code.value)
            entry.field("symbology", code.symbology.rawValue)
            entry.strings("trackIds", code.trackIds)
            entry.field("count", code.count)
            entry.field("role", code.role)
            codes += entry.finished()
        }
        codes.append(UInt8(ascii: "]"))
        writer.raw("codes", codes)
        writer.field("items", session.codes.reduce(0) { $0 + $1.count })
        return AgentEvent(kind: .sessionCompleted, eventId: eventId, time: time, json: writer.finished())
    }

    /// `track.added`, `track.updated` or `track.removed` for live viewers.
    public func trackEvent(_ kind: AgentEvent.Kind, _ track: Track, time: Timestamp, sequence: Int) -> AgentEvent {
        let suffix: String =
            switch kind {
            case .trackAdded: "added"
            case .trackRemoved: "removed"
            default: "updated.\(sequence)"
            }
        let eventId = track.id + "." + suffix
        var writer = common(kind, eventId: eventId, time: time)
        codeFields(&writer, track)
        if let decision = track.decision {
            writer.field("status", decision.accepted ? "accepted" : "rejected")
            writer.field("ruleId", decision.ruleId)
        }
        writer.field("frame", track.lastFrame)
        writer.raw("box", JSONWriter.points(track.lastBox.corners))
        writer.field("velocity", track.velocityPixelsPerSecond, decimals: 1)
        return AgentEvent(kind: kind, eventId: eventId, time: time, json: writer.finished())
    }
}
