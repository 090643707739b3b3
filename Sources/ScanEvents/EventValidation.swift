import ScanCore

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
    /// The event names another site or camera than the subject it arrived on.
    case subjectMismatch = "subject-mismatch"
    /// A site, camera, lane or station that cannot be a subject token (`SubjectToken`).
    case badToken = "bad-token"
    /// The event names a lane or station other than the topology's for its camera.
    case laneMismatch = "lane-mismatch"
    case stationMismatch = "station-mismatch"
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

/// The first checks on a message from an agent, before its wire type reads it (`SightingEvent.parse`
/// and the others check the fields): its size, that it is JSON, that it is an object.
public enum EventValidator {
    /// Larger messages are refused unread (a sighting is well under 2 KiB).
    public static let maxBytes = 64 * 1024

    /// A no-read carries its picture: larger, up to this.
    public static let maxNoReadBytes = 2 * 1024 * 1024

    /// Most members of one object in an event (a sighting has about 25).
    public static let maxMembers = 256

    public static func parse(_ bytes: [UInt8], maxBytes: Int = maxBytes) throws(DeadLetter) -> JSONValue {
        guard bytes.count <= maxBytes else { throw DeadLetter(.tooLarge, "\(bytes.count) bytes (at most \(maxBytes))") }
        let value: JSONValue
        do {
            value = try JSONValue.parse(bytes, maxDepth: 16, maxMembers: maxMembers)
        } catch {
            throw DeadLetter(.invalidJSON, error.description)
        }
        guard case .object = value else { throw DeadLetter(.notAnObject, "the message is \(value.typeName)") }
        return value
    }

    /// An event is taken only from the subject of the site and camera it names: with per-camera
    /// permissions on the bus, the subject says who sent it.
    public static func checkSender(
        site: String, camera: String, subject: String, family: SubjectFamily, subjects: ContractSubjects
    ) throws(DeadLetter) {
        guard let sender = subjects.sender(ofAgentSubject: subject, family: family) else {
            throw DeadLetter(
                .subjectMismatch,
                "subject '\(TerminalText.escaped(subject))' is not \(subjects.agentPattern(family))")
        }
        guard sender.site == site, sender.camera == camera else {
            throw DeadLetter(
                .subjectMismatch,
                "the event names site '\(site)' and camera '\(camera)' but came on '\(subject)' (site '\(sender.site)', camera '\(sender.camera)')"
            )
        }
    }

    /// A decision is taken only from its own lane's subject, `<prefix>.v1.decision.<site>.<lane>`
    /// (the bus lets a camera publish on its lane's only; the topology check that the camera it
    /// names is on that lane follows).
    public static func checkDecisionSender(_ decision: DecisionEvent, subject: String, subjects: ContractSubjects)
        throws(DeadLetter)
    {
        try checkLaneSender(
            site: decision.site, lane: decision.lane, subject: subject, family: .decision, subjects: subjects)
    }

    /// An event about a lane (a decision, a measurement) is taken only from that lane's subject,
    /// `<prefix>.v1.<family>.<site>.<lane>`: what may publish there is the bus's permissions' say.
    public static func checkLaneSender(
        site: String, lane: String, subject: String, family: SubjectFamily, subjects: ContractSubjects
    ) throws(DeadLetter) {
        guard let sender = subjects.sender(ofAgentSubject: subject, family: family) else {
            throw DeadLetter(
                .subjectMismatch,
                "subject '\(TerminalText.escaped(subject))' is not \(subjects.prefix).v1.\(family.rawValue).{site}.{lane}"
            )
        }
        guard sender.site == site, sender.camera == lane else {
            throw DeadLetter(
                .subjectMismatch,
                "the \(family.rawValue) names site '\(site)' and lane '\(lane)' but came on '\(TerminalText.escaped(subject))'"
            )
        }
    }
}
