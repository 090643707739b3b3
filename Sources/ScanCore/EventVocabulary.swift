// The contract's enumerations that producers and consumers share: what the agent's parts decide
// and what the events carry, spelled once.

/// A pack record's verdict, and each of its lines' (docs/schema/pack.schema.json): a line is
/// complete, short, over or (a code the order does not list) unexpected; the record is the worst
/// of its lines, or `unknown-order`.
public enum PackVerdict: String, Sendable, CaseIterable {
    case complete, short, over, unexpected
    case unknownOrder = "unknown-order"
}

/// Why a parcel is diverted (docs/schema/decision.schema.json).
public enum DecisionReason: String, Sendable, CaseIterable {
    /// None of its codes was read.
    case noRead = "no-read"
    /// A symbology `grouping.require` names is not among its codes.
    case missingRequired = "missing-required"
    /// A code the rules reject is on it.
    case rejectedCode = "rejected-code"
    /// It carries no code of an order the aggregator knows.
    case unknownOrder = "unknown-order"
    /// Its order's lines are not all on it, or more than they list.
    case shortPack = "short-pack"
    case overPack = "over-pack"

    /// What one camera's parcel can tell (orders are the aggregator's).
    public static let agentReasons: [DecisionReason] = [.noRead, .missingRequired, .rejectedCode]

    /// A `divertOn` list of reason names, each one of `allowed`; nil when absent or not a list
    /// (every problem reported by path).
    public static func read(
        _ value: JSONValue?, at path: String, allowed: [DecisionReason], reader: inout ConfigReader
    ) -> Set<DecisionReason>? {
        guard let names = reader.array(value, at: path) else { return nil }
        var reasons: Set<DecisionReason> = []
        for (index, element) in names.enumerated() {
            guard let name = reader.string(element, at: "\(path)[\(index)]") else { continue }
            if let reason = DecisionReason(rawValue: name), allowed.contains(reason) {
                reasons.insert(reason)
            } else {
                reader.fail(
                    "\(path)[\(index)]",
                    "'\(TerminalText.escaped(name))' is not one of \(allowed.map(\.rawValue).joined(separator: ", "))")
            }
        }
        return reasons
    }
}

/// Why a session ended: `session.completed`'s `reason`.
public enum SessionStopReason: String, Sendable {
    case count, duration, idle, command, endOfStream = "end-of-stream"
}

/// Why a label seen was not read: the no-read's `reason` (docs/integration.md).
public enum NoReadReason: String, Sendable, Equatable, CaseIterable {
    /// Seen whole, it left the view and nothing decoded it (no picture of it to say why).
    case undecoded
    /// Seen whole and not decoded, and its picture says why (`LabelQuality`): its narrowest
    /// element spans fewer pixels than the engines read,
    case tooSmall = "too-small"
    /// its edges are spread over several pixels (focus, motion),
    case blurred
    /// its bars hardly stand out from the paper,
    case lowContrast = "low-contrast"
    /// the paper is clipped white and the bars washed out grey,
    case overexposed
    /// it looks like a family (linear, matrix) no configured symbology has,
    case unconfiguredSymbology = "unconfigured-symbology"
    /// or none of those: sharp, large and contrasty enough, yet unread (torn, smeared, covered,
    /// printed badly).
    case damaged
    /// A read of it was never confirmed (decoded in fewer frames than `tracking.minDecodes`,
    /// and its value carries no check that proves it).
    case unconfirmed
    /// Only ever seen cut by the edge of the frame or the region of interest.
    case cutByEdge = "cut-by-edge"
    /// Seen whole and still in view when the stream (a clip) ended.
    case clipEnded = "clip-ended"
    /// Seen whole and still in view when the agent paused or stopped.
    case stopped
}

/// What kind of code a region looked like.
public enum CodeFamily: String, Sendable, Equatable {
    /// Bars in one direction (EAN, Code 128, …).
    case linear
    /// Modules in both directions (QR, DataMatrix, …).
    case matrix
}

/// What a person said of a no-read from its picture (`scanadmin noreads resolve`, the operator
/// page): the contract's `coded` event carries it.
public enum NoReadResolution: String, Sendable, Equatable, CaseIterable {
    /// They read the label in the picture and keyed its code.
    case keyed
    /// There was no label to read (the camera followed something else on the parcel).
    case noLabel = "no-label"
    /// What the camera saw was not a parcel (a hand, a tote, a piece of tape).
    case notAParcel = "not-a-parcel"
}
