import ScanCore

/// How the agent groups codes into parcels (`grouping` in the agent config).
public struct GroupingConfig: Sendable, Equatable {
    /// Off: no `parcel` events (codes are still sightings).
    public var enabled = false
    /// A newly read code joins the parcel whose code is nearest to it, when the gap between the
    /// two codes' boxes is at most this (pixels). Set it above the widest gap between codes on
    /// one parcel and below the narrowest gap between codes of two parcels (docs/agent-config.md).
    public var maxGapPixels = 60
    /// ... and they move alike: their speeds differ by at most this (pixels a frame), once both
    /// have been followed for a few frames.
    public var velocityTolerance = 4.0
    /// Codes every parcel must carry (e.g. GS1-128 for the SSCC); a parcel without one of them
    /// is incomplete.
    public var require: [Requirement] = []

    public init() {}

    /// A kind of code a parcel must carry: a symbology, or GS1-128 (Code 128 holding GS1 data).
    public struct Requirement: Sendable, Equatable {
        public var symbology: Symbology
        public var gs1: Bool

        public init(symbology: Symbology, gs1: Bool = false) {
            self.symbology = symbology
            self.gs1 = gs1
        }

        /// A symbology's name, or `GS1-128`.
        public init?(name: String) {
            if name.uppercased() == "GS1-128" {
                self.init(symbology: .code128, gs1: true)
            } else if let symbology = Symbology(name: name) {
                self.init(symbology: symbology)
            } else {
                return nil
            }
        }

        public var name: String { gs1 && symbology == .code128 ? "GS1-128" : symbology.rawValue }

        public func isMet(by track: Track) -> Bool { track.symbology == symbology && (!gs1 || track.isGS1) }
    }
}

/// Codes that travel together on one parcel, pure: a confirmed track joins the open parcel
/// whose nearest live code is within `maxGapPixels` and moves at the same speed, else it starts
/// a parcel of its own. Parcels are never merged, so a code between two parcels belongs to exactly
/// one (the nearer). A parcel ends once all its codes have left the view and `grace` frames have
/// passed, so that no-reads ending beside it are still counted in it; a no-read near no parcel
/// is a parcel of its own, read by no code.
public struct ParcelGrouper: Sendable {
    public struct Parcel: Sendable, Equatable {
        public var id: String
        /// Its codes in the order they were read, as their tracks ended.
        public var tracks: [Track]
        /// The ids of the no-reads (`<id>.noread` events) seen on it.
        public var noReads: [String]
        /// The box around its codes and no-reads where they were last seen.
        public var outline: Box
        public var firstSeen: Timestamp
        public var lastSeen: Timestamp
        /// Required codes none of its codes is.
        public var missing: [GroupingConfig.Requirement]
    }

    public let config: GroupingConfig
    /// Frames a parcel waits after its last code left (for no-reads ending beside it).
    public let grace: Int
    private let idPrefix: String
    private var count = 0
    private var open: [Open] = []
    /// Confirmed codes not yet placed (followed fewer than `settleFrames` frames).
    private var pending: [String] = []

    private struct Open: Sendable {
        var id: String
        var live: Set<String> = []
        var order: [String] = []
        var noReads: [String] = []
        var noReadBoxes: [Box] = []
        var firstSeen: Timestamp
        var lastSeen: Timestamp
        /// Each code as placed, then as it ended: where it was last seen and how it moved.
        var last: [String: Track] = [:]
        var endedAt: Int?
    }

    public init(config: GroupingConfig, grace: Int, idPrefix: String) {
        self.config = config
        self.grace = grace
        self.idPrefix = idPrefix
    }

    /// Open parcels (tests, status).
    public var openCount: Int { open.count }

    /// Each open parcel's outline in `frame`: the box around its codes in view there (`live`: the
    /// tracker's live tracks); a parcel none of whose codes is in view has none. The live view
    /// draws them.
    /// `codes`: how many of its codes are in view there (the agent keeps a parcel's picture from
    /// the frame with the most).
    public func outlines(live: [Track], frame: Int) -> [(id: String, box: Box, codes: Int)] {
        let byId = Dictionary(live.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return open.compactMap { parcel in
            let boxes = parcel.order.compactMap { byId[$0] }.filter { $0.presentFrame == frame }.map(\.presentBox)
            guard let first = boxes.first else { return nil }
            return (parcel.id, boxes.dropFirst().reduce(first) { $0.union($1) }, boxes.count)
        }
    }

    /// The gap between two boxes: 0 when they overlap, else the larger of the two axis gaps.
    static func gap(_ a: Box, _ b: Box) -> Int {
        let apart = a.gap(to: b)
        return max(0, apart.x, apart.y)
    }

    /// Whether two tracks move alike, on each axis where both speeds were measured: over their
    /// lives (`Track.steadyVelocity`) where both have that, else between their last two complete
    /// readings. The smoothed speed alone swings by more than the tolerance along a linear code's
    /// bars, which split the labels of one box into parcels of their own. Along the bars of a
    /// linear code zbar reads on its scan lines (down the rows' direction for a code read along
    /// rows) no speed is compared at all: its reads show only which lines crossed it, which the
    /// tracker itself places where it predicts the code, so a wrong speed there feeds itself
    /// (at 14 px a frame, 4 px a frame across the belt within six frames of a code on a box
    /// moving straight).
    func movesAlike(_ a: Track, _ b: Track) -> Bool {
        typealias Speed = (steady: Double?, smoothed: Double, measured: Bool)
        func alike(_ a: Speed, _ b: Speed) -> Bool {
            if let first = a.steady, let second = b.steady { return abs(first - second) <= config.velocityTolerance }
            return !(a.measured && b.measured) || abs(a.smoothed - b.smoothed) <= config.velocityTolerance
        }
        let (steadyA, steadyB) = (a.steadyVelocity, b.steadyVelocity)
        let compareX = a.readAlongRows != false && b.readAlongRows != false
        let compareY = a.readAlongRows != true && b.readAlongRows != true
        return (!compareX || alike((steadyA.x, a.velocityX, a.measuredX), (steadyB.x, b.velocityX, b.measuredX)))
            && (!compareY || alike((steadyA.y, a.velocityY, a.measuredY), (steadyB.y, b.velocityY, b.measuredY)))
    }

    /// A track confirmed: placed in a parcel once it has been followed `settleFrames` frames
    /// (`update`), or when it ends before that.
    public mutating func confirmed(_ track: Track, frame: Int, live: [Track]) {
        if track.frames >= Self.settleFrames {
            place(track, frame: frame, live: live)
        } else {
            pending.append(track.id)
        }
    }

    /// Joins the nearest open parcel, or starts one. `live`: the tracker's live tracks now.
    private mutating func place(_ track: Track, frame: Int, live: [Track]) {
        pending.removeAll { $0 == track.id }
        let box = track.predictedBox(at: frame)
        let byId = Dictionary(live.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var best: (index: Int, gap: Int)?
        for index in open.indices {
            // Its codes still in view where the tracker has them, the ones that left where they
            // would be now (a code read late, at the parcel's trailing edge, still joins it).
            for memberId in open[index].order {
                guard let member = byId[memberId] ?? open[index].last[memberId], movesAlike(member, track) else {
                    continue
                }
                let gap = Self.gap(box, member.predictedBox(at: frame))
                if gap <= config.maxGapPixels && gap < (best?.gap ?? .max) { best = (index, gap) }
            }
        }
        let index: Int
        if let best {
            index = best.index
        } else {
            count += 1
            open.append(Open(id: "\(idPrefix)-p\(count)", firstSeen: track.firstSeen, lastSeen: track.lastSeen))
            index = open.count - 1
        }
        open[index].endedAt = nil
        open[index].live.insert(track.id)
        open[index].order.append(track.id)
        open[index].last[track.id] = track
        open[index].firstSeen = min(open[index].firstSeen, track.firstSeen)
    }

    /// Each frame: codes confirmed at least `settleFrames` frames ago (their speed is known by
    /// then) are placed in a parcel.
    public mutating func update(live: [Track], frame: Int) {
        guard !pending.isEmpty else { return }
        let byId = Dictionary(live.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for id in pending {
            guard let track = byId[id], track.frames >= Self.settleFrames else { continue }
            place(track, frame: frame, live: live)
        }
    }

    /// Frames a code is followed before it is placed in a parcel, so that its speed is known.
    public static let settleFrames = 8

    /// A track merged into another (the same code): it is no code of its own.
    public mutating func merged(_ trackId: String) {
        pending.removeAll { $0 == trackId }
        for index in open.indices where open[index].live.remove(trackId) != nil {
            open[index].order.removeAll { $0 == trackId }
            open[index].last[trackId] = nil
        }
    }

    /// A track ended in `frame` (its sighting is out): kept in its parcel.
    public mutating func ended(_ track: Track, frame: Int) {
        if pending.contains(track.id) { place(track, frame: frame, live: []) }
        for index in open.indices where open[index].live.remove(track.id) != nil {
            open[index].last[track.id] = track
            open[index].lastSeen = max(open[index].lastSeen, track.lastSeen)
            if open[index].live.isEmpty { open[index].endedAt = frame }
        }
    }

    /// The parcel a code is placed in (open parcels only; nil: not placed, or grouping closed it).
    public func parcelId(ofTrack trackId: String) -> String? {
        open.first { $0.order.contains(trackId) }?.id
    }

    /// A no-read that ended: counted in the parcel beside it, or a parcel of its own (returned).
    public mutating func noRead(_ noRead: CandidateTracker.NoRead, eventId: String) -> Parcel? {
        var best: (index: Int, gap: Int)?
        for index in open.indices {
            for member in open[index].last.values {
                // Compared where both were at one moment (the later of their last frames that both
                // had), not extrapolated far past the code's last read.
                let frame = min(noRead.lastFrame, member.lastFrame)
                guard frame >= max(noRead.firstFrame, member.firstFrame) else { continue }
                let codeBox = member.lastBox.offset(
                    dx: Int((member.velocityX * Double(frame - member.lastFrame)).rounded()),
                    dy: Int((member.velocityY * Double(frame - member.lastFrame)).rounded()))
                let gap = Self.gap(Self.box(of: noRead, at: frame), codeBox)
                if gap <= config.maxGapPixels && gap < (best?.gap ?? .max) { best = (index, gap) }
            }
        }
        if let best {
            open[best.index].noReads.append(eventId)
            open[best.index].noReadBoxes.append(noRead.lastBox)
            return nil
        }
        count += 1
        return Parcel(
            id: "\(idPrefix)-p\(count)", tracks: [], noReads: [eventId], outline: noRead.lastBox,
            firstSeen: noRead.firstSeen, lastSeen: noRead.lastSeen, missing: config.require)
    }

    /// Where a no-read was in `frame`, between its first and last boxes.
    static func box(of noRead: CandidateTracker.NoRead, at frame: Int) -> Box {
        let span = noRead.lastFrame - noRead.firstFrame
        guard span > 0 else { return noRead.lastBox }
        let t = Double(frame - noRead.firstFrame) / Double(span)
        func mix(_ a: Int, _ b: Int) -> Int { a + Int((Double(b - a) * t).rounded()) }
        let (first, last) = (noRead.firstBox, noRead.lastBox)
        return Box(
            minX: mix(first.minX, last.minX), minY: mix(first.minY, last.minY), maxX: mix(first.maxX, last.maxX),
            maxY: mix(first.maxY, last.maxY))
    }

    /// Parcels whose codes all ended and either did so at least `grace` frames before `frame` or
    /// should by now be outside the searched `area`, and with none of the `unread` labels still
    /// followed (candidate no-reads) within the gap of where they are; all of them when `frame`
    /// is nil (the end of the stream).
    public mutating func close(frame: Int?, area: Box? = nil, unread: [Box] = []) -> [Parcel] {
        var closed: [Parcel] = []
        let (grace, require, gap) = (self.grace, config.require, config.maxGapPixels)
        open.removeAll { parcel in
            let due: Bool
            if let frame, let ended = parcel.endedAt {
                let boxes = parcel.last.values.map { $0.predictedBox(at: frame) }
                let left = area.map { area in !boxes.isEmpty && boxes.allSatisfy { $0.centreIsOutside(area) } } ?? false
                let waiting = unread.contains { label in boxes.contains { Self.gap(label, $0) <= gap } }
                due = (frame - ended >= grace || left) && !waiting
            } else {
                due = frame == nil
            }
            guard due else { return false }
            if let finished = Self.finish(parcel, require: require) { closed.append(finished) }
            return true
        }
        return closed
    }

    private static func finish(_ parcel: Open, require: [GroupingConfig.Requirement]) -> Parcel? {
        let tracks = parcel.order.compactMap { parcel.last[$0] }
        let boxes = tracks.map(\.lastBox) + parcel.noReadBoxes
        guard let first = boxes.first else { return nil }
        let outline = boxes.dropFirst().reduce(first) { $0.union($1) }
        return Parcel(
            id: parcel.id, tracks: tracks, noReads: parcel.noReads, outline: outline, firstSeen: parcel.firstSeen,
            lastSeen: parcel.lastSeen,
            missing: require.filter { requirement in !tracks.contains(where: requirement.isMet) })
    }
}
