import ScanCore

/// `sighting`: one per confirmed track, when it ends (docs/integration.md). The agent writes it
/// with `json`; the aggregator and the tests read it with `parse`, which checks it field by field.
public struct SightingEvent: Sendable, Equatable {
    public var envelope: EventEnvelope
    public var trackId: String
    public var symbology: String
    /// The value as text, or base64 when `valueEncoding` is `base64` (binary payloads).
    public var value: String
    public var valueEncoding: String
    /// `accepted` or `rejected`.
    public var status: SightingStatus
    public var ruleId: String?
    public var role: String?
    public var firstSeen: Timestamp
    public var lastSeen: Timestamp
    public var firstFrame: Int
    public var lastFrame: Int
    public var frames: Int
    public var decodes: Int
    /// Corners where the code was first and last seen.
    public var firstBox: [Point]?
    public var lastBox: [Point]?
    public var lane: String?
    public var station: String?
    public var sessionId: String?
    public var gs1: Bool
    /// A GS1 value split into its application identifiers (`GS1ElementStrings`): nil when the
    /// value is not GS1 data or does not parse whole.
    public var gs1Elements: [GS1ElementStrings.Element]?
    public var addOn: String?
    /// The AIM symbology identifier (`]E0`, `]C1`, `]d2`, …) of the value.
    public var aim: String?
    /// The code as printed when `value` is its expansion (UPC-E or UPC-A reported as EAN-13).
    public var printedSymbology: String?
    public var printedValue: String?
    /// Pixels a second.
    public var velocity: Double?
    /// The parcel the code was placed in (grouping on): the parcel event's `parcelId`.
    public var parcelId: String?
    /// The name of that parcel's picture in the images bucket, given only when the camera's
    /// policy keeps it however the parcel ends (`images.keep: all`, or a share that chose it) and
    /// a picture of it was taken; the object is stored when the parcel closes. Otherwise the
    /// parcel event's `imageObject` names it, if it is kept.
    public var parcelImage: String?

    public var eventId: String { envelope.eventId }
    public var site: String { envelope.site }
    public var camera: String { envelope.camera }
    public var time: Timestamp { envelope.time }

    public var json: [UInt8] {
        var writer = envelope.writer()
        writer.field("trackId", trackId)
        writer.field("symbology", symbology)
        writer.field("value", value)
        if valueEncoding != "text" { writer.field("valueEncoding", valueEncoding) }
        writer.field("status", status.rawValue)
        writer.field("ruleId", ruleId)
        writer.field("role", role)
        writer.field("firstSeen", firstSeen.description)
        writer.field("lastSeen", lastSeen.description)
        writer.field("firstFrame", firstFrame)
        writer.field("lastFrame", lastFrame)
        writer.field("frames", frames)
        writer.field("decodes", decodes)
        if let firstBox, let lastBox { writer.raw("box", EventFields.boxesJSON(first: firstBox, last: lastBox)) }
        writer.field("lane", lane)
        writer.field("station", station)
        writer.field("sessionId", sessionId)
        if gs1 { writer.field("gs1", true) }
        writer.gs1Elements(gs1Elements)
        writer.field("addOn", addOn)
        writer.field("aim", aim)
        writer.field("printedSymbology", printedSymbology)
        writer.field("printedValue", printedValue)
        if let velocity { writer.field("velocity", velocity, decimals: 1) }
        writer.field("parcelId", parcelId)
        writer.field("parcelImage", parcelImage)
        return writer.finished()
    }

    /// The event as the contract bytes, for routing.
    public var agentEvent: AgentEvent {
        var event = AgentEvent(kind: .sighting, eventId: eventId, time: time, json: json)
        event.sightingStatus = status
        return event
    }

    /// A sighting read from its JSON; a breach of the contract is a dead letter naming the field.
    public static func parse(_ event: JSONValue) throws(DeadLetter) -> SightingEvent {
        let fields = EventFields(event)
        let envelope = try fields.envelope(type: ["sighting"])
        let name = try fields.string("status")
        guard let status = SightingStatus(rawValue: name) else {
            throw DeadLetter(.badValue, "status '\(name)' is not accepted or rejected")
        }
        let encoding = try fields.optionalString("valueEncoding") ?? "text"
        guard encoding == "text" || encoding == "base64" else {
            throw DeadLetter(.badValue, "valueEncoding '\(encoding)' is not text or base64")
        }
        let value = try fields.string("value", maxLength: 8192)
        if encoding == "base64" && Base64.decode(value) == nil { throw DeadLetter(.badValue, "value is not base64") }
        let boxes = try fields.boxes(required: false)
        var sighting = SightingEvent(
            envelope: envelope, trackId: try fields.string("trackId", maxLength: 256),
            symbology: try fields.symbology("symbology"), value: value, valueEncoding: encoding,
            status: status,
            ruleId: try fields.optionalString("ruleId"), role: try fields.optionalString("role"),
            firstSeen: try fields.time("firstSeen"), lastSeen: try fields.time("lastSeen"),
            firstFrame: try fields.int("firstFrame"), lastFrame: try fields.int("lastFrame"),
            frames: try fields.int("frames"),
            decodes: try fields.int("decodes"), firstBox: boxes?.first, lastBox: boxes?.last,
            lane: try fields.optionalToken("lane"),
            station: try fields.optionalToken("station"), sessionId: try fields.optionalString("sessionId"),
            gs1: try fields.bool("gs1", default: false), addOn: try fields.optionalString("addOn"),
            velocity: try fields.optionalDouble("velocity"))
        sighting.aim = try fields.optionalString("aim", maxLength: 3)
        if let aim = sighting.aim, !(aim.count == 3 && aim.hasPrefix("]")) {
            throw DeadLetter(.badValue, "aim '\(aim)' is not an AIM symbology identifier (']' and two characters)")
        }
        if try fields.optionalString("printedSymbology", maxLength: 32) != nil {
            sighting.printedSymbology = try fields.symbology("printedSymbology")
        }
        sighting.printedValue = try fields.optionalString("printedValue", maxLength: 64)
        sighting.gs1Elements = try Self.gs1Elements(event["gs1Elements"])
        sighting.parcelId = try fields.optionalString("parcelId", maxLength: 256)
        sighting.parcelImage = try fields.optionalString("parcelImage", maxLength: 300)
        if let image = sighting.parcelImage {
            // Held to the sender: the name its own camera builds for the parcel it names.
            guard let parcelId = sighting.parcelId,
                image == ImageObject.name(kind: .parcel, site: envelope.site, camera: envelope.camera, id: parcelId)
            else {
                throw DeadLetter(
                    .subjectMismatch,
                    "parcelImage '\(TerminalText.escaped(image))' is not the sender's picture of parcelId")
            }
        }
        guard sighting.lastSeen >= sighting.firstSeen, sighting.lastFrame >= sighting.firstFrame else {
            throw DeadLetter(.badValue, "lastSeen/lastFrame before firstSeen/firstFrame")
        }
        return sighting
    }

    /// `gs1Elements` as the contract has it: an object of AIs (2 to 4 digits) to text.
    static func gs1Elements(_ value: JSONValue?) throws(DeadLetter) -> [GS1ElementStrings.Element]? {
        guard let value, value != .null else { return nil }
        guard case .object(let members) = value, !members.isEmpty, members.count <= 64 else {
            throw DeadLetter(.wrongType, "gs1Elements is not an object of application identifiers")
        }
        var elements: [GS1ElementStrings.Element] = []
        for (ai, text) in members {
            guard GS1ElementStrings.isApplicationIdentifier(ai) else {
                throw DeadLetter(.badValue, "gs1Elements key '\(ai)' is not an application identifier (2 to 4 digits)")
            }
            guard case .string(let string) = text, string.utf8.count <= 90 else {
                throw DeadLetter(.wrongType, "gs1Elements.\(ai) is not a text of at most 90 characters")
            }
            elements.append(GS1ElementStrings.Element(ai: ai, value: string))
        }
        return elements
    }

    public init(
        envelope: EventEnvelope, trackId: String, symbology: String, value: String, valueEncoding: String,
        status: SightingStatus,
        ruleId: String?, role: String?, firstSeen: Timestamp, lastSeen: Timestamp, firstFrame: Int, lastFrame: Int,
        frames: Int, decodes: Int, firstBox: [Point]?, lastBox: [Point]?, lane: String?, station: String?,
        sessionId: String?, gs1: Bool, addOn: String?, velocity: Double?
    ) {
        self.envelope = envelope
        self.trackId = trackId
        self.symbology = symbology
        self.value = value
        self.valueEncoding = valueEncoding
        self.status = status
        self.ruleId = ruleId
        self.role = role
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.firstFrame = firstFrame
        self.lastFrame = lastFrame
        self.frames = frames
        self.decodes = decodes
        self.firstBox = firstBox
        self.lastBox = lastBox
        self.lane = lane
        self.station = station
        self.sessionId = sessionId
        self.gs1 = gs1
        self.addOn = addOn
        self.velocity = velocity
    }
}

/// What the rules decided of a code: the `status` of sightings and ended tracks.
public enum SightingStatus: String, Sendable, CaseIterable {
    case accepted, rejected
}

extension JSONWriter {
    /// `gs1Elements` as the contract has it (an object of AIs to their data; sightings, items and
    /// keyed codes alike); nothing when nil.
    mutating func gs1Elements(_ elements: [GS1ElementStrings.Element]?) {
        guard let elements else { return }
        var object = JSONWriter()
        for element in elements { object.field(element.ai, element.value) }
        raw("gs1Elements", object.finished())
    }
}
