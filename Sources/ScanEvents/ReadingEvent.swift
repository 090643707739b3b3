import ScanCore

/// `reading.paused` / `reading.resumed` on `<prefix>.v1.reading.<site>.<camera>` (durable): when
/// a camera stops being read and when it is read again, so that a gateway or the WMS knows a lane
/// or station is blind (docs/schema/reading.schema.json). The heartbeat's `paused` flag says the
/// same every few seconds; these say it at once, and are stored.
public struct ReadingEvent: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case paused = "reading.paused"
        case resumed = "reading.resumed"
    }

    public enum Reason: String, Sendable, CaseIterable {
        /// The `pause` or `resume` command.
        case command
        /// The camera was lost (the agent reconnects) or is back.
        case camera
    }

    public var kind: Kind
    public var envelope: EventEnvelope
    public var reason: Reason
    /// Why, when known (the camera's last error, its address without a password).
    public var detail: String?
    public var lane: String?
    public var station: String?

    public init(
        kind: Kind, eventId: String, camera: CameraIdentity, time: Timestamp, reason: Reason, detail: String? = nil
    ) {
        self.kind = kind
        self.envelope = EventEnvelope(
            type: kind.rawValue, eventId: eventId, site: camera.site, camera: camera.id, time: time)
        self.reason = reason
        self.detail = detail.map { String($0.prefix(1024)) }
        self.lane = camera.lane
        self.station = camera.station
    }

    init(kind: Kind, envelope: EventEnvelope, reason: Reason, detail: String?, lane: String?, station: String?) {
        self.kind = kind
        self.envelope = envelope
        self.reason = reason
        self.detail = detail
        self.lane = lane
        self.station = station
    }

    public var eventId: String { envelope.eventId }
    public var site: String { envelope.site }
    public var camera: String { envelope.camera }
    public var time: Timestamp { envelope.time }

    public var json: [UInt8] {
        var writer = envelope.writer()
        writer.field("lane", lane)
        writer.field("station", station)
        writer.field("reason", reason.rawValue)
        writer.field("detail", detail)
        return writer.finished()
    }

    public var agentEvent: AgentEvent {
        AgentEvent(kind: kind == .paused ? .readingPaused : .readingResumed, eventId: eventId, time: time, json: json)
    }

    public static func parse(_ event: JSONValue) throws(DeadLetter) -> ReadingEvent {
        let fields = EventFields(event)
        let envelope = try fields.envelope(type: Set(Kind.allCases.map(\.rawValue)))
        let reasonName = try fields.string("reason", maxLength: 32)
        guard let reason = Reason(rawValue: reasonName) else {
            throw DeadLetter(.badValue, "reason '\(TerminalText.escaped(reasonName))' is not command or camera")
        }
        return ReadingEvent(
            kind: Kind(rawValue: envelope.type) ?? .paused, envelope: envelope, reason: reason,
            detail: try fields.optionalString("detail", maxLength: 1024), lane: try fields.optionalToken("lane"),
            station: try fields.optionalToken("station"))
    }
}
