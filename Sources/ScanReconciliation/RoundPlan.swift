import ScanCore
import ScanEvents

/// How a round works: the batch sizes and how long closed passes take late sightings.
public struct RoundSettings: Sendable, Equatable {
    /// Sightings, no-reads, parcels and measurements taken per round.
    public var batchSize = 2_000
    /// Completed sessions taken per round.
    public var sessionBatch = 200
    /// Closed passes stay candidates for late sightings this long (the store's clock).
    public var lateMinutes = 10

    public init(batchSize: Int = 2_000, sessionBatch: Int = 200, lateMinutes: Int = 10) {
        self.batchSize = batchSize
        self.sessionBatch = sessionBatch
        self.lateMinutes = lateMinutes
    }
}

/// One reconciliation round, pure: the snapshot a store took in the round's transaction in,
/// the changes it is to write in the same transaction out. No store, no clock (the snapshot's
/// `now` is the store's), no publishing (the store's outbox is the changed rows not yet
/// published). The steps run in order and each sees what the ones before it changed: waiting
/// sightings placed in item passes and due passes closed; no-reads attached to the passes other
/// cameras read; camera parcels merged into parcel passes, measurements attached, due parcel
/// passes closed with their decisions; completed sessions made into pack records.
public struct RoundPlan {
    private let snapshot: RoundSnapshot
    private let topology: Topology
    private let now: Int64
    private let newId: () -> String
    private var changes = RoundChanges()
    /// The item passes as this round leaves them, by item id (the candidates and the new ones).
    private var itemPasses: [String: ItemPass] = [:]
    /// The lanes' watermarks as this round leaves them.
    private var watermarks: [LaneKey: Timestamp] = [:]
    /// This round's sightings by track id: the item pass each went to (nil: none), and whether
    /// it was accepted.
    private var placedTracks: [String: (itemId: String?, accepted: Bool)] = [:]

    /// `newId`: a new pass's id (random UUIDs in the aggregator, predictable in tests).
    public static func plan(_ snapshot: RoundSnapshot, newId: () -> String) -> RoundChanges {
        withoutActuallyEscaping(newId) { newId in
            var plan = RoundPlan(snapshot: snapshot, newId: newId)
            plan.changes.counts.leader = true
            plan.reconcile()
            plan.settleNoReads()
            plan.mergeParcels()
            plan.pack()
            return plan.changes
        }
    }

    private init(snapshot: RoundSnapshot, newId: @escaping () -> String) {
        self.snapshot = snapshot
        topology = snapshot.topology
        now = snapshot.now.milliseconds
        self.newId = newId
    }

    /// A session's order: the one it names, else its first code with the role `order`.
    static func orderId(_ event: SessionEvent) -> String? {
        event.orderId ?? event.codes.first { $0.role == "order" }?.value
    }

    /// The lane of an open pass that is due to close, else nil: due at its lane's watermark by
    /// `isDue`, or its lane gone quiet (nothing joined it this round, and the store last changed it
    /// longer ago than the lane's span, window and grace).
    private func dueLane(
        site: String, lane id: String, touched: Bool, updatedAt: Timestamp?,
        isDue: (Topology.Lane, Timestamp) -> Bool
    ) -> Topology.Lane? {
        guard let lane = topology.lane(site: site, id: id) else { return nil }
        let watermark = watermarks[LaneKey(site: site, lane: id)] ?? Timestamp(milliseconds: 0)
        let quiet = !touched && now - (updatedAt?.milliseconds ?? now) > RoundSnapshot.margin(lane)
        return isDue(lane, watermark) || quiet ? lane : nil
    }

    // MARK: item passes

    /// Places the waiting sightings and closes what is due: by event time, or (a lane gone
    /// quiet) when nothing joined for as long as the lane's whole window.
    private mutating func reconcile() {
        var passes = snapshot.candidatePasses
        var touched: Set<Int> = []
        var newMembers: [(index: Int, member: PassMember, late: Bool)] = []
        for sighting in snapshot.sightings {
            placedTracks[sighting.trackId] = (nil, sighting.accepted)
            guard sighting.accepted, let lane = topology.lane(site: sighting.site, camera: sighting.camera) else {
                continue
            }
            let member = PassMember(
                eventId: sighting.eventId, camera: sighting.camera, trackId: sighting.trackId,
                firstSeen: sighting.firstSeen, lastSeen: sighting.lastSeen)
            let placed = LaneSighting(
                site: sighting.site, symbology: sighting.symbology, value: sighting.value,
                valueEncoding: sighting.valueEncoding, member: member)
            let index: Int
            switch Reconciliation.place(placed, lane: lane, passes: &passes, newId: newId) {
            case .opened(let at):
                changes.counts.passesOpened += 1
                touched.insert(at)
                newMembers.append((at, member, false))
                index = at
            case .joined(let at):
                touched.insert(at)
                newMembers.append((at, member, false))
                index = at
            case .late(let at):
                changes.counts.lateSightings += 1
                touched.insert(at)
                newMembers.append((at, member, true))
                index = at
            case .known(let at):
                index = at
            }
            placedTracks[sighting.trackId] = (passes[index].itemId, true)
        }
        changes.counts.sightings = snapshot.sightings.count
        // Watermarks: the latest sighting time per lane, kept across rounds.
        changes.watermarks = RoundSnapshot.raisedWatermarks(snapshot.sightings, topology: topology)
        watermarks = snapshot.roundWatermarks

        for index in passes.indices where !passes[index].closed {
            let pass = passes[index]
            if dueLane(
                site: pass.site, lane: pass.lane, touched: touched.contains(index),
                updatedAt: snapshot.passesUpdatedAt[pass.itemId],
                isDue: { Reconciliation.isDue(pass, lane: $0, watermark: $1) }) != nil
            {
                passes[index].closed = true
                passes[index].revision = 1
                touched.insert(index)
                changes.counts.passesClosed += 1
            }
        }
        changes.passes = touched.sorted().map { index in
            let pass = passes[index]
            let lane = topology.lane(site: pass.site, id: pass.lane)
            return PassRow(
                pass: pass, camerasExpected: lane?.cameras.count ?? 0, missing: lane.map { pass.missing(on: $0) } ?? [])
        }
        changes.members = newMembers.map {
            NewMember(itemId: passes[$0.index].itemId, member: $0.member, late: $0.late)
        }
        changes.reconciled = snapshot.sightings
        for pass in passes { itemPasses[pass.itemId] = pass }
    }

    // MARK: no-reads

    /// Attaches each lane camera's no-read to the item pass another camera of the lane read
    /// (`Reconciliation.pass(forNoReadAt:)`), once the lane has moved past it
    /// (`RoundSnapshot.isDue`: its watermark as this round leaves it, or, a lane gone quiet, the
    /// store's clock since the no-read was stored, is beyond the no-read by the lane's span,
    /// window and grace). A no-read off any lane, or with no such pass, is settled without one.
    private mutating func settleNoReads() {
        // The passes of the no-reads' windows as this round leaves them.
        var known = Dictionary(snapshot.noReadPasses.map { ($0.itemId, $0) }) { first, _ in first }
        known.merge(itemPasses) { _, changed in changed }
        let all = known.values.sorted { ($0.firstSeen, $0.itemId) < ($1.firstSeen, $1.itemId) }
        for noRead in snapshot.noReads {
            guard let lane = topology.lane(site: noRead.site, camera: noRead.camera) else {
                changes.noReads.append((noRead, nil))
                changes.counts.noReadsSettled += 1
                continue
            }
            guard RoundSnapshot.isDue(noRead, lane: lane, watermarks: watermarks, now: snapshot.now) else { continue }
            let margin = RoundSnapshot.margin(lane)
            let key = LaneKey(site: noRead.site, lane: lane.id)
            let anchor = noRead.firstSeen.milliseconds - (lane.offset(of: noRead.camera) ?? 0)
            let window = LaneWindow(
                lane: key, from: Timestamp(milliseconds: anchor - margin), to: Timestamp(milliseconds: anchor + margin))
            let passes = all.filter(window.contains)
            let index = Reconciliation.pass(
                forNoReadAt: noRead.firstSeen, camera: noRead.camera, lane: lane, passes: passes)
            changes.noReads.append((noRead, index.map { passes[$0].itemId }))
            changes.counts.noReadsSettled += 1
            if index != nil { changes.counts.noReadsAttached += 1 }
        }
    }

    // MARK: parcel passes

    /// Where a track's sighting stands after this round's placing.
    private func state(of trackId: String) -> SightingState? {
        var state = snapshot.sightingStates[trackId]
        if let placed = placedTracks[trackId] {
            state = SightingState(reconciled: true, accepted: placed.accepted, itemId: placed.itemId ?? state?.itemId)
        }
        // Another camera's sighting may have joined its item pass this round.
        if var known = state, let itemId = known.itemId, let pass = itemPasses[itemId],
            let own = pass.members.first(where: { $0.trackId == trackId })
        {
            known.readElsewhere = pass.members.contains { $0.camera != own.camera }
            state = known
        }
        return state
    }

    /// Merges the lane cameras' parcels into parcel passes (`ParcelMerging.place`) once each code's
    /// sighting has found its item pass (or, stored long ago, with what is known), and closes a
    /// pass when every lane camera has sent its parcel or the lane has moved past it: its
    /// watermark, or (a lane gone quiet) the store's clock since the pass last changed, beyond the
    /// lane's span, window and grace. A parcel of a camera on no lane is set aside unmerged.
    private mutating func mergeParcels() {
        var ready: [(site: String, parcel: LaneParcel, lane: Topology.Lane, readElsewhere: Bool)] = []
        var setAside: [String] = []
        for row in snapshot.parcels {
            guard let lane = topology.lane(site: row.site, camera: row.parcel.camera) else {
                setAside.append(row.parcel.eventId)
                continue
            }
            let states = row.trackIds.map(state(of:))
            let settled = states.allSatisfy { state in state.map { $0.reconciled || !$0.accepted } ?? false }
            guard settled || now > row.received.milliseconds + RoundSnapshot.margin(lane) else { continue }
            var parcel = row.parcel
            for index in parcel.codes.indices where index < states.count {
                parcel.codes[index].itemId = states[index]?.itemId
            }
            ready.append((row.site, parcel, lane, states.contains { $0?.readElsewhere ?? false }))
        }
        let measurements = unsettledMeasurements()
        var passes = snapshot.parcelPasses
        var touched: Set<Int> = []
        // Parcels holding a code another camera read go first and join only by that code, so that
        // the other camera's parcel of the same box finds them; then the rest, by time.
        let ordered = ready.filter(\.readElsewhere) + ready.filter { !$0.readElsewhere }
        for (site, parcel, lane, readElsewhere) in ordered {
            if let index = passes.firstIndex(where: { $0.members.contains { $0.eventId == parcel.eventId } }) {
                touched.insert(index)  // merged before, in a round whose marking was lost
                continue
            }
            if let index = ParcelMerging.place(parcel, lane: lane, site: site, passes: passes, byTime: !readElsewhere) {
                passes[index].members.append(parcel)
                if passes[index].closed { passes[index].revision += 1 }
                touched.insert(index)
            } else {
                var pass = ParcelPass(passId: newId(), site: site, lane: lane.id)
                pass.members = [parcel]
                passes.append(pass)
                touched.insert(passes.count - 1)
            }
            changes.counts.parcelsMerged += 1
        }
        // Before closing: a measurement or coding that finds its pass open goes out with its
        // first revision.
        attach(measurements, to: &passes, touched: &touched)
        applyCodings(to: &passes, touched: &touched)
        for index in passes.indices where !passes[index].closed {
            let pass = passes[index]
            guard
                let lane = dueLane(
                    site: pass.site, lane: pass.lane, touched: touched.contains(index),
                    updatedAt: snapshot.parcelPassesUpdatedAt[pass.passId],
                    isDue: { ParcelMerging.isDue(pass, lane: $0, watermark: $1) })
            else { continue }
            passes[index].closed = true
            passes[index].revision = 1
            touched.insert(index)
            changes.counts.parcelPassesClosed += 1
            if let rules = lane.decision {
                // Once, as it closes: a camera's parcel joining later cannot call a parcel back.
                changes.decisions.append(
                    passes[index].decision(lane: lane, rules: rules, at: snapshot.now) { id in
                        snapshot.orderLines(site: pass.site, id)
                    })
                changes.counts.decisions += 1
            }
        }
        changes.parcelPasses = touched.sorted().map { index in
            let pass = passes[index]
            return ParcelPassRow(
                pass: pass, camerasExpected: topology.lane(site: pass.site, id: pass.lane)?.cameras.count ?? 0)
        }
        changes.parcelsMerged = setAside + ready.map(\.parcel.eventId)
    }

    // MARK: measurements

    /// The measurements waiting for their parcel pass, with their lanes; one for a lane the
    /// topology does not have is settled without one at once.
    private mutating func unsettledMeasurements() -> [(row: UnsettledMeasurement, lane: Topology.Lane)] {
        var placed: [(row: UnsettledMeasurement, lane: Topology.Lane)] = []
        for row in snapshot.measurements {
            guard let lane = topology.lane(site: row.measurement.site, id: row.measurement.lane) else {
                changes.measurements.append((row.measurement, nil))
                changes.counts.measurementsUnmatched += 1
                continue
            }
            placed.append((row, lane))
        }
        return placed
    }

    /// Attaches each dimensioner or scale reading to the parcel pass that was at the device
    /// (`ParcelMerging.place(_:lane:passes:)`); a closed pass goes out again as revision + 1. One
    /// with no such pass waits until the lane has moved past it (its watermark, or the store's
    /// clock since it was stored, beyond its time by the lane's span, window and grace), then is
    /// settled without one.
    private mutating func attach(
        _ measurements: [(row: UnsettledMeasurement, lane: Topology.Lane)], to passes: inout [ParcelPass],
        touched: inout Set<Int>
    ) {
        for (row, lane) in measurements {
            let measurement = row.measurement
            if let index = ParcelMerging.place(measurement, lane: lane, passes: passes) {
                passes[index].measurement = measurement
                if passes[index].closed { passes[index].revision += 1 }
                touched.insert(index)
                changes.measurements.append((measurement, passes[index].passId))
                changes.counts.measurementsAttached += 1
                continue
            }
            let time = measurement.time.milliseconds - lane.measureOffsetMilliseconds
            let margin = RoundSnapshot.margin(lane)
            let watermark = watermarks[LaneKey(site: measurement.site, lane: lane.id)]?.milliseconds ?? 0
            // A device upstream of the first camera measures before any camera sees the parcel.
            let wait = margin + max(0, -lane.measureOffsetMilliseconds)
            if watermark > time + margin || now > row.received.milliseconds + wait {
                changes.measurements.append((measurement, nil))
                changes.counts.measurementsUnmatched += 1
            }
        }
    }

    // MARK: codings

    /// Gives each no-read a person resolved to the parcel pass it names, once: a closed pass goes
    /// out again as revision + 1, now holding the keyed code (marked keyed), an open one with its
    /// first. The decision made as the pass closed stands. A coding whose pass is gone (dropped
    /// with its day) is taken without one.
    private mutating func applyCodings(to passes: inout [ParcelPass], touched: inout Set<Int>) {
        for coded in snapshot.codings {
            changes.codingsApplied.append(coded)
            guard let index = passes.firstIndex(where: { $0.passId == coded.parcelPassId }),
                !passes[index].codings.contains(where: { $0.noReadId == coded.noReadId && $0.camera == coded.camera })
            else { continue }
            passes[index].codings.append(ParcelPassEvent.Coding(coded))
            if passes[index].closed { passes[index].revision += 1 }
            touched.insert(index)
            changes.counts.codingsApplied += 1
        }
    }

    // MARK: pack records

    /// A session that names a station makes a pack record. Its station is the topology's for the
    /// camera that sent it (ingest refused a session naming another one), so a camera at no
    /// station of a site the topology describes makes none; on a site the topology does not
    /// describe, the station the session names (a checked token) stands. A session whose pack
    /// record exists already (a redelivery) is taken without another.
    private mutating func pack() {
        changes.sessionsTaken = snapshot.sessions
        var packed = snapshot.packedSessions
        for session in snapshot.sessions {
            guard let event = session.event, let named = event.station,
                let station = topology.site(session.site) == nil
                    ? named : topology.station(site: session.site, camera: session.camera)?.id,
                packed.insert(event.sessionId).inserted
            else { continue }
            let codes = event.codes.map {
                CountedCode(value: $0.value, symbology: $0.symbology, count: $0.count, role: $0.role)
            }
            let lines = Self.orderId(event).flatMap { snapshot.orderLines(site: session.site, $0) }
            let result = PackEvaluation.evaluate(sessionOrderId: event.orderId, codes: codes) { _ in lines }
            changes.packs.append(
                NewPack(
                    sessionId: event.sessionId, site: session.site, station: station, camera: session.camera,
                    startedAt: event.startedAt ?? event.time, completedAt: event.time, result: result))
            changes.counts.packs += 1
        }
    }
}
