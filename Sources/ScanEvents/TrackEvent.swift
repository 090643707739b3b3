import ScanCore

/// `track.added`, `track.updated`, `track.removed`: live, best effort, for viewers
/// (docs/integration.md). A track merged into another says which (`mergedInto`).
public struct TrackEvent: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case added = "track.added"
        case updated = "track.updated"
        case removed = "track.removed"
    }

    public var kind: Kind
    public var envelope: EventEnvelope
    public var trackId: String
    public var symbology: String
    public var value: String
    public var valueEncoding: String
    /// Once the track is decided.
    public var status: SightingStatus?
    public var ruleId: String?
    public var frame: Int
    public var box: [Point]
    public var velocity: Double?
    /// `track.removed` of a track that turned out to be the same code as another.
    public var mergedInto: String?

    public var eventId: String { envelope.eventId }
    public var time: Timestamp { envelope.time }

    public var json: [UInt8] {
        var writer = envelope.writer()
        writer.field("trackId", trackId)
        writer.field("symbology", symbology)
        writer.field("value", value)
        if valueEncoding != "text" { writer.field("valueEncoding", valueEncoding) }
        writer.field("status", status?.rawValue)
        writer.field("ruleId", ruleId)
        writer.field("frame", frame)
        writer.raw("box", JSONWriter.points(box))
        if let velocity { writer.field("velocity", velocity, decimals: 1) }
        writer.field("mergedInto", mergedInto)
        return writer.finished()
    }

    public var agentEvent: AgentEvent {
        let routed: AgentEvent.Kind =
            switch kind {
            case .added: .trackAdded
            case .updated: .trackUpdated
            case .removed: .trackRemoved
            }
        return AgentEvent(kind: routed, eventId: eventId, time: time, json: json)
    }

    /// A track event read from its JSON; a breach of the contract is a dead letter naming the field.
    public static func parse(_ event: JSONValue) throws(DeadLetter) -> TrackEvent {
        let fields = EventFields(event)
        let envelope = try fields.envelope(type: Set(Kind.allCases.map(\.rawValue)))
        let name = try fields.optionalString("status")
        let status = name.flatMap(SightingStatus.init(rawValue:))
        if let name, status == nil { throw DeadLetter(.badValue, "status '\(name)' is not accepted or rejected") }
        return TrackEvent(
            kind: Kind(rawValue: envelope.type) ?? .updated, envelope: envelope,
            trackId: try fields.string("trackId", maxLength: 256),
            symbology: try fields.string("symbology", maxLength: 32),
            value: try fields.string("value", maxLength: 8192),
            valueEncoding: try fields.optionalString("valueEncoding") ?? "text", status: status,
            ruleId: try fields.optionalString("ruleId"), frame: try fields.int("frame"),
            box: try EventFields.points(event["box"], at: "box"), velocity: try fields.optionalDouble("velocity"),
            mergedInto: try fields.optionalString("mergedInto", maxLength: 256))
    }

    public init(
        kind: Kind, envelope: EventEnvelope, trackId: String, symbology: String, value: String, valueEncoding: String,
        status: SightingStatus?, ruleId: String?, frame: Int, box: [Point], velocity: Double?, mergedInto: String?
    ) {
        self.kind = kind
        self.envelope = envelope
        self.trackId = trackId
        self.symbology = symbology
        self.value = value
        self.valueEncoding = valueEncoding
        self.status = status
        self.ruleId = ruleId
        self.frame = frame
        self.box = box
        self.velocity = velocity
        self.mergedInto = mergedInto
    }
}
