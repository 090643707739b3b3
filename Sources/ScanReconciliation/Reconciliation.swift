import ScanCore

/// Cross-camera reconciliation, the pure part: sightings of one physical item by the cameras of
/// a lane become one item pass. A sighting joins the open pass of the same code whose expected
/// time at this camera (the pass's time at the first camera plus the camera's travel offset) is
/// nearest and within the lane's window, and which has no sighting from this camera yet; else it
/// opens a new pass. Identical codes on items back to back are therefore kept apart by time, not
/// merged by value, and the order in which sightings arrive does not matter.
public struct PassMember: Sendable, Equatable {
    public var eventId: String
    public var camera: String
    public var trackId: String
    public var firstSeen: Timestamp
    public var lastSeen: Timestamp

    public init(eventId: String, camera: String, trackId: String, firstSeen: Timestamp, lastSeen: Timestamp) {
        self.eventId = eventId
        self.camera = camera
        self.trackId = trackId
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
    }
}

/// One item seen passing along a lane.
public struct ItemPass: Sendable, Equatable {
    public var itemId: String
    public var site: String
    public var lane: String
    public var symbology: String
    public var value: String
    public var valueEncoding: String
    public var members: [PassMember] = []
    /// Closed passes are published; a late sighting reopens nothing but bumps the revision.
    public var closed = false
    /// 0 while open; 1 when first closed; +1 for every late sighting added after that.
    public var revision = 0

    public init(itemId: String, site: String, lane: String, symbology: String, value: String, valueEncoding: String) {
        self.itemId = itemId
        self.site = site
        self.lane = lane
        self.symbology = symbology
        self.value = value
        self.valueEncoding = valueEncoding
    }

    public var firstSeen: Timestamp { members.map(\.firstSeen).min() ?? Timestamp(milliseconds: 0) }
    public var lastSeen: Timestamp { members.map(\.lastSeen).max() ?? Timestamp(milliseconds: 0) }

    /// The pass's time at the lane's first camera: the mean of its members' times moved back by
    /// their cameras' offsets.
    public func anchor(on lane: Topology.Lane) -> Int64 {
        let times = members.map { $0.firstSeen.milliseconds - (lane.offset(of: $0.camera) ?? 0) }
        guard !times.isEmpty else { return 0 }
        return times.reduce(0, +) / Int64(times.count)
    }

    /// Lane cameras that did not see this item.
    public func missing(on lane: Topology.Lane) -> [String] {
        lane.cameras.map(\.id).filter { camera in !members.contains { $0.camera == camera } }
    }
}

/// A sighting as reconciliation needs it.
public struct LaneSighting: Sendable, Equatable {
    public var site: String
    public var symbology: String
    public var value: String
    public var valueEncoding: String
    public var member: PassMember

    public init(site: String, symbology: String, value: String, valueEncoding: String, member: PassMember) {
        self.site = site
        self.symbology = symbology
        self.value = value
        self.valueEncoding = valueEncoding
        self.member = member
    }
}

public enum Reconciliation {
    public enum Placement: Sendable, Equatable {
        /// Joined an open pass (index into the array).
        case joined(Int)
        /// Opened a new pass, appended at this index.
        case opened(Int)
        /// Joined a pass that had closed already: its revision went up.
        case late(Int)
        /// The same event is in the pass already (a replay): nothing changed.
        case known(Int)
    }

    /// Places one sighting among `passes` (open ones and recently closed ones of the lane).
    public static func place(
        _ sighting: LaneSighting, lane: Topology.Lane, passes: inout [ItemPass], newId: () -> String
    ) -> Placement {
        let member = sighting.member
        if let index = passes.firstIndex(where: { $0.members.contains { $0.eventId == member.eventId } }) {
            return .known(index)
        }
        let time = member.firstSeen.milliseconds - (lane.offset(of: member.camera) ?? 0)
        var best: (index: Int, distance: Int64)?
        for (index, pass) in passes.enumerated()
        where pass.site == sighting.site && pass.lane == lane.id && pass.value == sighting.value
            && pass.symbology == sighting.symbology && !pass.members.contains(where: { $0.camera == member.camera })
        {
            let distance = abs(pass.anchor(on: lane) - time)
            guard distance <= lane.windowMilliseconds else { continue }
            if distance < best?.distance ?? .max { best = (index, distance) }
        }
        if let best {
            passes[best.index].members.append(member)
            if passes[best.index].closed {
                passes[best.index].revision += 1
                return .late(best.index)
            }
            return .joined(best.index)
        }
        var pass = ItemPass(
            itemId: newId(), site: sighting.site, lane: lane.id, symbology: sighting.symbology, value: sighting.value,
            valueEncoding: sighting.valueEncoding)
        pass.members = [member]
        passes.append(pass)
        return .opened(passes.count - 1)
    }

    /// An open pass is due to close when every camera of its lane saw it, or when the lane's
    /// event-time watermark (the latest sighting seen on the lane) is past the last camera's
    /// expected time plus the window and the grace for late arrivals.
    /// The pass a camera's no-read belongs to: among the lane's passes without a sighting from
    /// that camera, the one whose expected time at the camera (the pass's anchor plus the
    /// camera's offset) is nearest the no-read's first sight, within the lane's window. Nil: no
    /// camera of the lane read that item.
    public static func pass(forNoReadAt firstSeen: Timestamp, camera: String, lane: Topology.Lane, passes: [ItemPass])
        -> Int?
    {
        let offset = lane.offset(of: camera) ?? 0
        var best: (index: Int, distance: Int64)?
        for (index, pass) in passes.enumerated()
        where pass.lane == lane.id && !pass.members.isEmpty && !pass.members.contains(where: { $0.camera == camera }) {
            let distance = abs(firstSeen.milliseconds - (pass.anchor(on: lane) + offset))
            guard distance <= lane.windowMilliseconds, distance < (best?.distance ?? .max) else { continue }
            best = (index, distance)
        }
        return best?.index
    }

    public static func isDue(_ pass: ItemPass, lane: Topology.Lane, watermark: Timestamp) -> Bool {
        guard !pass.closed else { return false }
        if pass.missing(on: lane).isEmpty { return true }
        return watermark.milliseconds > pass.anchor(on: lane) + lane.span + lane.windowMilliseconds
            + lane.graceMilliseconds
    }
}
