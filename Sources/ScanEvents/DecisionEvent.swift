import ScanCore

/// `decision`: what the diverter or stack light does with one parcel, on
/// `<prefix>.v1.decision.<site>.<lane>` (durable; docs/schema/decision.schema.json): `pass`, or
/// `divert` with every reason found. Sent once per parcel, by the agent for a lane one camera
/// reads, within the deadline after the frame that closed the parcel; one sent after its
/// deadline says `late` (it is still sent: a gateway decides what a late decision is worth).
public struct DecisionEvent: Sendable, Equatable {
    public enum Action: String, Sendable, CaseIterable {
        case pass
        case divert
    }

    /// A code read on the parcel, as a gateway routes by it.
    public struct Code: Sendable, Equatable {
        public var symbology: String
        public var value: String
        public var valueEncoding: String?

        public init(symbology: String, value: String, valueEncoding: String?) {
            self.symbology = symbology
            self.value = value
            self.valueEncoding = valueEncoding
        }
    }

    public var envelope: EventEnvelope
    public var lane: String
    public var parcelId: String
    public var action: Action
    /// Every reason found, in the schema's order; `divert` when one of them is a diverting one.
    public var reasons: [DecisionReason]
    public var codes: [Code]
    /// The parcel's last sighting, and the frame that closed it (it had left the read zone).
    public var lastSeen: Timestamp
    public var closedAt: Timestamp
    /// `closedAt` plus the configured deadline.
    public var deadline: Timestamp
    /// When the parcel reaches the diverter, from the belt speed and the diverter's distance.
    public var divertAt: Timestamp?
    /// The belt speed `divertAt` was placed by (m/s): the belt subject's latest, else the config's.
    public var beltSpeed: Double?
    /// Sent after its deadline.
    public var late: Bool
    /// `agent` or `aggregator`.
    public var decidedBy: String
    /// The trace the aggregator's decision continues: its parcel pass's (`ParcelPassEvent.traceId`).
    /// Sent in the `traceparent` header, not in the body; nil for an agent's decision (whose
    /// header the agent sets) and when the pass has none.
    public var traceId: String?

    public var eventId: String { envelope.eventId }
    public var site: String { envelope.site }
    public var camera: String { envelope.camera }

    /// When the parcel reaches the divert, `distance` metres past its last read at `speed` m/s; nil
    /// without both, for a belt that stands (0 m/s) or so slow or fast (a PLC's or encoder's
    /// reading far out) that the time is not within a day: no divert point rather than a trap.
    public static func divertPoint(lastSeen: Timestamp, distance: Double?, speed: Double?) -> Timestamp? {
        guard let distance, let speed, speed > 0,
            let travel = Timestamp.milliseconds(seconds: distance / speed), travel >= 0
        else { return nil }
        return lastSeen.adding(milliseconds: travel)
    }

    public init(
        envelope: EventEnvelope, lane: String, parcelId: String, action: Action, reasons: [DecisionReason],
        codes: [Code], lastSeen: Timestamp, closedAt: Timestamp, deadline: Timestamp, divertAt: Timestamp?,
        beltSpeed: Double?, late: Bool, decidedBy: String
    ) {
        self.beltSpeed = beltSpeed
        self.envelope = envelope
        self.lane = lane
        self.parcelId = parcelId
        self.action = action
        self.reasons = reasons
        self.codes = codes
        self.lastSeen = lastSeen
        self.closedAt = closedAt
        self.deadline = deadline
        self.divertAt = divertAt
        self.late = late
        self.decidedBy = decidedBy
    }

    public var json: [UInt8] {
        var writer = envelope.writer()
        writer.field("lane", lane)
        writer.field("parcelId", parcelId)
        writer.field("action", action.rawValue)
        writer.strings("reasons", reasons.map(\.rawValue))
        writer.raw(
            "codes",
            JSONWriter.array(
                codes.map { code in
                    var entry = JSONWriter()
                    entry.field("symbology", code.symbology)
                    entry.field("value", code.value)
                    entry.field("valueEncoding", code.valueEncoding)
                    return entry.finished()
                }))
        writer.field("lastSeen", lastSeen.description)
        writer.field("closedAt", closedAt.description)
        writer.field("deadline", deadline.description)
        writer.field("divertAt", divertAt?.description)
        if let beltSpeed { writer.field("beltSpeed", beltSpeed, decimals: 3) }
        writer.field("late", late)
        writer.field("decidedBy", decidedBy)
        return writer.finished()
    }

    public var agentEvent: AgentEvent { AgentEvent(kind: .decision, eventId: eventId, time: envelope.time, json: json) }

    /// This decision as sent at `now`: `late` once `now` is past its deadline.
    public func sent(at now: Timestamp) -> DecisionEvent {
        var sent = self
        sent.late = late || now > deadline
        return sent
    }

    /// A spooled decision's bytes as sent at `now` (`late` set when it is past its deadline); the
    /// bytes unchanged when they are no decision or already say so.
    public static func sending(_ bytes: [UInt8], at now: Timestamp) -> [UInt8] { outgoing(bytes, at: now).bytes }

    /// The same, with the decision as sent (nil when the bytes are no decision), for counting.
    public static func outgoing(_ bytes: [UInt8], at now: Timestamp) -> (bytes: [UInt8], decision: DecisionEvent?) {
        guard let value = try? EventValidator.parse(bytes, maxBytes: EventValidator.maxBytes),
            let decision = try? DecisionEvent.parse(value)
        else { return (bytes, nil) }
        guard !decision.late, now > decision.deadline else { return (bytes, decision) }
        let sent = decision.sent(at: now)
        return (sent.json, sent)
    }

    public static func parse(_ event: JSONValue) throws(DeadLetter) -> DecisionEvent {
        let fields = EventFields(event)
        let envelope = try fields.envelope(type: ["decision"])
        let actionName = try fields.string("action", maxLength: 16)
        guard let action = Action(rawValue: actionName) else {
            throw DeadLetter(.badValue, "action '\(TerminalText.escaped(actionName))' is not pass or divert")
        }
        var reasons: [DecisionReason] = []
        for name in try fields.strings("reasons") {
            guard let reason = DecisionReason(rawValue: name) else {
                throw DeadLetter(.badValue, "reasons: '\(TerminalText.escaped(name))' is not a decision reason")
            }
            reasons.append(reason)
        }
        var codes: [Code] = []
        for code in try fields.objects("codes") {
            codes.append(
                Code(
                    symbology: try code.symbology("symbology"), value: try code.string("value", maxLength: 8192),
                    valueEncoding: try code.optionalString("valueEncoding", maxLength: 16)))
        }
        let decidedBy = try fields.string("decidedBy", maxLength: 16)
        guard decidedBy == "agent" || decidedBy == "aggregator" else {
            throw DeadLetter(.badValue, "decidedBy '\(TerminalText.escaped(decidedBy))' is not agent or aggregator")
        }
        let parsed = DecisionEvent(
            envelope: envelope, lane: try fields.token("lane"), parcelId: try fields.string("parcelId", maxLength: 256),
            action: action, reasons: reasons, codes: codes, lastSeen: try fields.time("lastSeen"),
            closedAt: try fields.time("closedAt"), deadline: try fields.time("deadline"),
            divertAt: try fields.optionalTime("divertAt"), beltSpeed: try fields.optionalDouble("beltSpeed"),
            late: try fields.bool("late", default: false), decidedBy: decidedBy)
        guard parsed.eventId == parsed.parcelId + ".decision" else {
            throw DeadLetter(.badValue, "eventId is not parcelId.decision")
        }
        return parsed
    }
}
