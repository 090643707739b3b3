import ScanCore

/// `measure`: what a dimensioner or a scale on a lane measured of one parcel, on
/// `<prefix>.v1.measure.<site>.<lane>` (docs/schema/measure.schema.json). The aggregator attaches
/// each one to the parcel pass that was at the device at `time`.
public struct MeasureEvent: Sendable, Equatable {
    public var eventId: String
    public var site: String
    public var lane: String
    /// The dimensioner's or scale's id (a token).
    public var device: String
    /// When the parcel passed the device's measuring line.
    public var time: Timestamp
    /// Millimetres and kilograms; at least one of them.
    public var length: Double?
    public var width: Double?
    public var height: Double?
    public var weight: Double?

    public init(
        eventId: String, site: String, lane: String, device: String, time: Timestamp, length: Double? = nil,
        width: Double? = nil, height: Double? = nil, weight: Double? = nil
    ) {
        self.eventId = eventId
        self.site = site
        self.lane = lane
        self.device = device
        self.time = time
        self.length = length
        self.width = width
        self.height = height
        self.weight = weight
    }

    /// The largest length (mm) and weight (kg) taken: a 10 m or 10 t parcel is a broken reading.
    public static let maxMillimetres = 10_000.0
    public static let maxKilograms = 10_000.0

    /// As published and stored; the measurement a parcel pass carries is this object.
    public var json: [UInt8] {
        var writer = JSONWriter()
        writer.field("type", "measure")
        writer.field("eventId", eventId)
        writer.field("site", site)
        writer.field("lane", lane)
        writer.field("device", device)
        writer.field("time", time.description)
        for (name, value) in [("length", length), ("width", width), ("height", height), ("weight", weight)] {
            if let value { writer.field(name, value, decimals: 3) }
        }
        return writer.finished()
    }

    public static func parse(_ event: JSONValue) throws(DeadLetter) -> MeasureEvent {
        let fields = EventFields(event)
        let type = try fields.string("type", maxLength: 64)
        guard type == "measure" else { throw DeadLetter(.unknownType, "type '\(TerminalText.escaped(type))'") }
        func size(_ key: String, max: Double, unit: String) throws(DeadLetter) -> Double? {
            guard let value = try fields.optionalDouble(key) else { return nil }
            guard value > 0, value <= max else {
                throw DeadLetter(.badValue, "\(key) \(value) is not above 0 and at most \(Int(max)) \(unit)")
            }
            return value
        }
        let parsed = MeasureEvent(
            eventId: try fields.string("eventId", maxLength: 256), site: try fields.token("site"),
            lane: try fields.token("lane"), device: try fields.token("device"), time: try fields.time("time"),
            length: try size("length", max: maxMillimetres, unit: "mm"),
            width: try size("width", max: maxMillimetres, unit: "mm"),
            height: try size("height", max: maxMillimetres, unit: "mm"),
            weight: try size("weight", max: maxKilograms, unit: "kg"))
        guard [parsed.length, parsed.width, parsed.height, parsed.weight].contains(where: { $0 != nil }) else {
            throw DeadLetter(.missingField, "length, width, height or weight: a measurement holds at least one")
        }
        return parsed
    }

    /// Reads a stored measurement (what `json` wrote); nil for anything else.
    public init?(stored value: JSONValue) {
        guard let parsed = try? Self.parse(value) else { return nil }
        self = parsed
    }
}
