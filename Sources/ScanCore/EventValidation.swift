/// Why a message from an agent cannot be used. The reason is also the last token of the
/// `deadletter.<reason>` subject.
public enum DeadLetterReason: String, Sendable, CaseIterable {
    case tooLarge = "too-large"
    case invalidJSON = "invalid-json"
    case notAnObject = "not-an-object"
    case missingField = "missing-field"
    case wrongType = "wrong-type"
    case badValue = "bad-value"
    case unknownType = "unknown-type"
}

/// A message refused with its reason and a detail naming the field.
public struct DeadLetter: Error, Sendable, Equatable {
    public var reason: DeadLetterReason
    public var detail: String
    public init(_ reason: DeadLetterReason, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }
}

/// A sighting as the aggregator stores it (the `sightings` table's columns).
public struct SightingRecord: Sendable, Equatable {
    public var eventId: String
    public var site: String
    public var camera: String
    public var trackId: String
    public var symbology: String
    public var value: String
    public var valueEncoding: String
    public var status: String
    public var ruleId: String?
    public var role: String?
    public var lane: String?
    public var station: String?
    public var sessionId: String?
    public var gs1: Bool
    public var addOn: String?
    public var firstSeen: Timestamp
    public var lastSeen: Timestamp
    public var firstFrame: Int
    public var lastFrame: Int
    public var frames: Int
    public var decodes: Int
    public var time: Timestamp
}

/// A session event as stored.
public struct SessionRecord: Sendable, Equatable {
    public var eventId: String
    public var type: String
    public var site: String
    public var camera: String
    public var sessionId: String
    public var time: Timestamp
    public var reason: String?
    public var orderId: String?
}

/// Checks agent events against the contract (docs/integration.md, docs/schema/) before anything is stored.
public enum EventValidator {
    /// Larger messages are refused unread (a sighting is well under 2 KiB).
    public static let maxBytes = 64 * 1024

    public static func parse(_ bytes: [UInt8]) throws(DeadLetter) -> JSONValue {
        guard bytes.count <= maxBytes else { throw DeadLetter(.tooLarge, "\(bytes.count) bytes (at most \(maxBytes))") }
        let value: JSONValue
        do {
            value = try JSONValue.parse(bytes, maxDepth: 16)
        } catch {
            throw DeadLetter(.invalidJSON, error.description)
        }
        guard case .object = value else { throw DeadLetter(.notAnObject, "the message is \(value.typeName)") }
        return value
    }

    private static func string(_ event: JSONValue, _ key: String, maxLength: Int = 4096) throws(DeadLetter) -> String {
        guard let field = event[key] else { throw DeadLetter(.missingField, key) }
        guard case .string(let text) = field else {
            throw DeadLetter(.wrongType, "\(key) is \(field.typeName), not a string")
        }
        guard !text.isEmpty, text.utf8.count <= maxLength else {
            throw DeadLetter(.badValue, "\(key) is empty or longer than \(maxLength) bytes")
        }
        guard !text.utf8.contains(0) else { throw DeadLetter(.badValue, "\(key) holds a NUL character") }
        return text
    }

    private static func optionalString(_ event: JSONValue, _ key: String) throws(DeadLetter) -> String? {
        guard let field = event[key], field != .null else { return nil }
        return try string(event, key)
    }

    private static func int(_ event: JSONValue, _ key: String) throws(DeadLetter) -> Int {
        guard let field = event[key] else { throw DeadLetter(.missingField, key) }
        guard let number = field.intValue, number >= 0 else {
            throw DeadLetter(.wrongType, "\(key) is \(field.typeName), not a whole number ≥ 0")
        }
        return number
    }

    private static func time(_ event: JSONValue, _ key: String) throws(DeadLetter) -> Timestamp {
        let text = try string(event, key, maxLength: 64)
        guard let instant = Timestamp(rfc3339: text) else {
            throw DeadLetter(.badValue, "\(key) '\(text)' is not an RFC 3339 time")
        }
        return instant
    }

    /// A sighting, checked field by field.
    public static func sighting(_ event: JSONValue) throws(DeadLetter) -> SightingRecord {
        guard try string(event, "type") == "sighting" else { throw DeadLetter(.unknownType, "type is not sighting") }
        let status = try string(event, "status")
        guard status == "accepted" || status == "rejected" else {
            throw DeadLetter(.badValue, "status '\(status)' is not accepted or rejected")
        }
        let encoding = try optionalString(event, "valueEncoding") ?? "text"
        guard encoding == "text" || encoding == "base64" else {
            throw DeadLetter(.badValue, "valueEncoding '\(encoding)' is not text or base64")
        }
        let value = try string(event, "value", maxLength: 8192)
        if encoding == "base64" && Base64.decode(value) == nil { throw DeadLetter(.badValue, "value is not base64") }
        var gs1 = false
        if let field = event["gs1"] {
            guard let flag = field.boolValue else {
                throw DeadLetter(.wrongType, "gs1 is \(field.typeName), not a boolean")
            }
            gs1 = flag
        }
        let record = SightingRecord(
            eventId: try string(event, "eventId", maxLength: 256), site: try string(event, "site", maxLength: 128),
            camera: try string(event, "camera", maxLength: 128), trackId: try string(event, "trackId", maxLength: 256),
            symbology: try string(event, "symbology", maxLength: 32), value: value, valueEncoding: encoding,
            status: status,
            ruleId: try optionalString(event, "ruleId"), role: try optionalString(event, "role"),
            lane: try optionalString(event, "lane"),
            station: try optionalString(event, "station"), sessionId: try optionalString(event, "sessionId"), gs1: gs1,
            addOn: try optionalString(event, "addOn"), firstSeen: try time(event, "firstSeen"),
            lastSeen: try time(event, "lastSeen"),
            firstFrame: try int(event, "firstFrame"), lastFrame: try int(event, "lastFrame"),
            frames: try int(event, "frames"),
            decodes: try int(event, "decodes"), time: try time(event, "time"))
        guard record.lastSeen >= record.firstSeen, record.lastFrame >= record.firstFrame else {
            throw DeadLetter(.badValue, "lastSeen/lastFrame before firstSeen/firstFrame")
        }
        return record
    }

    /// `session.started` or `session.completed`.
    public static func session(_ event: JSONValue) throws(DeadLetter) -> SessionRecord {
        let type = try string(event, "type")
        guard type == "session.started" || type == "session.completed" else {
            throw DeadLetter(.unknownType, "type '\(type)'")
        }
        let reason = try optionalString(event, "reason")
        if type == "session.completed" && reason == nil { throw DeadLetter(.missingField, "reason") }
        if type == "session.completed" {
            guard let codes = event["codes"] else { throw DeadLetter(.missingField, "codes") }
            guard case .array = codes else { throw DeadLetter(.wrongType, "codes is \(codes.typeName), not an array") }
        }
        return SessionRecord(
            eventId: try string(event, "eventId", maxLength: 256), type: type,
            site: try string(event, "site", maxLength: 128),
            camera: try string(event, "camera", maxLength: 128),
            sessionId: try string(event, "sessionId", maxLength: 256),
            time: try time(event, "time"), reason: reason, orderId: try optionalString(event, "orderId"))
    }
}
