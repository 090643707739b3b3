import ScanCore

/// `session.started` and `session.completed` (docs/integration.md): written by the agent with
/// `json`, read by the aggregator and the tests with `parse`.
public struct SessionEvent: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case started = "session.started"
        case completed = "session.completed"
    }

    /// One accepted code of a completed session, counted by tracks.
    public struct Code: Sendable, Equatable {
        public var value: String
        public var symbology: String
        public var trackIds: [String]
        public var role: String?
        public var count: Int { trackIds.count }

        public init(value: String, symbology: String, trackIds: [String], role: String?) {
            self.value = value
            self.symbology = symbology
            self.trackIds = trackIds
            self.role = role
        }
    }

    public var kind: Kind
    public var envelope: EventEnvelope
    public var sessionId: String
    public var trigger: String?
    public var orderId: String?
    public var lane: String?
    public var station: String?
    /// Completed only: why it ended, when it started, and its codes.
    public var reason: String?
    public var startedAt: Timestamp?
    public var codes: [Code] = []

    public var eventId: String { envelope.eventId }
    public var time: Timestamp { envelope.time }
    public var items: Int { codes.reduce(0) { $0 + $1.count } }

    public var json: [UInt8] {
        var writer = envelope.writer()
        writer.field("sessionId", sessionId)
        if kind == .completed {
            writer.field("reason", reason)
            writer.field("startedAt", startedAt?.description)
        }
        writer.field("trigger", trigger)
        writer.field("orderId", orderId)
        writer.field("lane", lane)
        writer.field("station", station)
        if kind == .completed {
            var list: [UInt8] = [UInt8(ascii: "[")]
            for (index, code) in codes.enumerated() {
                if index > 0 { list.append(UInt8(ascii: ",")) }
                var entry = JSONWriter()
                entry.field("value", code.value)
                entry.field("symbology", code.symbology)
                entry.strings("trackIds", code.trackIds)
                entry.field("count", code.count)
                entry.field("role", code.role)
                list += entry.finished()
            }
            list.append(UInt8(ascii: "]"))
            writer.raw("codes", list)
            writer.field("items", items)
        }
        return writer.finished()
    }

    public var agentEvent: AgentEvent {
        AgentEvent(
            kind: kind == .started ? .sessionStarted : .sessionCompleted, eventId: eventId, time: time, json: json)
    }

    /// A session event read from its JSON; a breach of the contract is a dead letter naming the field.
    public static func parse(_ event: JSONValue) throws(DeadLetter) -> SessionEvent {
        let fields = EventFields(event)
        let envelope = try fields.envelope(type: [Kind.started.rawValue, Kind.completed.rawValue])
        let kind: Kind = envelope.type == Kind.started.rawValue ? .started : .completed
        var session = SessionEvent(
            kind: kind, envelope: envelope, sessionId: try fields.string("sessionId", maxLength: 256),
            trigger: try fields.optionalString("trigger", maxLength: 64), orderId: try fields.optionalString("orderId"),
            lane: try fields.optionalToken("lane"), station: try fields.optionalToken("station"))
        guard kind == .completed else { return session }
        guard let reason = try fields.optionalString("reason", maxLength: 64) else {
            throw DeadLetter(.missingField, "reason")
        }
        session.reason = reason
        if try fields.optionalString("startedAt") != nil { session.startedAt = try fields.time("startedAt") }
        for code in try fields.objects("codes") {
            guard case .array? = code.event["trackIds"] else { throw DeadLetter(.missingField, code.path + "trackIds") }
            let trackIds = try code.strings("trackIds")
            session.codes.append(
                Code(
                    value: try code.string("value", maxLength: 8192),
                    symbology: try code.symbology("symbology"),
                    trackIds: trackIds, role: try code.optionalString("role")))
        }
        return session
    }

    public init(
        kind: Kind, envelope: EventEnvelope, sessionId: String, trigger: String?, orderId: String?, lane: String?,
        station: String?
    ) {
        self.kind = kind
        self.envelope = envelope
        self.sessionId = sessionId
        self.trigger = trigger
        self.orderId = orderId
        self.lane = lane
        self.station = station
    }
}
