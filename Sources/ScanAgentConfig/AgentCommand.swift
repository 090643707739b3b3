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
    /// A viewer's lease: previews (snapshots) on `<prefix>.v1.preview.<site>.<camera>` for the
    /// lease's seconds, renewed by the viewer while it watches; none once every lease has run out.
    case preview(PreviewLease)

    public static let verbs = [
        "session.start", "session.stop", "pause", "resume", "status", "set-controls", "trigger", "snapshot",
        "preview",
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
        case .preview: "preview"
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
            ? ["orderId"]
            : verb == "set-controls"
                ? Set(liveControls)
                : verb == "snapshot" ? ["maxWidth"] : verb == "preview" ? ["seconds", "maxWidth", "rate"] : []
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
            return wholeNumber(fields["maxWidth"], "maxWidth", "pixels", in: snapshotWidths, verb: verb).map {
                .snapshot(maxWidth: $0 ?? snapshotWidth)
            }
        case "preview":
            var lease = PreviewLease()
            let asked = [
                ("seconds", "seconds", PreviewLease.secondsRange, \PreviewLease.seconds),
                ("maxWidth", "pixels", snapshotWidths, \PreviewLease.maxWidth),
                ("rate", "pictures a second", PreviewLease.rates, \PreviewLease.rate),
            ]
            for (key, unit, range, field) in asked {
                switch wholeNumber(fields[key], key, unit, in: range, verb: verb) {
                case .failure(let error): return .failure(error)
                case .success(let value): if let value { lease[keyPath: field] = value }
                }
            }
            return .success(.preview(lease))
        default: return .success(.status)
        }
    }

    /// An optional whole number within `range`; the error names the key, its unit and the range.
    private static func wholeNumber(
        _ value: JSONValue?, _ key: String, _ unit: String, in range: ClosedRange<Int>, verb: String
    ) -> Result<Int?, CommandError> {
        guard let value else { return .success(nil) }
        guard let number = value.intValue, range.contains(number) else {
            return .failure(
                CommandError(
                    verb: verb,
                    message: "\(key) must be a whole number of \(unit) from \(range.lowerBound) to \(range.upperBound)")
            )
        }
        return .success(number)
    }
}

/// What a viewer asks of `preview`: pictures for `seconds` (1 to 30), at most `maxWidth` pixels
/// wide, `rate` a second (1 to 10). With several viewers the agent sends the widest at the
/// highest rate any lease still running asks.
public struct PreviewLease: Sendable, Equatable {
    public static let secondsRange = 1...30
    public static let rates = 1...10
    public var seconds = 5
    public var maxWidth = 640
    public var rate = 4

    public init(seconds: Int = 5, maxWidth: Int = 640, rate: Int = 4) {
        self.seconds = seconds
        self.maxWidth = maxWidth
        self.rate = rate
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
