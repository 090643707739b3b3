import ScanCore

/// `parcel`: the codes that travelled together on one parcel past one camera, sent once the
/// parcel has left the view, on `<prefix>.v1.parcel.<site>.<camera>` (durable;
/// docs/schema/parcel.schema.json). Its codes are sightings too; a parcel read by no code is a
/// no-read parcel (its no-read carries the picture).
public struct ParcelEvent: Sendable, Equatable {
    public struct Code: Sendable, Equatable {
        public var trackId: String
        public var symbology: String
        public var value: String
        /// `base64` for a binary value; nil for text.
        public var valueEncoding: String?
        public var aim: String?
        public var status: SightingStatus

        public init(
            trackId: String, symbology: String, value: String, valueEncoding: String?, aim: String?,
            status: SightingStatus
        ) {
            self.trackId = trackId
            self.symbology = symbology
            self.value = value
            self.valueEncoding = valueEncoding
            self.aim = aim
            self.status = status
        }
    }

    public var envelope: EventEnvelope
    public var parcelId: String
    public var lane: String?
    public var station: String?
    public var firstSeen: Timestamp
    public var lastSeen: Timestamp
    /// Corners of the box around its codes and no-reads where last seen.
    public var outline: [Point]
    public var codes: [Code]
    /// Required symbologies it does not carry (`grouping.require`).
    public var missing: [String]
    /// Ids of the no-reads seen on it.
    public var noReads: [String]
    /// Its picture in the images bucket, when the agent's `images.keep` kept one.
    public var imageObject: ImageObject?

    /// A parcel with at least one code read and no required code missing.
    public var complete: Bool { !codes.isEmpty && missing.isEmpty }
    /// No code of it was read.
    public var noRead: Bool { codes.isEmpty }
    public var eventId: String { envelope.eventId }
    public var site: String { envelope.site }
    public var camera: String { envelope.camera }
    public var time: Timestamp { envelope.time }

    public init(
        envelope: EventEnvelope, parcelId: String, lane: String?, station: String?, firstSeen: Timestamp,
        lastSeen: Timestamp, outline: [Point], codes: [Code], missing: [String], noReads: [String]
    ) {
        self.envelope = envelope
        self.parcelId = parcelId
        self.lane = lane
        self.station = station
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.outline = outline
        self.codes = codes
        self.missing = missing
        self.noReads = noReads
    }

    public var json: [UInt8] {
        var writer = envelope.writer()
        writer.field("parcelId", parcelId)
        writer.field("lane", lane)
        writer.field("station", station)
        writer.field("firstSeen", firstSeen.description)
        writer.field("lastSeen", lastSeen.description)
        writer.raw("outline", JSONWriter.points(outline))
        writer.raw(
            "codes",
            JSONWriter.array(
                codes.map { code in
                    var entry = JSONWriter()
                    entry.field("trackId", code.trackId)
                    entry.field("symbology", code.symbology)
                    entry.field("value", code.value)
                    entry.field("valueEncoding", code.valueEncoding)
                    entry.field("aim", code.aim)
                    entry.field("status", code.status.rawValue)
                    return entry.finished()
                }))
        writer.strings("missing", missing)
        writer.strings("noReads", noReads)
        writer.field("complete", complete)
        writer.field("noRead", noRead)
        if let imageObject { writer.raw("imageObject", imageObject.json) }
        return writer.finished()
    }

    public var agentEvent: AgentEvent { AgentEvent(kind: .parcel, eventId: eventId, time: time, json: json) }

    public static func parse(_ event: JSONValue) throws(DeadLetter) -> ParcelEvent {
        let fields = EventFields(event)
        let envelope = try fields.envelope(type: ["parcel"])
        var codes: [Code] = []
        for code in try fields.objects("codes") {
            let statusName = try code.string("status", maxLength: 16)
            guard let status = SightingStatus(rawValue: statusName) else {
                throw DeadLetter(
                    .badValue, "\(code.path)status '\(TerminalText.escaped(statusName))' is not accepted or rejected")
            }
            codes.append(
                Code(
                    trackId: try code.string("trackId", maxLength: 256), symbology: try code.symbology("symbology"),
                    value: try code.string("value", maxLength: 8192),
                    valueEncoding: try code.optionalString("valueEncoding", maxLength: 16),
                    aim: try code.optionalString("aim", maxLength: 3), status: status))
        }
        var parsed = ParcelEvent(
            envelope: envelope, parcelId: try fields.string("parcelId", maxLength: 256),
            lane: try fields.optionalToken("lane"), station: try fields.optionalToken("station"),
            firstSeen: try fields.time("firstSeen"), lastSeen: try fields.time("lastSeen"),
            outline: try EventFields.points(event["outline"], at: "outline"), codes: codes,
            missing: try fields.strings("missing"), noReads: try fields.strings("noReads"))
        parsed.imageObject = try ImageObject.parse(
            event["imageObject"], site: envelope.site, camera: envelope.camera, kind: .parcel)
        guard parsed.eventId == parsed.parcelId + ".parcel" else {
            throw DeadLetter(.badValue, "eventId is not parcelId.parcel")
        }
        return parsed
    }
}
