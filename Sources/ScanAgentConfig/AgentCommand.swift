import ScanCore

/// A request on `<prefix>.v1.cmd.<site>.<camera>.<verb>` (docs/integration.md, "Commands"). The body is
/// empty or one JSON object; `session.start` may carry `{"orderId": "…"}`.
public enum AgentCommand: Sendable, Equatable {
    /// What is wrong with an order id for `session.start`, nil when nothing: 1 to 128 bytes, no
    /// control characters (as a WMS's order ids are held: it becomes the session's and the pack
    /// record's order, shown in reports and on the dashboard). `scanadmin agent` checks it too.
    public static func orderIdProblem(_ text: String) -> String? {
        if text.isEmpty || text.utf8.count > 128 { return "must be 1 to 128 bytes" }
        if text.unicodeScalars.contains(where: TerminalText.needsEscape) {
            return "'\(TerminalText.escaped(text))' holds a control character"
        }
        return nil
    }

    case sessionStart(orderId: String?)
    case sessionStop
    case pause
    case resume
    case status
    /// New exposure, gain, frame rate, focus or region for the camera, without a restart.
    case setControls(CameraControls)
    /// One frame from a camera in software trigger mode (a photo-eye's PLC, a pack station's button).
    case trigger
    /// The latest frame, at most `maxWidth` pixels wide, with every tracked code's box drawn on it
    /// (a JPEG), and the boxes as data.
    case snapshot(maxWidth: Int)

    public static let verbs = [
        "session.start", "session.stop", "pause", "resume", "status", "set-controls", "trigger", "snapshot",
    ]
    /// `snapshot`'s picture width when the request names none, and the widths it may name.
    public static let snapshotWidth = 960
    public static let snapshotWidths = 160...3840

    public var verb: String {
        switch self {
        case .sessionStart: "session.start"
        case .sessionStop: "session.stop"
        case .pause: "pause"
        case .resume: "resume"
        case .status: "status"
        case .setControls: "set-controls"
        case .trigger: "trigger"
        case .snapshot: "snapshot"
        }
    }

    /// The controls `set-controls` may change while the camera streams.
    public static let liveControls = [
        "exposureMicroseconds", "gainDecibels", "frameRate", "focus", "region", "features", "clampOutOfRange",
    ]

    /// Parses a request; the error says what is wrong in words a WMS developer can act on.
    public static func parse(verb: String, body: [UInt8]) -> Result<AgentCommand, CommandError> {
        guard verbs.contains(verb) else {
            return .failure(
                CommandError(verb: verb, message: "unknown verb '\(verb)'; known: \(verbs.joined(separator: ", "))"))
        }
        var fields: [String: JSONValue] = [:]
        if !body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            let document: JSONValue
            do {
                document = try JSONValue.parse(body, maxDepth: 8)
            } catch {
                return .failure(CommandError(verb: verb, message: "the request is not JSON: \(error)"))
            }
            guard case .object(let members) = document else {
                return .failure(
                    CommandError(verb: verb, message: "the request must be a JSON object, not \(document.typeName)"))
            }
            for (key, value) in members { fields[key] = value }
        }
        let allowed: Set<String> =
            verb == "session.start"
            ? ["orderId"] : verb == "set-controls" ? Set(liveControls) : verb == "snapshot" ? ["maxWidth"] : []
        if let unknown = fields.keys.sorted().first(where: { !allowed.contains($0) }) {
            let known = allowed.isEmpty ? "it takes none" : "it takes: " + allowed.sorted().joined(separator: ", ")
            return .failure(CommandError(verb: verb, message: "unknown key '\(unknown)' for \(verb); \(known)"))
        }
        switch verb {
        case "session.start":
            var orderId: String?
            if let value = fields["orderId"] {
                guard let text = value.stringValue else {
                    return .failure(CommandError(verb: verb, message: "orderId must be a string of 1 to 128 bytes"))
                }
                if let problem = Self.orderIdProblem(text) {
                    return .failure(CommandError(verb: verb, message: "orderId \(problem)"))
                }
                orderId = text
            }
            return .success(.sessionStart(orderId: orderId))
        case "session.stop": return .success(.sessionStop)
        case "pause": return .success(.pause)
        case "resume": return .success(.resume)
        case "set-controls":
            var reader = ConfigReader()
            guard fields.isEmpty == false,
                let controls = CameraControls.parse(
                    .object(fields.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }), at: "controls",
                    reader: &reader),
                reader.issues.isEmpty
            else {
                let problems = reader.issues.map(\.description).joined(separator: "; ")
                return .failure(
                    CommandError(
                        verb: verb,
                        message: problems.isEmpty
                            ? "name at least one of \(liveControls.joined(separator: ", "))" : problems))
            }
            return .success(.setControls(controls))
        case "trigger": return .success(.trigger)
        case "snapshot":
            guard let value = fields["maxWidth"] else { return .success(.snapshot(maxWidth: snapshotWidth)) }
            guard let width = value.intValue, snapshotWidths.contains(width) else {
                return .failure(
                    CommandError(
                        verb: verb,
                        message:
                            "maxWidth must be a whole number of pixels from \(snapshotWidths.lowerBound) to \(snapshotWidths.upperBound)"
                    ))
            }
            return .success(.snapshot(maxWidth: width))
        default: return .success(.status)
        }
    }
}

public struct CommandError: Error, Sendable, Equatable {
    public var verb: String
    public var message: String
    public init(verb: String, message: String) {
        self.verb = verb
        self.message = message
    }

    /// `{"ok": false, "verb": …, "error": …}`.
    public func reply(camera: CameraIdentity) -> [UInt8] {
        var writer = JSONWriter()
        writer.field("ok", false)
        writer.field("verb", verb)
        writer.field("camera", camera.id)
        writer.field("error", message)
        return writer.finished()
    }
}

/// `{"ok": true, "verb": …, "camera": …}` plus what the command did.
public func commandReply(verb: String, camera: CameraIdentity, fields: (inout JSONWriter) -> Void = { _ in }) -> [UInt8]
{
    var writer = JSONWriter()
    writer.field("ok", true)
    writer.field("verb", verb)
    writer.field("camera", camera.id)
    fields(&writer)
    return writer.finished()
}
