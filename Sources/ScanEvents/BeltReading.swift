import ScanCore

/// `belt` on `<prefix>.v1.belt.<site>.<lane>` (core NATS; docs/schema/belt.schema.json): the
/// lane's belt speed from its PLC or encoder bridge, in m/s, or as the encoder's running count.
/// An agent with `decision.beltFromBus` places each parcel's divert point by the latest one.
public struct BeltReading: Sendable, Equatable {
    public var site: String
    public var lane: String
    /// When the PLC took it (its own clock: only differences between its readings are used).
    public var time: Timestamp
    /// Metres a second.
    public var speed: Double?
    /// The encoder's running count.
    public var pulses: Int64?

    public init(site: String, lane: String, time: Timestamp, speed: Double? = nil, pulses: Int64? = nil) {
        self.site = site
        self.lane = lane
        self.time = time
        self.speed = speed
        self.pulses = pulses
    }

    public var json: [UInt8] {
        var writer = JSONWriter()
        writer.field("type", "belt")
        writer.field("site", site)
        writer.field("lane", lane)
        writer.field("time", time.description)
        if let speed { writer.field("speed", speed, decimals: 4) }
        if let pulses { writer.raw("pulses", Array(String(pulses).utf8)) }
        return writer.finished()
    }

    /// Refuses what is not a reading of the contract, naming the field: a speed must be a number
    /// from 0 to 20 m/s, pulses a whole number, and one of the two is required.
    public static func parse(_ bytes: [UInt8]) throws(DeadLetter) -> BeltReading {
        let fields = EventFields(try EventValidator.parse(bytes, maxBytes: 4096))
        guard try fields.string("type", maxLength: 16) == "belt" else {
            throw DeadLetter(.unknownType, "type is not belt")
        }
        var reading = BeltReading(
            site: try fields.token("site"), lane: try fields.token("lane"), time: try fields.time("time"))
        reading.speed = try fields.optionalDouble("speed")
        if let speed = reading.speed, !BeltSpeed.plausible.contains(speed) {
            throw DeadLetter(.badValue, "speed \(speed) is not 0 to 20 m/s")
        }
        if let field = fields.event["pulses"], field != .null {
            guard let count = field.intValue else {
                throw DeadLetter(.wrongType, "pulses is \(field.typeName), not a whole number")
            }
            reading.pulses = Int64(count)
        }
        guard reading.speed != nil || reading.pulses != nil else {
            throw DeadLetter(.missingField, "speed or pulses")
        }
        return reading
    }
}

/// The belt's speed now, from its readings: a speed as given; an encoder count as the pulses
/// between two readings over the time between them (`pulsesPerMetre`). A speed older than
/// `staleMilliseconds` (by when it arrived, on the agent's clock) is not used: the caller falls
/// back to the configured speed.
public struct BeltSpeed: Sendable {
    public let pulsesPerMetre: Double?
    public let staleMilliseconds: Int64
    private var latest: (speed: Double, arrived: Timestamp)?
    private var lastCount: (pulses: Int64, time: Timestamp)?

    public init(pulsesPerMetre: Double?, staleMilliseconds: Int64) {
        self.pulsesPerMetre = pulsesPerMetre
        self.staleMilliseconds = staleMilliseconds
    }

    /// Takes one reading that arrived at `arrived`; false when it gives no speed (pulses without
    /// `pulsesPerMetre`, the first count, a count that went back or a time that did not move on).
    @discardableResult
    public mutating func add(_ reading: BeltReading, arrived: Timestamp) -> Bool {
        if let speed = reading.speed {
            latest = (speed, arrived)
            return true
        }
        guard let pulses = reading.pulses, let perMetre = pulsesPerMetre, perMetre > 0 else { return false }
        defer { lastCount = (pulses, reading.time) }
        guard let last = lastCount, pulses >= last.pulses, reading.time > last.time else { return false }
        // Counts and times from a PLC: their differences may not fit an Int64 (a count that wrapped,
        // readings years apart), and the speed they give may be no belt's. Either is no reading.
        let (counted, countOverflow) = pulses.subtractingReportingOverflow(last.pulses)
        let (elapsed, timeOverflow) = reading.time.milliseconds.subtractingReportingOverflow(last.time.milliseconds)
        guard !countOverflow, !timeOverflow else { return false }
        let speed = Double(counted) / perMetre / (Double(elapsed) / 1000)
        guard Self.plausible.contains(speed) else { return false }
        latest = (speed, arrived)
        return true
    }

    /// The speeds a belt reading may give, as the contract's `speed` field: 0 to 20 m/s.
    public static let plausible: ClosedRange<Double> = 0...20

    /// The latest speed, unless it is stale at `now`.
    public func speed(at now: Timestamp) -> Double? {
        guard let latest, now.milliseconds - latest.arrived.milliseconds <= staleMilliseconds else { return nil }
        return latest.speed
    }
}
