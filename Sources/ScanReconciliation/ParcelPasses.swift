import ScanCore
import ScanEvents

/// One code of a camera's parcel, with the item pass its sighting joined (nil: none, e.g. a code
/// the rules rejected): the code as a parcel pass publishes it.
public typealias ParcelCode = ParcelPassEvent.Code

/// One camera's parcel (a `parcel` event) as merging needs it.
public struct LaneParcel: Sendable, Equatable {
    public var eventId: String
    public var parcelId: String
    public var camera: String
    public var firstSeen: Timestamp
    public var lastSeen: Timestamp
    public var codes: [ParcelCode]
    /// Required symbologies this camera did not read on it.
    public var missing: [String]
    /// The frame that closed it (it had left this camera's view): the parcel event's time.
    public var closedAt: Timestamp
    /// A code the rules reject is among its codes.
    public var rejected: Bool
    /// Its picture's object name in the images bucket (nil: none kept).
    public var image: String?

    public init(
        eventId: String, parcelId: String, camera: String, firstSeen: Timestamp, lastSeen: Timestamp,
        codes: [ParcelCode], missing: [String], closedAt: Timestamp? = nil, rejected: Bool = false,
        image: String? = nil
    ) {
        self.image = image
        self.eventId = eventId
        self.parcelId = parcelId
        self.camera = camera
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.codes = codes
        self.missing = missing
        self.closedAt = closedAt ?? lastSeen
        self.rejected = rejected
    }
}

/// One parcel along a lane: the parcels its cameras saw of it, merged. Its codes are the union
/// of theirs, a code two cameras read (one item pass) counted once; a required symbology is
/// missing only when no camera read it.
public struct ParcelPass: Sendable, Equatable {
    public var passId: String
    public var site: String
    public var lane: String
    public var members: [LaneParcel] = []
    public var closed = false
    /// 0 while open; 1 when first closed; +1 for every camera's parcel (or measurement) that
    /// joins after that.
    public var revision = 0
    /// What the lane's dimensioner or scale measured of it.
    public var measurement: MeasureEvent?
    /// What people said of its no-reads (`scanadmin noreads resolve`), in the order they said it.
    public var codings: [ParcelPassEvent.Coding] = []

    public init(passId: String, site: String, lane: String) {
        self.passId = passId
        self.site = site
        self.lane = lane
    }

    public var firstSeen: Timestamp { members.map(\.firstSeen).min() ?? Timestamp(milliseconds: 0) }
    public var lastSeen: Timestamp { members.map(\.lastSeen).max() ?? Timestamp(milliseconds: 0) }
    public var cameras: [String] { Array(Set(members.map(\.camera))).sorted() }

    /// The union of the members' codes (by item pass where the sighting joined one, else by
    /// symbology and value), then the codes people keyed for its no-reads that name a symbology
    /// and no camera read (marked with their no-read).
    public var codes: [ParcelCode] {
        var seen: Set<String> = []
        var codes: [ParcelCode] = []
        for code in members.flatMap(\.codes) {
            let key = code.itemId.map { "item:" + $0 } ?? "code:\(code.symbology)\u{0}\(code.value)"
            if seen.insert(key).inserted { codes.append(code) }
        }
        for coding in codings {
            guard let code = coding.code, let symbology = code.symbology,
                !codes.contains(where: { $0.symbology == symbology && $0.value == code.value })
            else { continue }
            codes.append(
                ParcelCode(
                    symbology: symbology, value: code.value, valueEncoding: nil, itemId: nil,
                    keyedFor: coding.noReadId))
        }
        return codes
    }

    /// Required symbologies no camera read on it and nobody keyed for it.
    public var missing: [String] {
        guard let first = members.first?.missing else { return [] }
        let read = members.dropFirst().reduce(first) { kept, member in kept.filter(member.missing.contains) }
        let keyed = Set(
            codings.compactMap { coding in
                coding.code.flatMap { code in
                    code.symbology.map { code.gs1 && $0 == Symbology.code128.rawValue ? "GS1-128" : $0 }
                }
            })
        return read.filter { !keyed.contains($0) }
    }

    public var noRead: Bool { codes.isEmpty }
    public var complete: Bool { !codes.isEmpty && missing.isEmpty }

    /// The pass's time at the lane's first camera: the mean of its members' first sights moved
    /// back by their cameras' offsets.
    public func anchor(on lane: Topology.Lane) -> Int64 {
        let times = members.map { $0.firstSeen.milliseconds - (lane.offset(of: $0.camera) ?? 0) }
        guard !times.isEmpty else { return 0 }
        return times.reduce(0, +) / Int64(times.count)
    }
}

public enum ParcelMerging {
    /// The pass a camera's parcel joins, among the lane's passes with no parcel from this camera
    /// (a camera sees a box once: two of its parcels are two boxes): the one holding an item pass
    /// its codes joined (a code another camera read too), the nearest in time if several; else,
    /// when `byTime`, the one whose time at this camera is nearest, within the lane's window (a
    /// parcel whose codes no other camera read, or one this camera read nothing on). Nil: a new
    /// pass. A parcel holding a code another camera read is placed with `byTime` false: that
    /// camera's parcel of the box holds the code, and a box beside it at the same moment (another
    /// row of the belt) must not take it first.
    public static func place(
        _ parcel: LaneParcel, lane: Topology.Lane, site: String, passes: [ParcelPass], byTime: Bool = true
    ) -> Int? {
        let items = Set(parcel.codes.compactMap(\.itemId))
        let time = parcel.firstSeen.milliseconds - (lane.offset(of: parcel.camera) ?? 0)
        let distance = { (index: Int) in abs(passes[index].anchor(on: lane) - time) }
        let candidates = passes.indices.filter { index in
            passes[index].site == site && passes[index].lane == lane.id
                && !passes[index].members.contains { $0.camera == parcel.camera }
        }
        let sharing = candidates.filter { index in
            !items.isEmpty
                && passes[index].members.contains { member in
                    member.codes.contains { $0.itemId.map(items.contains) ?? false }
                }
        }
        if let shared = sharing.min(by: { distance($0) < distance($1) }) { return shared }
        guard byTime else { return nil }
        return candidates.filter { distance($0) <= lane.windowMilliseconds }.min { distance($0) < distance($1) }
    }

    /// The pass a measurement belongs to: among the lane's passes with none yet, the one whose
    /// time at the device (its anchor plus the device's offset) is nearest the measurement's,
    /// within the lane's window. Nil: none (yet).
    public static func place(_ measurement: MeasureEvent, lane: Topology.Lane, passes: [ParcelPass]) -> Int? {
        guard measurement.lane == lane.id else { return nil }
        let time = measurement.time.milliseconds - lane.measureOffsetMilliseconds
        var best: (index: Int, distance: Int64)?
        for index in passes.indices
        where passes[index].site == measurement.site && passes[index].lane == lane.id
            && passes[index].measurement == nil && !passes[index].members.isEmpty
        {
            let distance = abs(passes[index].anchor(on: lane) - time)
            guard distance <= lane.windowMilliseconds, distance < (best?.distance ?? .max) else { continue }
            best = (index, distance)
        }
        return best?.index
    }

    /// An open pass is due when every camera of its lane has sent its parcel, or when the lane's
    /// watermark is past its time at the last camera plus the window and the grace.
    public static func isDue(_ pass: ParcelPass, lane: Topology.Lane, watermark: Timestamp) -> Bool {
        guard !pass.closed else { return false }
        if Set(lane.cameras.map(\.id)).isSubset(of: pass.cameras) { return true }
        return watermark.milliseconds > pass.anchor(on: lane) + lane.span + lane.windowMilliseconds
            + lane.graceMilliseconds
    }
}

extension ParcelPass {
    /// The pass as published, with the number of cameras its lane has.
    public func event(camerasExpected: Int) -> ParcelPassEvent {
        ParcelPassEvent(
            passId: passId, site: site, lane: lane, firstSeen: firstSeen, lastSeen: lastSeen, revision: revision,
            camerasExpected: camerasExpected,
            parcels: members.map {
                ParcelPassEvent.CameraParcel(camera: $0.camera, parcelId: $0.parcelId, image: $0.image)
            },
            codes: codes, missing: missing, measurement: measurement, codings: codings)
    }
}
