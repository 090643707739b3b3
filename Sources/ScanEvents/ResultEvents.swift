import ScanCore

/// The aggregator's results for the WMS (docs/schema/item.schema.json, pack.schema.json) and its
/// dead letters: written with `json` from typed rows, read with `parse` by `scanadmin tail`, the
/// tests and anyone consuming them in Swift.

/// `item`: one physical item's pass along a lane, joined from the sightings of its cameras.
public struct ItemPassEvent: Sendable, Equatable {
    /// One camera's sighting of the item.
    public struct CameraSighting: Sendable, Equatable {
        public var camera: String
        public var trackId: String
        public var eventId: String
        public var firstSeen: Timestamp
        public var lastSeen: Timestamp
        /// Arrived after the pass had closed (the revision went up for it).
        public var late: Bool

        public init(
            camera: String, trackId: String, eventId: String, firstSeen: Timestamp, lastSeen: Timestamp, late: Bool
        ) {
            self.camera = camera
            self.trackId = trackId
            self.eventId = eventId
            self.firstSeen = firstSeen
            self.lastSeen = lastSeen
            self.late = late
        }
    }

    public var itemId: String
    public var site: String
    public var lane: String
    public var symbology: String
    public var value: String
    /// `base64` for a binary value; nil for text.
    public var valueEncoding: String?
    public var firstSeen: Timestamp
    public var lastSeen: Timestamp
    public var revision: Int
    public var camerasExpected: Int
    public var cameras: [CameraSighting]
    /// The cameras of the lane that did not see it.
    public var missing: [String]
    /// The value is GS1 data (FNC1 first: a GS1-128, GS1 DataMatrix, …), as a sighting of it said.
    public var gs1 = false
    /// The trace this result continues (docs/integration.md, "Tracing"): the trace id of its first sighting.
    /// Sent in the message's `traceparent` header, not in its body; nil when that event came
    /// without one (an older agent).
    public var traceId: String?

    public init(
        itemId: String, site: String, lane: String, symbology: String, value: String, valueEncoding: String?,
        firstSeen: Timestamp, lastSeen: Timestamp, revision: Int, camerasExpected: Int, cameras: [CameraSighting],
        missing: [String]
    ) {
        self.itemId = itemId
        self.site = site
        self.lane = lane
        self.symbology = symbology
        self.value = value
        self.valueEncoding = valueEncoding
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.revision = revision
        self.camerasExpected = camerasExpected
        self.cameras = cameras
        self.missing = missing
    }

    /// One id per revision: JetStream deduplicates a revision sent twice, a late sighting's new
    /// revision goes out.
    public var eventId: String { "\(itemId).r\(revision)" }
    public var time: Timestamp { lastSeen }
    public var complete: Bool { missing.isEmpty }
    /// A GS1 value split into its application identifiers, as on a sighting (the century of a
    /// date by GS1's window around the year the item was first seen); nil when it is not GS1
    /// data or does not parse whole.
    public var gs1Elements: [GS1ElementStrings.Element]? {
        guard gs1, valueEncoding == nil else { return nil }
        return GS1ElementStrings.parse(Array(value.utf8), referenceYear: firstSeen.utcYear)
    }

    public var json: [UInt8] {
        var writer = JSONWriter()
        writer.field("type", "item")
        writer.field("eventId", eventId)
        writer.field("itemId", itemId)
        writer.field("site", site)
        writer.field("lane", lane)
        writer.field("time", time.description)
        writer.field("symbology", symbology)
        writer.field("value", value)
        writer.field("valueEncoding", valueEncoding)
        if gs1 { writer.field("gs1", true) }
        writer.gs1Elements(gs1Elements)
        writer.field("firstSeen", firstSeen.description)
        writer.field("lastSeen", lastSeen.description)
        writer.field("revision", revision)
        writer.field("camerasExpected", camerasExpected)
        writer.raw(
            "cameras",
            JSONWriter.array(
                cameras.map { sighting in
                    var camera = JSONWriter()
                    camera.field("camera", sighting.camera)
                    camera.field("trackId", sighting.trackId)
                    camera.field("eventId", sighting.eventId)
                    camera.field("firstSeen", sighting.firstSeen.description)
                    camera.field("lastSeen", sighting.lastSeen.description)
                    camera.field("late", sighting.late)
                    return camera.finished()
                }))
        writer.strings("missing", missing)
        writer.field("complete", complete)
        return writer.finished()
    }

    public static func parse(_ event: JSONValue) throws(DeadLetter) -> ItemPassEvent {
        let fields = EventFields(event)
        try fields.type("item")
        var cameras: [CameraSighting] = []
        for camera in try fields.objects("cameras") {
            cameras.append(
                CameraSighting(
                    camera: try camera.token("camera"), trackId: try camera.string("trackId", maxLength: 256),
                    eventId: try camera.string("eventId", maxLength: 256), firstSeen: try camera.time("firstSeen"),
                    lastSeen: try camera.time("lastSeen"), late: try camera.bool("late", default: false)))
        }
        var parsed = ItemPassEvent(
            itemId: try fields.string("itemId", maxLength: 256), site: try fields.token("site"),
            lane: try fields.token("lane"), symbology: try fields.symbology("symbology"),
            value: try fields.string("value", maxLength: 8192),
            valueEncoding: try fields.optionalString("valueEncoding", maxLength: 16),
            firstSeen: try fields.time("firstSeen"), lastSeen: try fields.time("lastSeen"),
            revision: try fields.int("revision"), camerasExpected: try fields.int("camerasExpected"),
            cameras: cameras, missing: try fields.strings("missing"))
        parsed.gs1 = try fields.bool("gs1", default: false)
        guard try fields.string("eventId", maxLength: 300) == parsed.eventId else {
            throw DeadLetter(.badValue, "eventId is not itemId.rREVISION")
        }
        // The elements are the value's own: checked as a sighting's, and where sent they must be
        // what the value holds.
        if let sent = try SightingEvent.gs1Elements(event["gs1Elements"]), sent != parsed.gs1Elements {
            throw DeadLetter(.badValue, "gs1Elements are not the value's application identifiers")
        }
        return parsed
    }
}

/// `pack`: one completed pack-station session checked against its order.
public struct PackRecordEvent: Sendable, Equatable {
    /// One line of the order (or a code the order does not have), as counted.
    public struct Line: Sendable, Equatable {
        /// The order's line number; nil for a code the order does not list.
        public var line: Int?
        public var code: String
        public var symbology: String?
        public var expected: Int
        public var counted: Int
        public var verdict: PackVerdict

        public init(line: Int?, code: String, symbology: String?, expected: Int, counted: Int, verdict: PackVerdict) {
            self.line = line
            self.code = code
            self.symbology = symbology
            self.expected = expected
            self.counted = counted
            self.verdict = verdict
        }
    }

    public var sessionId: String
    public var site: String
    public var station: String
    public var camera: String
    public var orderId: String?
    public var verdict: PackVerdict
    public var items: Int
    public var startedAt: Timestamp
    public var completedAt: Timestamp
    public var lines: [Line]
    /// The trace this result continues (docs/integration.md, "Tracing"): the trace id of its session's `session.started` event.
    /// Sent in the message's `traceparent` header, not in its body; nil when that event came
    /// without one (an older agent).
    public var traceId: String?

    public init(
        sessionId: String, site: String, station: String, camera: String, orderId: String?, verdict: PackVerdict,
        items: Int,
        startedAt: Timestamp, completedAt: Timestamp, lines: [Line]
    ) {
        self.sessionId = sessionId
        self.site = site
        self.station = station
        self.camera = camera
        self.orderId = orderId
        self.verdict = verdict
        self.items = items
        self.startedAt = startedAt
        self.completedAt = completedAt
        self.lines = lines
    }

    public var eventId: String { "\(sessionId).pack" }
    public var time: Timestamp { completedAt }

    public var json: [UInt8] {
        var writer = JSONWriter()
        writer.field("type", "pack")
        writer.field("eventId", eventId)
        writer.field("site", site)
        writer.field("station", station)
        writer.field("camera", camera)
        writer.field("time", time.description)
        writer.field("sessionId", sessionId)
        writer.field("orderId", orderId)
        writer.field("verdict", verdict.rawValue)
        writer.field("items", items)
        writer.field("startedAt", startedAt.description)
        writer.field("completedAt", completedAt.description)
        writer.raw(
            "lines",
            JSONWriter.array(
                lines.map { line in
                    var entry = JSONWriter()
                    if let number = line.line { entry.field("line", number) }
                    entry.field("code", line.code)
                    entry.field("symbology", line.symbology)
                    entry.field("expected", line.expected)
                    entry.field("counted", line.counted)
                    entry.field("verdict", line.verdict.rawValue)
                    return entry.finished()
                }))
        return writer.finished()
    }

    /// A record's or a line's `verdict`, one of `PackVerdict`'s.
    static func verdict(_ fields: EventFields) throws(DeadLetter) -> PackVerdict {
        let name = try fields.string("verdict", maxLength: 32)
        guard let verdict = PackVerdict(rawValue: name) else {
            throw DeadLetter(.badValue, "verdict '\(TerminalText.escaped(name))' is not a pack verdict")
        }
        return verdict
    }

    public static func parse(_ event: JSONValue) throws(DeadLetter) -> PackRecordEvent {
        let fields = EventFields(event)
        try fields.type("pack")
        var lines: [Line] = []
        for line in try fields.objects("lines") {
            lines.append(
                Line(
                    line: line.event["line"] == nil ? nil : try line.int("line"),
                    code: try line.string("code", maxLength: 8192),
                    symbology: try line.optionalString("symbology", maxLength: 32), expected: try line.int("expected"),
                    counted: try line.int("counted"), verdict: try verdict(line)))
        }
        let parsed = PackRecordEvent(
            sessionId: try fields.string("sessionId", maxLength: 256), site: try fields.token("site"),
            station: try fields.token("station"), camera: try fields.token("camera"),
            orderId: try fields.optionalString("orderId"), verdict: try verdict(fields),
            items: try fields.int("items"), startedAt: try fields.time("startedAt"),
            completedAt: try fields.time("completedAt"), lines: lines)
        guard try fields.string("eventId", maxLength: 300) == parsed.eventId else {
            throw DeadLetter(.badValue, "eventId is not SESSION.pack")
        }
        return parsed
    }
}

/// A message refused on an agent subject, as the aggregator republishes it on
/// `scantrack.v1.deadletter.<reason>` (also stored in the table dead_letters).
public struct DeadLetterEvent: Sendable, Equatable {
    /// At most this much of the refused message is carried (base64).
    public static let payloadLimit = 4096

    public var reason: DeadLetterReason
    public var detail: String
    public var subject: String
    /// The first `payloadLimit` bytes of the message.
    public var payload: [UInt8]

    public init(reason: DeadLetterReason, detail: String, subject: String, payload: some Collection<UInt8>) {
        self.reason = reason
        self.detail = detail
        self.subject = subject
        self.payload = Array(payload.prefix(Self.payloadLimit))
    }

    public var json: [UInt8] {
        var writer = JSONWriter()
        writer.field("reason", reason.rawValue)
        writer.field("detail", detail)
        writer.field("subject", subject)
        writer.field("payload", Base64.encode(payload))
        return writer.finished()
    }

    public static func parse(_ event: JSONValue) throws(DeadLetter) -> DeadLetterEvent {
        let fields = EventFields(event)
        let name = try fields.string("reason", maxLength: 64)
        guard let reason = DeadLetterReason(rawValue: name) else {
            throw DeadLetter(.badValue, "reason '\(name)' is not a dead-letter reason")
        }
        let encoded = try fields.string("payload", maxLength: 4 * (payloadLimit / 3 + 1))
        guard let payload = Base64.decode(encoded) else { throw DeadLetter(.badValue, "payload is not base64") }
        return DeadLetterEvent(
            reason: reason, detail: try fields.string("detail", maxLength: 4096),
            subject: try fields.string("subject", maxLength: 1024), payload: payload)
    }
}

extension EventFields {
    /// The `type` field, which must be `expected`.
    func type(_ expected: String) throws(DeadLetter) {
        let type = try string("type", maxLength: 64)
        guard type == expected else { throw DeadLetter(.unknownType, "type '\(type)' is not '\(expected)'") }
    }

    /// An array of objects under `key`, each with the fields reader for its path (`lines[2].`).
    func objects(_ key: String) throws(DeadLetter) -> [EventFields] {
        guard let field = event[key] else { throw DeadLetter(.missingField, path + key) }
        guard case .array(let entries) = field else {
            throw DeadLetter(.wrongType, "\(path)\(key) is \(field.typeName), not an array")
        }
        var result: [EventFields] = []
        for (index, entry) in entries.enumerated() {
            guard case .object = entry else {
                throw DeadLetter(.wrongType, "\(path)\(key)[\(index)] is \(entry.typeName), not an object")
            }
            result.append(EventFields(entry, path: "\(path)\(key)[\(index)]."))
        }
        return result
    }

    /// An array of strings under `key`.
    func strings(_ key: String) throws(DeadLetter) -> [String] {
        guard let field = event[key] else { throw DeadLetter(.missingField, path + key) }
        guard case .array(let entries) = field else {
            throw DeadLetter(.wrongType, "\(path)\(key) is \(field.typeName), not an array")
        }
        let strings = entries.compactMap(\.stringValue)
        guard strings.count == entries.count else {
            throw DeadLetter(.wrongType, "\(path)\(key) holds something other than strings")
        }
        return strings
    }
}

/// `parcelpass`: one parcel along a lane, the parcels its cameras saw of it merged
/// (docs/schema/parcelpass.schema.json); republished with revision + 1 when a camera's parcel
/// joins after it closed.
public struct ParcelPassEvent: Sendable, Equatable {
    public struct Code: Sendable, Equatable {
        public var symbology: String
        public var value: String
        public var valueEncoding: String?
        /// The item pass of this code (nil: none, e.g. a code the rules rejected).
        public var itemId: String?
        /// Set on a code a person keyed from the picture of one of its no-reads: that no-read's id
        /// (the code's `source` is then `keyed`; nil: a camera read it).
        public var keyedFor: String?

        public init(symbology: String, value: String, valueEncoding: String?, itemId: String?, keyedFor: String? = nil)
        {
            self.symbology = symbology
            self.value = value
            self.valueEncoding = valueEncoding
            self.itemId = itemId
            self.keyedFor = keyedFor
        }

        public var json: [UInt8] {
            var entry = JSONWriter()
            entry.field("symbology", symbology)
            entry.field("value", value)
            entry.field("valueEncoding", valueEncoding)
            entry.field("itemId", itemId)
            if let keyedFor {
                entry.field("source", "keyed")
                entry.field("noReadId", keyedFor)
            }
            return entry.finished()
        }
    }

    /// A person's resolution of one of its no-reads (`scanadmin noreads resolve`), as its
    /// `coded` result says it.
    public struct Coding: Sendable, Equatable {
        public var noReadId: String
        public var camera: String
        public var outcome: NoReadResolution
        public var code: CodedEvent.Code?
        public var keyedBy: String
        public var keyedAt: Timestamp

        public init(
            noReadId: String, camera: String, outcome: NoReadResolution, code: CodedEvent.Code?, keyedBy: String,
            keyedAt: Timestamp
        ) {
            self.noReadId = noReadId
            self.camera = camera
            self.outcome = outcome
            self.code = code
            self.keyedBy = keyedBy
            self.keyedAt = keyedAt
        }

        public init(_ coded: CodedEvent) {
            self.init(
                noReadId: coded.noReadId, camera: coded.camera, outcome: coded.outcome, code: coded.code,
                keyedBy: coded.keyedBy, keyedAt: coded.keyedAt)
        }

        public var json: [UInt8] {
            var entry = JSONWriter()
            entry.field("noReadId", noReadId)
            entry.field("camera", camera)
            entry.field("outcome", outcome.rawValue)
            if let code { entry.raw("code", code.json) } else { entry.null("code") }
            entry.field("keyedBy", keyedBy)
            entry.field("keyedAt", keyedAt.description)
            return entry.finished()
        }

        /// A coding as a store kept it (its `json`); nil when it is not one.
        public init?(stored value: JSONValue) {
            guard let coding = try? Self.parse(EventFields(value)) else { return nil }
            self = coding
        }

        static func parse(_ fields: EventFields) throws(DeadLetter) -> Coding {
            let outcome = try CodedEvent.outcome(fields)
            let code = try CodedEvent.Code.parse(fields.event["code"])
            guard (outcome == .keyed) == (code != nil) else {
                throw DeadLetter(.badValue, "a coding has a code exactly when its outcome is keyed")
            }
            return Coding(
                noReadId: try fields.string("noReadId", maxLength: 256), camera: try fields.token("camera"),
                outcome: outcome, code: code, keyedBy: try fields.string("keyedBy", maxLength: 128),
                keyedAt: try fields.time("keyedAt"))
        }
    }

    /// One camera's parcel in it.
    public struct CameraParcel: Sendable, Equatable {
        public var camera: String
        public var parcelId: String
        /// The camera's picture of it in the images bucket (`ImageObject.name`; nil: none kept).
        public var image: String?

        public init(camera: String, parcelId: String, image: String? = nil) {
            self.camera = camera
            self.parcelId = parcelId
            self.image = image
        }
    }

    public var passId: String
    public var site: String
    public var lane: String
    public var firstSeen: Timestamp
    public var lastSeen: Timestamp
    public var revision: Int
    public var camerasExpected: Int
    public var parcels: [CameraParcel]
    public var codes: [Code]
    /// Required symbologies no camera read on it.
    public var missing: [String]
    /// What the lane's dimensioner or scale measured of it (nil: nothing yet, or no device).
    public var measurement: MeasureEvent?
    /// What people said of its no-reads, in the order they said it.
    public var codings: [Coding]
    /// The trace this result continues (docs/integration.md, "Tracing"): the trace id of its first camera's parcel.
    /// Sent in the message's `traceparent` header, not in its body; nil when that event came
    /// without one (an older agent).
    public var traceId: String?

    public init(
        passId: String, site: String, lane: String, firstSeen: Timestamp, lastSeen: Timestamp, revision: Int,
        camerasExpected: Int, parcels: [CameraParcel], codes: [Code], missing: [String],
        measurement: MeasureEvent? = nil, codings: [Coding] = []
    ) {
        self.measurement = measurement
        self.codings = codings
        self.passId = passId
        self.site = site
        self.lane = lane
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.revision = revision
        self.camerasExpected = camerasExpected
        self.parcels = parcels
        self.codes = codes
        self.missing = missing
    }

    public var eventId: String { "\(passId).r\(revision)" }
    public var noRead: Bool { codes.isEmpty }
    public var complete: Bool { !codes.isEmpty && missing.isEmpty }
    public var cameras: [String] { Array(Set(parcels.map(\.camera))).sorted() }

    public var json: [UInt8] {
        var writer = JSONWriter()
        writer.field("type", "parcelpass")
        writer.field("eventId", eventId)
        writer.field("passId", passId)
        writer.field("site", site)
        writer.field("lane", lane)
        writer.field("time", lastSeen.description)
        writer.field("firstSeen", firstSeen.description)
        writer.field("lastSeen", lastSeen.description)
        writer.field("revision", revision)
        writer.field("camerasExpected", camerasExpected)
        writer.raw(
            "parcels",
            JSONWriter.array(
                parcels.map { parcel in
                    var entry = JSONWriter()
                    entry.field("camera", parcel.camera)
                    entry.field("parcelId", parcel.parcelId)
                    entry.field("image", parcel.image)
                    return entry.finished()
                }))
        writer.raw("codes", JSONWriter.array(codes.map(\.json)))
        writer.strings("missing", missing)
        writer.field("complete", complete)
        writer.field("noRead", noRead)
        if let measurement { writer.raw("measurement", measurement.json) }
        if !codings.isEmpty { writer.raw("codings", JSONWriter.array(codings.map(\.json))) }
        return writer.finished()
    }

    public static func parse(_ event: JSONValue) throws(DeadLetter) -> ParcelPassEvent {
        let fields = EventFields(event)
        try fields.type("parcelpass")
        var parcels: [CameraParcel] = []
        for parcel in try fields.objects("parcels") {
            parcels.append(
                CameraParcel(
                    camera: try parcel.token("camera"), parcelId: try parcel.string("parcelId", maxLength: 256),
                    image: try parcel.optionalString("image", maxLength: 300)))
        }
        var codes: [Code] = []
        for code in try fields.objects("codes") {
            let source = try code.optionalString("source", maxLength: 16)
            guard source == nil || source == "keyed" else {
                throw DeadLetter(.badValue, "a parcel pass code's source is keyed or absent")
            }
            codes.append(
                Code(
                    symbology: try code.symbology("symbology"), value: try code.string("value", maxLength: 8192),
                    valueEncoding: try code.optionalString("valueEncoding", maxLength: 16),
                    itemId: try code.optionalString("itemId", maxLength: 256),
                    keyedFor: source == nil ? nil : try code.string("noReadId", maxLength: 256)))
        }
        var codings: [Coding] = []
        if event["codings"] != nil {
            for entry in try fields.objects("codings") { codings.append(try Coding.parse(entry)) }
        }
        return ParcelPassEvent(
            passId: try fields.string("passId", maxLength: 256), site: try fields.token("site"),
            lane: try fields.token("lane"), firstSeen: try fields.time("firstSeen"),
            lastSeen: try fields.time("lastSeen"),
            revision: try fields.int("revision"), camerasExpected: try fields.int("camerasExpected"), parcels: parcels,
            codes: codes, missing: try fields.strings("missing"),
            measurement: try event["measurement"].flatMap { value throws(DeadLetter) in
                value == .null ? nil : try MeasureEvent.parse(value)
            }, codings: codings)
    }
}

/// `coded`: a no-read a person resolved from its picture (docs/schema/coded.schema.json) —
/// the code they keyed, or that there was no label or no parcel. Published once per no-read
/// (`Nats-Msg-Id` = `eventId`, `<noReadId>.coded`).
public struct CodedEvent: Sendable, Equatable {
    /// The code as keyed, checked by its symbology's check characters (`KeyedCode`).
    public struct Code: Sendable, Equatable {
        /// nil: keyed without a symbology.
        public var symbology: String?
        public var value: String
        /// The value is GS1 data (as a sighting's `gs1`).
        public var gs1: Bool
        /// The value's GS1 application identifiers, where it is GS1 data.
        public var gs1Elements: [GS1ElementStrings.Element]?

        public init(
            symbology: String?, value: String, gs1: Bool = false, gs1Elements: [GS1ElementStrings.Element]? = nil
        ) {
            self.symbology = symbology
            self.value = value
            self.gs1 = gs1
            self.gs1Elements = gs1Elements
        }

        public var json: [UInt8] {
            var entry = JSONWriter()
            entry.field("symbology", orNull: symbology)
            entry.field("value", value)
            entry.field("source", "keyed")
            entry.field("gs1", gs1)
            entry.gs1Elements(gs1Elements)
            return entry.finished()
        }

        /// The code under a `code` key (nil: absent or null).
        static func parse(_ value: JSONValue?) throws(DeadLetter) -> Code? {
            guard let value, value != .null else { return nil }
            let entry = EventFields(value)
            return Code(
                symbology: try entry.optionalString("symbology", maxLength: 32),
                value: try entry.string("value", maxLength: KeyedCode.maxBytes * 4),
                gs1: try entry.bool("gs1", default: false),
                gs1Elements: try SightingEvent.gs1Elements(value["gs1Elements"]))
        }
    }

    public var noReadId: String
    public var site: String
    public var lane: String
    public var camera: String
    public var outcome: NoReadResolution
    /// nil unless `outcome` is `keyed`.
    public var code: Code?
    /// Who resolved it (the name they gave), and when the database stored it.
    public var keyedBy: String
    public var keyedAt: Timestamp
    /// When the camera first saw the label.
    public var noReadFirstSeen: Timestamp
    /// The item pass another camera of the lane read (nil: none did).
    public var itemId: String?
    /// The parcel pass holding the no-read (nil: the camera groups no parcels, or none held it).
    public var parcelPassId: String?
    /// The trace this result continues (docs/integration.md, "Tracing"): the trace id of the no-read a person resolved.
    /// Sent in the message's `traceparent` header, not in its body; nil when that event came
    /// without one (an older agent).
    public var traceId: String?

    public init(
        noReadId: String, site: String, lane: String, camera: String, outcome: NoReadResolution, code: Code?,
        keyedBy: String, keyedAt: Timestamp, noReadFirstSeen: Timestamp, itemId: String?, parcelPassId: String?
    ) {
        self.noReadId = noReadId
        self.site = site
        self.lane = lane
        self.camera = camera
        self.outcome = outcome
        self.code = code
        self.keyedBy = keyedBy
        self.keyedAt = keyedAt
        self.noReadFirstSeen = noReadFirstSeen
        self.itemId = itemId
        self.parcelPassId = parcelPassId
    }

    public var eventId: String { "\(noReadId).coded" }

    public var json: [UInt8] {
        var writer = JSONWriter()
        writer.field("type", "coded")
        writer.field("eventId", eventId)
        writer.field("noReadId", noReadId)
        writer.field("site", site)
        writer.field("lane", lane)
        writer.field("camera", camera)
        writer.field("time", keyedAt.description)
        writer.field("outcome", outcome.rawValue)
        if let code { writer.raw("code", code.json) } else { writer.null("code") }
        writer.field("keyedBy", keyedBy)
        writer.field("keyedAt", keyedAt.description)
        writer.field("noReadFirstSeen", noReadFirstSeen.description)
        writer.field("itemId", orNull: itemId)
        writer.field("parcelPassId", orNull: parcelPassId)
        return writer.finished()
    }

    static func outcome(_ fields: EventFields) throws(DeadLetter) -> NoReadResolution {
        let name = try fields.string("outcome", maxLength: 32)
        guard let outcome = NoReadResolution(rawValue: name) else {
            throw DeadLetter(.badValue, "outcome '\(TerminalText.escaped(name))' is not a no-read resolution")
        }
        return outcome
    }

    public static func parse(_ event: JSONValue) throws(DeadLetter) -> CodedEvent {
        let fields = EventFields(event)
        try fields.type("coded")
        let outcome = try outcome(fields)
        let code = try Code.parse(event["code"])
        guard (outcome == .keyed) == (code != nil) else {
            throw DeadLetter(.badValue, "a coded event has a code exactly when its outcome is keyed")
        }
        let parsed = CodedEvent(
            noReadId: try fields.string("noReadId", maxLength: 256), site: try fields.token("site"),
            lane: try fields.token("lane"), camera: try fields.token("camera"), outcome: outcome, code: code,
            keyedBy: try fields.string("keyedBy", maxLength: 128), keyedAt: try fields.time("keyedAt"),
            noReadFirstSeen: try fields.time("noReadFirstSeen"),
            itemId: try fields.optionalString("itemId", maxLength: 256),
            parcelPassId: try fields.optionalString("parcelPassId", maxLength: 256))
        guard try fields.string("eventId", maxLength: 300) == parsed.eventId else {
            throw DeadLetter(.badValue, "eventId is not NOREAD.coded")
        }
        return parsed
    }
}
