import ScanCore

/// Reads one event's fields and refuses what breaks the contract, naming the field: the one
/// place where the wire types (`SightingEvent`, `SessionEvent`, `TrackEvent`, `StatusEvent`)
/// check their JSON.
struct EventFields {
    let event: JSONValue
    /// Put before field names in errors (`codes[2].`) for nested objects.
    let path: String

    init(_ event: JSONValue, path: String = "") {
        self.event = event
        self.path = path
    }

    func string(_ key: String, maxLength: Int = 4096) throws(DeadLetter) -> String {
        guard let field = event[key] else { throw DeadLetter(.missingField, path + key) }
        guard case .string(let text) = field else {
            throw DeadLetter(.wrongType, "\(path)\(key) is \(field.typeName), not a string")
        }
        guard !text.isEmpty, text.utf8.count <= maxLength else {
            throw DeadLetter(.badValue, "\(path)\(key) is empty or longer than \(maxLength) bytes")
        }
        guard !text.utf8.contains(0) else { throw DeadLetter(.badValue, "\(path)\(key) holds a NUL character") }
        return text
    }

    func optionalString(_ key: String, maxLength: Int = 4096) throws(DeadLetter) -> String? {
        guard let field = event[key], field != .null else { return nil }
        return try string(key, maxLength: maxLength)
    }

    /// A site, camera, lane or station id: it becomes part of subjects, so it must be a `SubjectToken`.
    func token(_ key: String) throws(DeadLetter) -> String {
        let text = try string(key, maxLength: 4096)
        guard SubjectToken.isValid(text) else {
            throw DeadLetter(.badToken, SubjectTokenError(field: path + key, value: text).description)
        }
        return text
    }

    func optionalToken(_ key: String) throws(DeadLetter) -> String? {
        guard let field = event[key], field != .null else { return nil }
        return try token(key)
    }

    func int(_ key: String) throws(DeadLetter) -> Int {
        guard let field = event[key] else { throw DeadLetter(.missingField, path + key) }
        guard let number = field.intValue, number >= 0 else {
            throw DeadLetter(.wrongType, "\(path)\(key) is \(field.typeName), not a whole number ≥ 0")
        }
        return number
    }

    func optionalDouble(_ key: String) throws(DeadLetter) -> Double? {
        guard let field = event[key], field != .null else { return nil }
        guard let number = field.doubleValue, number.isFinite else {
            throw DeadLetter(.wrongType, "\(path)\(key) is \(field.typeName), not a number")
        }
        return number
    }

    func bool(_ key: String, default fallback: Bool) throws(DeadLetter) -> Bool {
        guard let field = event[key], field != .null else { return fallback }
        guard let flag = field.boolValue else {
            throw DeadLetter(.wrongType, "\(path)\(key) is \(field.typeName), not a boolean")
        }
        return flag
    }

    func time(_ key: String) throws(DeadLetter) -> Timestamp {
        let text = try string(key, maxLength: 64)
        guard let instant = Timestamp(rfc3339: text) else {
            throw DeadLetter(.badValue, "\(path)\(key) '\(text)' is not an RFC 3339 time")
        }
        return instant
    }

    func optionalTime(_ key: String) throws(DeadLetter) -> Timestamp? {
        guard let field = event[key], field != .null else { return nil }
        return try time(key)
    }

    /// A symbology name (`Symbology`'s raw values: `EAN-13`, `QR-Code`, …) under `key`.
    func symbology(_ key: String) throws(DeadLetter) -> String {
        let name = try string(key, maxLength: 32)
        guard Symbology(rawValue: name) != nil else {
            throw DeadLetter(
                .badValue, "\(path)\(key) '\(name)' is not a symbology ScanTrack reads (EAN-13, CODE-128, QR-Code, …)")
        }
        return name
    }

    /// `[[x, y], …]` under `key` of `object`.
    static func points(_ value: JSONValue?, at key: String) throws(DeadLetter) -> [Point] {
        guard let value else { throw DeadLetter(.missingField, key) }
        guard case .array(let items) = value, (1...64).contains(items.count) else {
            throw DeadLetter(.wrongType, "\(key) is \(value.typeName), not a list of 1 to 64 [x, y] points")
        }
        var points: [Point] = []
        for item in items {
            guard case .array(let pair) = item, pair.count == 2, let x = pair[0].intValue, let y = pair[1].intValue
            else {
                throw DeadLetter(.badValue, "\(key) holds something other than [x, y] whole numbers")
            }
            points.append(Point(x: x, y: y))
        }
        return points
    }

    /// `box`: the corners where a code or region was first and last seen. Absent or null: nil,
    /// unless `required` (then missing is a missing field, null a wrong type).
    func boxes(required: Bool) throws(DeadLetter) -> (first: [Point], last: [Point])? {
        guard let box = event["box"] else {
            if required { throw DeadLetter(.missingField, path + "box") }
            return nil
        }
        if box == .null && !required { return nil }
        guard case .object = box else { throw DeadLetter(.wrongType, "\(path)box is \(box.typeName), not an object") }
        return (
            try EventFields.points(box["first"], at: path + "box.first"),
            try EventFields.points(box["last"], at: path + "box.last")
        )
    }

    /// `{"first": [[x, y], …], "last": […]}`, as `boxes` reads it.
    static func boxesJSON(first: [Point], last: [Point]) -> [UInt8] {
        var box = JSONWriter()
        box.raw("first", JSONWriter.points(first))
        box.raw("last", JSONWriter.points(last))
        return box.finished()
    }

    /// The envelope every event has.
    func envelope(type expected: Set<String>) throws(DeadLetter) -> EventEnvelope {
        let type = try string("type", maxLength: 64)
        guard expected.contains(type) else { throw DeadLetter(.unknownType, "type '\(type)'") }
        return EventEnvelope(
            type: type, eventId: try string("eventId", maxLength: 256), site: try token("site"),
            camera: try token("camera"), time: try time("time"))
    }
}

/// The fields every agent event starts with.
public struct EventEnvelope: Sendable, Equatable {
    public var type: String
    public var eventId: String
    public var site: String
    public var camera: String
    public var time: Timestamp

    public init(type: String, eventId: String, site: String, camera: String, time: Timestamp) {
        self.type = type
        self.eventId = eventId
        self.site = site
        self.camera = camera
        self.time = time
    }

    /// A writer with the envelope written.
    func writer() -> JSONWriter {
        var writer = JSONWriter()
        writer.field("type", type)
        writer.field("eventId", eventId)
        writer.field("site", site)
        writer.field("camera", camera)
        writer.field("time", time.description)
        return writer
    }
}
