import ScanCore
import ScanEvents

// A reconciliation round as data: what it reads (`RoundSnapshot`, taken by the store in the
// round's transaction) and what it writes (`RoundChanges`, applied by the store in the same
// transaction). `RoundPlan.plan` turns one into the other without touching a store or a clock.

/// What one round reads, in one transaction. Times are the store's clock: `now` is the
/// database's `now()`, as are the `received` and `updatedAt` times beside it.
public struct RoundSnapshot: Sendable {
    public var now: Timestamp
    public var topology: Topology
    /// The oldest unreconciled sightings, by first sight.
    public var sightings: [UnreconciledSighting] = []
    /// Every open item pass, and the closed ones of the sightings' values changed within the
    /// settings' `lateMinutes`, with their members; with when each was last changed.
    public var candidatePasses: [ItemPass] = []
    public var passesUpdatedAt: [String: Timestamp] = [:]
    /// Each lane's watermark: the latest sighting time seen on it.
    public var watermarks: [LaneKey: Timestamp] = [:]
    /// The oldest no-reads not settled yet, by first sight.
    public var noReads: [UnsettledNoRead] = []
    /// The item passes of the due no-reads' lanes first seen within
    /// `RoundSnapshot.noReadWindows`, with their members.
    public var noReadPasses: [ItemPass] = []
    /// Completed sessions not taken yet, oldest first.
    public var sessions: [CompletedSession] = []
    /// The session ids among `sessions` that have a pack record already.
    public var packedSessions: Set<String> = []
    /// Camera parcels not merged yet, oldest stored first.
    public var parcels: [UnmergedParcel] = []
    /// Where the sighting of each track the parcels name stands (absent: not stored yet).
    public var sightingStates: [String: SightingState] = [:]
    /// Measurements not settled yet, oldest stored first.
    public var measurements: [UnsettledMeasurement] = []
    /// No-reads people resolved that name a parcel pass the round has not given them to yet,
    /// oldest first.
    public var codings: [CodedEvent] = []
    /// Every open parcel pass, the closed ones first seen within `RoundSnapshot.parcelPassWindow`,
    /// and those `codings` name; with when each was last changed.
    public var parcelPasses: [ParcelPass] = []
    public var parcelPassesUpdatedAt: [String: Timestamp] = [:]
    /// The orders (of any site, `""` for every site) whose ids are in `RoundSnapshot.orderIds`.
    public var orders: [OrderKey: StoredOrder] = [:]

    public init(now: Timestamp, topology: Topology) {
        self.now = now
        self.topology = topology
    }

    /// The lines of a site's expected order, else of one for every site; nil when there is no
    /// such order or the one found is cancelled.
    public func orderLines(site: String, _ orderId: String) -> [OrderLine]? {
        guard
            let order = orders[OrderKey(site: site, orderId: orderId)] ?? orders[OrderKey(site: "", orderId: orderId)],
            !order.cancelled
        else { return nil }
        return order.lines
    }
}

/// An order as a round reads it.
public struct OrderKey: Hashable, Sendable {
    /// `""`: an order for every site.
    public var site: String
    public var orderId: String
    public init(site: String, orderId: String) {
        self.site = site
        self.orderId = orderId
    }
}

public struct StoredOrder: Sendable, Equatable {
    public var cancelled: Bool
    public var lines: [OrderLine]
    public init(cancelled: Bool = false, lines: [OrderLine]) {
        self.cancelled = cancelled
        self.lines = lines
    }
}

/// A lane's passes first seen between two times.
public struct LaneWindow: Sendable, Equatable {
    public var lane: LaneKey
    public var from: Timestamp
    public var to: Timestamp
    public init(lane: LaneKey, from: Timestamp, to: Timestamp) {
        self.lane = lane
        self.from = from
        self.to = to
    }

    public func contains(_ pass: ItemPass) -> Bool {
        pass.site == lane.site && pass.lane == lane.lane && pass.firstSeen >= from && pass.firstSeen <= to
    }
}

// What a store reads besides the queues, worked out from the queues and the topology so that
// every store reads the same.
extension RoundSnapshot {
    /// How far from a time on `lane` a pass, parcel or measurement of it can still belong with it.
    static func margin(_ lane: Topology.Lane) -> Int64 {
        lane.span + lane.windowMilliseconds + lane.graceMilliseconds
    }

    /// Each lane's latest first sight among these sightings (the accepted ones of cameras on a
    /// lane): what a round raises the lanes' watermarks to.
    public static func raisedWatermarks(_ sightings: [UnreconciledSighting], topology: Topology) -> [LaneKey: Timestamp]
    {
        var raised: [LaneKey: Timestamp] = [:]
        for sighting in sightings where sighting.accepted {
            guard let lane = topology.lane(site: sighting.site, camera: sighting.camera) else { continue }
            let key = LaneKey(site: sighting.site, lane: lane.id)
            raised[key] = max(raised[key] ?? sighting.firstSeen, sighting.firstSeen)
        }
        return raised
    }

    /// The lanes' watermarks once this snapshot's sightings are placed.
    public var roundWatermarks: [LaneKey: Timestamp] {
        watermarks.merging(Self.raisedWatermarks(sightings, topology: topology)) { max($0, $1) }
    }

    /// Whether a lane camera's no-read is due to be settled: the lane has moved past it (its
    /// watermark, or the store's clock since the no-read was stored, is beyond it by the lane's
    /// span, window and grace).
    public static func isDue(
        _ noRead: UnsettledNoRead, lane: Topology.Lane, watermarks: [LaneKey: Timestamp], now: Timestamp
    ) -> Bool {
        let watermark = watermarks[LaneKey(site: noRead.site, lane: lane.id)]?.milliseconds ?? 0
        return watermark > noRead.firstSeen.milliseconds + margin(lane)
            || now.milliseconds > noRead.received.milliseconds + margin(lane)
    }

    /// The window of item passes each due no-read may be attached to (its time at the lane's
    /// first camera, give or take the lane's margin), one per lane. A no-read not due yet needs
    /// none: it waits for a later round.
    public static func noReadWindows(
        _ noReads: [UnsettledNoRead], topology: Topology, watermarks: [LaneKey: Timestamp], now: Timestamp
    ) -> [LaneWindow] {
        var windows: [LaneKey: LaneWindow] = [:]
        for noRead in noReads {
            guard let lane = topology.lane(site: noRead.site, camera: noRead.camera),
                isDue(noRead, lane: lane, watermarks: watermarks, now: now)
            else { continue }
            let anchor = noRead.firstSeen.milliseconds - (lane.offset(of: noRead.camera) ?? 0)
            let key = LaneKey(site: noRead.site, lane: lane.id)
            let from = Timestamp(milliseconds: anchor - margin(lane))
            let to = Timestamp(milliseconds: anchor + margin(lane))
            let known = windows[key]
            windows[key] = LaneWindow(
                lane: key, from: min(known?.from ?? from, from), to: max(known?.to ?? to, to))
        }
        return windows.values.sorted { ($0.lane.site, $0.lane.lane) < ($1.lane.site, $1.lane.lane) }
    }

    /// The first-seen times of the closed parcel passes the waiting parcels and measurements may
    /// join: their times, widened by the largest margin of their lanes (`now` when none waits).
    public static func parcelPassWindow(
        parcels: [UnmergedParcel], measurements: [UnsettledMeasurement], topology: Topology, now: Timestamp
    ) -> (from: Timestamp, to: Timestamp) {
        var times: [Int64] = []
        var reach: Int64 = 0
        for row in parcels {
            guard let lane = topology.lane(site: row.site, camera: row.parcel.camera) else { continue }
            times += [row.parcel.firstSeen.milliseconds, row.parcel.lastSeen.milliseconds]
            reach = max(reach, margin(lane))
        }
        for row in measurements {
            guard let lane = topology.lane(site: row.measurement.site, id: row.measurement.lane) else { continue }
            times.append(row.measurement.time.milliseconds - lane.measureOffsetMilliseconds)
            reach = max(reach, margin(lane))
        }
        return (
            Timestamp(milliseconds: (times.min() ?? now.milliseconds) - reach),
            Timestamp(milliseconds: (times.max() ?? now.milliseconds) + reach)
        )
    }

    /// The order ids a round may look up: each session's order, and, where a lane of the
    /// topology checks orders, every code of the waiting parcels and of the parcel passes (such a
    /// lane looks for the parcel's order among its codes as a pass closes).
    public static func orderIds(
        sessions: [CompletedSession], parcels: [UnmergedParcel], parcelPasses: [ParcelPass], topology: Topology
    ) -> Set<String> {
        var ids = Set(sessions.compactMap { $0.event.flatMap(RoundPlan.orderId) })
        let checked = topology.sites.contains { site in site.lanes.contains { $0.decision?.checkOrders == true } }
        guard checked else { return ids }
        for row in parcels { ids.formUnion(row.parcel.codes.map(\.value)) }
        for pass in parcelPasses { ids.formUnion(pass.members.flatMap(\.codes).map(\.value)) }
        return ids
    }
}

/// What one round writes, in the same transaction as its snapshot. Applied in the order the
/// fields are declared.
public struct RoundChanges: Sendable {
    public var counts = ReconcileCounts()
    /// Each lane's watermark raised to at least this time.
    public var watermarks: [LaneKey: Timestamp] = [:]
    /// Item passes inserted or updated (a closed pass keeps its first closing time).
    public var passes: [PassRow] = []
    public var members: [NewMember] = []
    /// The snapshot's sightings, all placed now (or left out of any pass).
    public var reconciled: [UnreconciledSighting] = []
    /// Each no-read settled, with the item pass it was attached to (nil: none).
    public var noReads: [(noRead: UnsettledNoRead, itemId: String?)] = []
    /// Sessions taken (marked packed), with or without a pack record.
    public var sessionsTaken: [CompletedSession] = []
    public var packs: [NewPack] = []
    /// Measurements settled: attached to a parcel pass, or (nil) given up on.
    public var measurements: [(measurement: MeasureEvent, passId: String?)] = []
    public var parcelPasses: [ParcelPassRow] = []
    /// Camera parcels merged into a pass, or set aside (a camera on no lane).
    public var parcelsMerged: [String] = []
    /// Divert decisions made as parcel passes closed, to be published.
    public var decisions: [DecisionEvent] = []
    /// The snapshot's codings, given to their parcel passes now (or to none: the pass is gone).
    public var codingsApplied: [CodedEvent] = []

    public init() {}

    /// Whether the round writes nothing.
    public var isEmpty: Bool {
        watermarks.isEmpty && passes.isEmpty && members.isEmpty && reconciled.isEmpty && noReads.isEmpty
            && sessionsTaken.isEmpty && packs.isEmpty && measurements.isEmpty && parcelPasses.isEmpty
            && parcelsMerged.isEmpty && decisions.isEmpty && codingsApplied.isEmpty
    }
}

/// A sighting joining an item pass (`late`: after the pass closed).
public struct NewMember: Sendable, Equatable {
    public var itemId: String
    public var member: PassMember
    public var late: Bool
    public init(itemId: String, member: PassMember, late: Bool) {
        self.itemId = itemId
        self.member = member
        self.late = late
    }
}

/// A pack record to store.
public struct NewPack: Sendable, Equatable {
    public var sessionId: String
    public var site: String
    public var station: String
    public var camera: String
    public var startedAt: Timestamp
    public var completedAt: Timestamp
    public var result: PackResult

    public init(
        sessionId: String, site: String, station: String, camera: String, startedAt: Timestamp,
        completedAt: Timestamp, result: PackResult
    ) {
        self.sessionId = sessionId
        self.site = site
        self.station = station
        self.camera = camera
        self.startedAt = startedAt
        self.completedAt = completedAt
        self.result = result
    }
}

/// What reconciliation did: one round's, or a loop's totals.
public struct ReconcileCounts: Sendable, Equatable {
    public var sightings = 0
    public var passesOpened = 0
    public var passesClosed = 0
    public var lateSightings = 0
    public var packs = 0
    public var itemsPublished = 0
    public var packsPublished = 0
    /// No-reads settled: attached to the item pass another camera read, or to none.
    public var noReadsSettled = 0
    public var noReadsAttached = 0
    /// Camera parcels merged into parcel passes, parcel passes closed and published.
    public var parcelsMerged = 0
    public var parcelPassesClosed = 0
    public var parcelPassesPublished = 0
    /// Divert decisions made for parcel passes as they closed (lanes with a `decision`), and
    /// published.
    public var decisions = 0
    public var decisionsPublished = 0
    /// Measurements attached to a parcel pass, and given up on (no pass of their lane near them).
    public var measurementsAttached = 0
    public var measurementsUnmatched = 0
    /// No-reads a person resolved: given to their parcel passes (a new revision of a closed
    /// one), and published as `coded` results.
    public var codingsApplied = 0
    public var codingsPublished = 0
    /// False when another replica held the reconciliation lock this round.
    public var leader = false

    public init() {}

    public mutating func add(_ round: ReconcileCounts) {
        sightings += round.sightings
        passesOpened += round.passesOpened
        passesClosed += round.passesClosed
        lateSightings += round.lateSightings
        packs += round.packs
        itemsPublished += round.itemsPublished
        packsPublished += round.packsPublished
        noReadsSettled += round.noReadsSettled
        noReadsAttached += round.noReadsAttached
        parcelsMerged += round.parcelsMerged
        parcelPassesClosed += round.parcelPassesClosed
        parcelPassesPublished += round.parcelPassesPublished
        decisions += round.decisions
        decisionsPublished += round.decisionsPublished
        measurementsAttached += round.measurementsAttached
        measurementsUnmatched += round.measurementsUnmatched
        codingsApplied += round.codingsApplied
        codingsPublished += round.codingsPublished
    }
}
