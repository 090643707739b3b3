import ScanCore

/// Which pictures the agent keeps in the images bucket (`images`; docs/agent-config.md). Off by
/// default: the bucket needs an aggregator that made it, and a disk budget on the bus.
public struct ImagesConfig: Sendable, Equatable {
    /// `images.keep`, each level keeping what the one before it keeps and more.
    public enum Keep: Sendable, Equatable {
        /// Nothing (the default).
        case none
        /// Each no-read's picture.
        case noreads
        /// And each parcel this camera diverts (its decision, or with no decisions a parcel missing
        /// a required code).
        case diverts
        /// And this share (0–100) of the other parcels, chosen by their ids (the same parcels on
        /// every replay).
        case sample(percent: Double)
        /// Every parcel and no-read.
        case all

        public var text: String {
            switch self {
            case .none: "none"
            case .noreads: "noreads"
            case .diverts: "diverts"
            case .sample(let percent): "\(JSONWriter.format(percent, decimals: 2))%"
            case .all: "all"
            }
        }

        public init?(text: String) {
            switch text {
            case "none": self = .none
            case "noreads": self = .noreads
            case "diverts": self = .diverts
            case "all": self = .all
            default:
                guard text.hasSuffix("%"), let percent = Double(text.dropLast()), (0...100).contains(percent) else {
                    return nil
                }
                self = .sample(percent: percent)
            }
        }

        /// Whether a parcel's picture is kept: `noRead` (no code read), `diverted` (as above).
        public func keepsParcel(id: String, noRead: Bool, diverted: Bool) -> Bool {
            switch self {
            case .none: false
            case .noreads: noRead
            case .diverts: noRead || diverted
            case .sample(let percent): noRead || diverted || Self.sampled(id, percent: percent)
            case .all: true
            }
        }

        /// Whether a parcel's picture is kept however the parcel ends (read or not, diverted or
        /// not): `all`, or a share that chose its id. Its sightings can then name the picture
        /// before the parcel closes (`SightingEvent.parcelImage`).
        public func keepsParcelWhateverItsEnd(id: String) -> Bool {
            switch self {
            case .none, .noreads, .diverts: false
            case .sample(let percent): Self.sampled(id, percent: percent)
            case .all: true
            }
        }

        public var keepsNoReads: Bool { self != .none }
        /// Whether any parcel can be kept (the pipeline then keeps parcel pictures).
        public var keepsParcels: Bool { self != .none && self != .noreads }

        /// FNV-1a of the id, in 10,000 steps: stable across runs and platforms.
        static func sampled(_ id: String, percent: Double) -> Bool {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in id.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return Double(hash % 10_000) < percent * 100
        }
    }

    public var keep: Keep = .none
    /// JPEG quality 1–100.
    public var quality = 80
    /// Pixels of the frame kept around a parcel's codes on each side.
    public var margin = 48
    /// A picture wider than this is halved until it is not.
    public var maxWidth = 1600

    public init() {}

    static let keys = ["keep", "quality", "margin", "maxWidth"]

    var document: JSONValue {
        .object([
            ("keep", .string(keep.text)), ("quality", .number(Double(quality))), ("margin", .number(Double(margin))),
            ("maxWidth", .number(Double(maxWidth))),
        ])
    }

    /// Reads the `images` object over these settings; every problem by path.
    mutating func read(_ value: JSONValue?, at path: String, reader: inout ConfigReader) {
        guard let members = reader.object(value, at: path, allowed: Self.keys) else { return }
        if let text = reader.string(members["keep"], at: "\(path).keep") {
            if let keep = Keep(text: text) {
                self.keep = keep
            } else {
                reader.fail(
                    "\(path).keep",
                    "'\(TerminalText.escaped(text))' is not none, noreads, diverts, all or a share such as \"10%\"")
            }
        }
        if let quality = reader.int(members["quality"], at: "\(path).quality", range: 1...100) {
            self.quality = quality
        }
        if let margin = reader.int(members["margin"], at: "\(path).margin", range: 0...2_000) { self.margin = margin }
        if let width = reader.int(members["maxWidth"], at: "\(path).maxWidth", range: 160...8_192) { maxWidth = width }
    }
}
