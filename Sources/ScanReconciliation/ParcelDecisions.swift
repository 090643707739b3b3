import ScanCore
import ScanEvents

extension ParcelPass {
    /// The aggregator's decision for this pass, made at `now` as it closes: every reason found
    /// (no code read; a required symbology no camera read; a code the rules reject; with
    /// `checkOrders`, no code naming a known order, or the order's lines short or over), `divert`
    /// when one of them is in the lane's `divertOn`. It left the read zone when the last of its
    /// cameras' parcels closed; the deadline counts from there, and a decision made after it says
    /// `late`. `order`: an order's lines (nil: no such order).
    public func decision(
        lane: Topology.Lane, rules: Topology.LaneDecision, at now: Timestamp, order: (String) throws -> [OrderLine]?
    ) rethrows -> DecisionEvent {
        let codes = self.codes
        var found: Set<DecisionReason> = []
        if codes.isEmpty { found.insert(.noRead) }
        if !missing.isEmpty { found.insert(.missingRequired) }
        if members.contains(where: \.rejected) { found.insert(.rejectedCode) }
        if rules.checkOrders && !codes.isEmpty {
            found.formUnion(try Self.orderReasons(codes, order: order))
        }
        let reasons = DecisionReason.allCases.filter(found.contains)
        let last = members.max { $0.closedAt < $1.closedAt }
        let closedAt = last?.closedAt ?? lastSeen
        let deadline = closedAt.adding(milliseconds: rules.deadlineMilliseconds)
        let divertAt = DecisionEvent.divertPoint(
            lastSeen: lastSeen, distance: rules.divertDistance, speed: rules.beltSpeed)
        return DecisionEvent(
            envelope: EventEnvelope(
                type: "decision", eventId: passId + ".decision", site: site, camera: last?.camera ?? "", time: now),
            lane: lane.id, parcelId: passId, action: reasons.contains(where: rules.divertOn.contains) ? .divert : .pass,
            reasons: reasons,
            codes: codes.map {
                DecisionEvent.Code(symbology: $0.symbology, value: $0.value, valueEncoding: $0.valueEncoding)
            },
            lastSeen: lastSeen, closedAt: closedAt, deadline: deadline, divertAt: divertAt, beltSpeed: rules.beltSpeed,
            late: now > deadline, decidedBy: "aggregator")
    }

    /// The parcel's order is the first of its codes that names a known order; its other codes
    /// are counted against that order's lines (`PackEvaluation`): a line short is `short-pack`,
    /// a line over or a code the order does not hold is `over-pack`; no such code, `unknown-order`.
    static func orderReasons(_ codes: [ParcelCode], order: (String) throws -> [OrderLine]?) rethrows
        -> Set<DecisionReason>
    {
        var orderId: String?
        var lines: [OrderLine]?
        for code in codes where code.valueEncoding == nil {
            if let found = try order(code.value) {
                orderId = code.value
                lines = found
                break
            }
        }
        guard let orderId, let lines else { return [.unknownOrder] }
        let counted = codes.filter { $0.value != orderId }.map {
            CountedCode(value: $0.value, symbology: $0.symbology, count: 1)
        }
        let result = PackEvaluation.evaluate(sessionOrderId: orderId, codes: counted) { _ in lines }
        var reasons: Set<DecisionReason> = []
        for line in result.lines {
            switch line.verdict {
            case .short: reasons.insert(.shortPack)
            case .over, .unexpected: reasons.insert(.overPack)
            default: break
            }
        }
        return reasons
    }
}
