import ScanCore

/// What the tracker reports for one frame.
public enum TrackerEvent: Sendable, Equatable {
    /// A track was confirmed (decoded in `minDecodes` frames).
    case added(Track)
    /// A confirmed track moved (throttled).
    case updated(Track)
    /// A confirmed track ended: its code has not been decoded for `maxMissedFrames`, or the stream ended.
    case removed(Track)
    /// A confirmed track turned out to be a second view of another track's code and was folded
    /// into it: it ends without a sighting of its own.
    case merged(Track, into: String)
}

/// Follows every code across frames with a persistent ID (matrix scan).
///
/// A value type driven by (detections, frame index, time): no clock, no I/O. Each frame it
/// predicts where every live track has moved (constant velocity), pairs detections with tracks
/// by distance to that prediction — the same value first, a different value only where the boxes
/// overlap (a misread of the same code, settled by vote) — starts tentative tracks for the rest,
/// and ends tracks that have missed too many frames. Identical values far apart are different
/// tracks, so identical items side by side or back to back are counted one by one.
public struct Tracker: Sendable {
    public let config: TrackingConfig
    /// Track IDs are `<prefix>-<n>`; the agent makes the prefix unique per camera and run.
    public let idPrefix: String
    public private(set) var live: [Track] = []
    private var nextSerial = 0
    private var confirmedCount = 0
    /// Tentative tracks that ended unconfirmed (misreads, phantoms).
    public private(set) var discarded = 0
    /// Confirmed tracks that ended in the last `maxMissedFrames` frames: where they would be now
    /// is still where a read code is (`confirmedPlaces`), leaving the view.
    private var recentlyEnded: [Track] = []

    public init(config: TrackingConfig = TrackingConfig(), idPrefix: String) {
        self.config = config
        self.idPrefix = idPrefix
    }

    public var confirmedLive: Int { live.reduce(0) { $0 + ($1.confirmed ? 1 : 0) } }

    /// Advances by one frame. `detections` are this frame's decodes, already split and normalised;
    /// `area` the part of the frame searched: a track not seen in this frame whose code should by
    /// now be outside it (its predicted centre) has left the view and ends at once, rather than
    /// after `maxMissedFrames` (a parcel's decision waits for its codes to end).
    public mutating func step(frame: Int, time: Timestamp, detections: [Detection], area: Box? = nil)
        -> [TrackerEvent]
    {
        var events: [TrackerEvent] = []
        let boxes = detections.map { $0.box ?? Box(minX: 0, minY: 0, maxX: 0, maxY: 0) }

        // Candidate pairs within each track's gate.
        struct Candidate {
            var track: Int
            var detection: Int
            var sameValue: Bool
            var distance: Double
        }
        var candidates: [Candidate] = []
        for (t, track) in live.enumerated() {
            let predicted = track.predictedBox(at: frame)
            let gate = Self.gate(
                size: max(track.typicalWidth, track.typicalHeight), velocity: (track.velocityX, track.velocityY),
                frames: frame - track.presentFrame, minimum: config.minGatePixels)
            for (d, detection) in detections.enumerated() {
                let gap = Self.gap(predicted, boxes[d])
                guard gap <= gate else { continue }
                let same = track.matches(detection)
                if !same {
                    // A different value continues a track only where it covers the same code, and
                    // only while the code is being read: after frames unread, another value in
                    // its place is another item (put down where the last one was taken away).
                    guard detection.symbology.isLinear == track.symbology.isLinear,
                        frame - track.lastFrame <= Self.misreadFrames,
                        predicted.covers(boxes[d], fraction: 0.5)
                    else { continue }
                }
                let cost = Self.pairingCost(predicted, boxes[d], gap: gap)
                candidates.append(Candidate(track: t, detection: d, sameValue: same, distance: cost))
            }
        }
        candidates.sort { a, b in
            a.sameValue != b.sameValue ? a.sameValue : a.distance < b.distance
        }
        var trackTaken = [Bool](repeating: false, count: live.count)
        var detectionTaken = [Bool](repeating: false, count: detections.count)
        for candidate in candidates where !trackTaken[candidate.track] && !detectionTaken[candidate.detection] {
            trackTaken[candidate.track] = true
            detectionTaken[candidate.detection] = true
            var track = live[candidate.track]
            let event = update(
                &track, with: detections[candidate.detection], box: boxes[candidate.detection], frame: frame, time: time
            )
            live[candidate.track] = track
            if let event { events.append(event) }
        }

        // More pieces of a code already matched this frame (zbar reported it twice, or a split
        // left a fragment) are part of that read, not new codes.
        for (d, detection) in detections.enumerated() where !detectionTaken[d] {
            for (t, track) in live.enumerated() where trackTaken[t] && track.matches(detection) {
                let gate = max(config.minGatePixels, 0.25 * Double(max(track.typicalWidth, track.typicalHeight)))
                if Self.gap(track.lastBox, boxes[d]) <= gate {
                    detectionTaken[d] = true
                    break
                }
            }
        }

        mergeDuplicates(into: &events, frame: frame)

        // Tracks that missed too long end; unconfirmed ones vanish without a trace. A confirmed one
        // that ends next to a live track of its value was a partial read of that code's edge (a
        // label entering the view, read on one side while the whole code started its own track):
        // it is folded into that track rather than becoming a second sighting.
        func ends(_ track: Track) -> Bool {
            let missed = frame - track.presentFrame
            guard missed <= config.maxMissedFrames else { return true }
            guard missed >= 1, let area else { return false }
            return track.predictedBox(at: frame).centreIsOutside(area)
        }
        let ending = live.indices.filter { ends(live[$0]) }
        if !ending.isEmpty {
            let staying = live.indices.filter { !ends(live[$0]) }
            for index in ending {
                let gone = live[index]
                guard gone.confirmed else {
                    if let proven = confirmedAtEnd(index) {
                        events += [.added(proven), .removed(proven)]
                    } else {
                        discarded += 1
                    }
                    continue
                }
                let twin = staying.first { other in
                    let keeper = live[other]
                    guard keeper.confirmed, keeper.symbology == gone.symbology, keeper.value == gone.value else {
                        return false
                    }
                    let gate = max(config.minGatePixels, 0.25 * Double(max(keeper.typicalWidth, keeper.typicalHeight)))
                    if Self.gap(gone.predictedBox(at: keeper.lastFrame), keeper.lastBox) <= gate { return true }
                    // A track that started after the gone one was last read, whose path traced back
                    // passes where it was last read: the same code, picked up again. A track read
                    // a few times only can hold a speed far off (a label entering the view, read
                    // on another band of its lines each frame), so its own prediction misses its
                    // successor; the successor's speed, read over more frames, finds it.
                    return keeper.firstFrame > gone.lastFrame && keeper.decodes > gone.decodes
                        && Self.gap(keeper.predictedBox(at: gone.lastFrame), gone.lastBox) <= gate
                }
                if let twin {
                    Self.absorb(gone, into: &live[twin])
                    events.append(.merged(gone, into: live[twin].id))
                } else {
                    events.append(.removed(gone))
                    recentlyEnded.append(gone)
                }
            }
            live = staying.map { live[$0] }
        }

        // New tentative tracks for detections nothing claimed; pieces of one code seen in the same
        // frame (same value, close together) start one track.
        for (d, detection) in detections.enumerated() where !detectionTaken[d] {
            detectionTaken[d] = true
            var box = boxes[d]
            for other in (d + 1)..<detections.count
            where !detectionTaken[other] && detections[other].symbology == detection.symbology
                && detections[other].value == detection.value
            {
                let gate = max(
                    config.minGatePixels,
                    0.25 * Double(max(box.width, box.height, boxes[other].width, boxes[other].height)))
                if Self.gap(box, boxes[other]) <= gate {
                    detectionTaken[other] = true
                    if boxes[other].width * boxes[other].height > box.width * box.height { box = boxes[other] }
                }
            }
            var track = Track(serial: nextSerial, detection: detection, box: box, frame: frame, time: time)
            nextSerial += 1
            if config.minDecodes <= 1 {
                confirm(&track)
                events.append(.added(track))
            }
            live.append(track)
        }
        // Ended tracks stay places of read codes for `maxMissedFrames` (`confirmedPlaces`).
        recentlyEnded.removeAll { frame - $0.presentFrame > config.maxMissedFrames }
        return events
    }

    /// Ends every live track (end of stream, shutdown). Confirmed ones are reported as removed.
    public mutating func finish() -> [TrackerEvent] {
        var events: [TrackerEvent] = []
        for (index, track) in live.enumerated() {
            if track.confirmed {
                events.append(.removed(track))
            } else if let proven = confirmedAtEnd(index) {
                events += [.added(proven), .removed(proven)]
            } else {
                discarded += 1
            }
        }
        live.removeAll()
        recentlyEnded.removeAll()
        return events
    }

    /// Where the confirmed tracks read in `frame` were read.
    public func confirmedReads(in frame: Int) -> [Box] {
        live.filter { $0.confirmed && $0.lastFrame == frame }.map(\.lastBox)
    }

    /// Where tracks not confirmed (yet) were read in `frame`.
    public func tentativeReads(in frame: Int) -> [Box] {
        live.filter { !$0.confirmed && $0.lastFrame == frame }.map(\.lastBox)
    }

    /// Where the live confirmed tracks, and those that ended in the last `maxMissedFrames`
    /// frames, should be in `frame`, read there or not.
    public func confirmedPlaces(at frame: Int) -> [Box] {
        (live.filter(\.confirmed) + recentlyEnded).map { $0.predictedBox(at: frame) }
    }

    /// A track that ends read in fewer frames than `minDecodes` is still a code when its one
    /// value proves itself (`provesItself`: a check digit over the whole value), it was read as
    /// more than a point, and it was alone: no other track of its value (it would be a partial
    /// read of that code) and none where it was read (a misread of a neighbour). It is confirmed
    /// now, as it ends; any other is dropped (`discarded`).
    private mutating func confirmedAtEnd(_ index: Int) -> Track? {
        let track = live[index]
        guard track.votes.count == 1, track.sawExtent, Self.provesItself(track) else { return nil }
        for (position, other) in live.enumerated() where position != index {
            if other.symbology == track.symbology && other.value == track.value { return nil }
            if other.predictedBox(at: track.lastFrame).intersects(track.lastBox) { return nil }
        }
        var proven = track
        confirm(&proven)
        return proven
    }

    /// Values whose check characters cover the whole value: EAN/UPC (their check digit), and
    /// GS1-128 that starts with an SSCC (AI 00) or a GTIN (AI 01) whose check digit holds.
    static func provesItself(_ track: Track) -> Bool {
        if track.symbology.hasGS1CheckDigit { return true }
        guard track.symbology == .code128, track.isGS1 else { return false }
        let value = track.value
        func digits(_ ai: String, count: Int) -> Bool {
            value.count >= 2 + count && value.starts(with: Array(ai.utf8))
                && Symbology.hasValidGS1CheckDigit(Array(value[2..<(2 + count)]))
        }
        return digits("00", count: 18) || digits("01", count: 14)
    }

    /// Reads below which a track seen in an unread region takes that region's speed (`sustain`).
    static let readsForOwnSpeed = 5

    /// Keeps the live tracks (decoded in `frame` or not) whose predicted place overlaps one of
    /// `present` (the boxes of code-like regions seen in this frame: a label decoded only now
    /// and then is still in view between its reads): they do not end while their region is seen.
    /// A track whose speed is not measured yet takes the region's (`velocity`, pixels a frame).
    public mutating func sustain(frame: Int, present: [(box: Box, velocity: (Double, Double))]) {
        guard !present.isEmpty else { return }
        let read = live.filter { $0.lastFrame == frame }
        for index in live.indices {
            let predicted = live[index].predictedBox(at: frame)
            guard let region = present.first(where: { $0.box.intersects(predicted) }) else { continue }
            // The region is another code's, read there now (an item put down where this one was
            // taken away): it does not keep this track.
            let track = live[index]
            if read.contains(where: {
                $0.serial != track.serial && $0.value != track.value && $0.lastBox.intersects(predicted)
            }) {
                continue
            }
            // Seen, not read: the prediction is where it now is, and the gate stays tight.
            live[index].presentBox = predicted
            live[index].presentFrame = frame
            // A speed from a few reads only (a label coming into view at the frame's edge, read
            // on another band of its lines each frame) can be far off, and its prediction leaves the
            // region it is still in: the region's speed, followed over more frames, is the better.
            let fewReads = live[index].decodes < Self.readsForOwnSpeed
            if !live[index].measuredX || fewReads { live[index].velocityX = region.velocity.0 }
            if !live[index].measuredY || fewReads { live[index].velocityY = region.velocity.1 }
        }
    }

    /// Live tracks of one value whose predicted places lie in one code-like region are one code
    /// read at different spots (a long label read at one end, then at the other, with no read
    /// joining the two): the younger is folded into the older, as `mergeDuplicates` does for
    /// overlapping boxes.
    public mutating func mergeWithin(regions: [Box], frame: Int) -> [TrackerEvent] {
        var events: [TrackerEvent] = []
        for region in regions {
            var index = 0
            while index < live.count {
                let keeper = live[index]
                guard region.intersects(keeper.predictedBox(at: frame)) else {
                    index += 1
                    continue
                }
                var other = index + 1
                while other < live.count {
                    let track = live[other]
                    guard track.symbology == keeper.symbology, track.value == keeper.value,
                        region.covers(track.predictedBox(at: frame), fraction: 0.5),
                        region.covers(live[index].predictedBox(at: frame), fraction: 0.5)
                    else {
                        other += 1
                        continue
                    }
                    live[index] = fold(live[index], track, requireExtent: true, into: &events)
                    live.remove(at: other)
                }
                index += 1
            }
        }
        return events
    }

    /// Records the pipeline's rule decision on a live track.
    public mutating func setDecision(_ decision: TrackDecision, forTrack id: String) {
        if let index = live.firstIndex(where: { $0.id == id }) { live[index].decision = decision }
    }

    private mutating func confirm(_ track: inout Track) {
        confirmedCount += 1
        track.confirmed = true
        track.id = "\(idPrefix)-\(confirmedCount)"
    }

    private mutating func update(
        _ track: inout Track, with detection: Detection, box: Box, frame: Int, time: Timestamp
    ) -> TrackerEvent? {
        let predicted = track.predictedBox(at: frame)
        // Each axis on its own: a linear code read on some scan lines only is complete along the
        // lines but not across them, one read at one end the other way round. A complete extent
        // places the code on that axis; a partial one only shifts the prediction to hold it; an
        // oversized one (a mis-split) is ignored.
        let known = track.recentWidths.count >= 3
        let alongRows = Track.scanDirection(detection)
        let width = Self.axis(
            predicted: (predicted.minX, predicted.maxX), seen: (box.minX, box.maxX), typical: track.typicalWidth,
            known: known, acrossLines: alongRows == false)
        let height = Self.axis(
            predicted: (predicted.minY, predicted.maxY), seen: (box.minY, box.maxY), typical: track.typicalHeight,
            known: known, acrossLines: alongRows == true)
        track.recordSize(box)
        let measured = Box(minX: width.low, minY: height.low, maxX: width.high, maxY: height.high)
        if width.complete {
            Self.measureSpeed(
                &track.velocityX, &track.measuredX, &track.anchorX, &track.originX, center: measured.centerX,
                extent: box.width,
                typical: track.typicalWidth, frame: frame)
        }
        if height.complete {
            Self.measureSpeed(
                &track.velocityY, &track.measuredY, &track.anchorY, &track.originY, center: measured.centerY,
                extent: box.height,
                typical: track.typicalHeight, frame: frame)
        }
        track.lastFrame = frame
        track.presentFrame = frame
        track.presentBox = measured
        track.lastSeen = time
        track.lastBox = measured
        if let direction = Track.scanDirection(detection) { track.readAlongRows = direction }
        track.readStraightened = detection.straightened
        if Track.showsExtent(box) { track.sawExtent = true }
        track.decodes += 1
        let key = Track.VoteKey(symbology: detection.symbology, value: detection.value)
        track.votes[key, default: 0] += 1
        let leaderVotes = track.votes[Track.VoteKey(symbology: track.symbology, value: track.value)] ?? 0
        if track.votes[key, default: 0] > leaderVotes {  // only the value just read can overtake
            track.value = detection.value
            track.symbology = detection.symbology
        }
        if track.matches(detection) {
            track.isGS1 = detection.isGS1
            if detection.addOn != nil { track.addOn = detection.addOn }
            track.printed = detection.printed
        }

        if !track.confirmed {
            guard track.decodes >= config.minDecodes, track.sawExtent else { return nil }
            confirm(&track)
            track.lastUpdateSent = time
            track.lastUpdateBox = box
            return .added(track)
        }
        if let sent = track.lastUpdateSent,
            time.milliseconds - sent.milliseconds < Int64(config.updateIntervalMilliseconds)
        {
            return nil
        }
        if track.lastUpdateBox == box { return nil }
        track.lastUpdateSent = time
        track.lastUpdateBox = box
        return .updated(track)
    }

    /// Two live tracks of one value whose boxes overlap are one code seen twice (a partial read
    /// at one end of a linear code started a track of its own): two physical codes never overlap
    /// in the image. The younger is folded into the older, so it never becomes a second sighting.
    private mutating func mergeDuplicates(into events: inout [TrackerEvent], frame: Int) {
        guard live.count > 1 else { return }
        var index = 0
        while index < live.count {
            var other = index + 1
            var absorbed = false
            while other < live.count {
                let a = live[index]
                let b = live[other]
                // Where each was last read, or, for a track kept by its region between reads,
                // where it is now.
                guard a.symbology == b.symbology, a.value == b.value, Self.samePlace(a, b, at: frame) else {
                    other += 1
                    continue
                }
                live[index] = fold(a, b, requireExtent: false, into: &events)
                live.remove(at: other)
                absorbed = true
            }
            if !absorbed { index += 1 }
        }
    }

    /// Whether two tracks of one value are where one code is: their boxes overlap, or one is a
    /// linear code read at one end only and the other's length covers that end.
    static func samePlace(_ a: Track, _ b: Track, at frame: Int) -> Bool {
        let boxA = a.place(at: frame)
        let boxB = b.place(at: frame)
        return boxA.intersectionOverUnion(boxB) > 0 || oneEnded(a, boxA, within: boxB)
            || oneEnded(b, boxB, within: boxA)
    }

    /// A read of another value is a misread of a track's code (a vote) only within this many
    /// frames of the track's last read: one frame may go unread between.
    static let misreadFrames = 2

    /// Lines across the scan within which a one-ended read and a whole one are one code.
    static let oneEndedLines = 12

    /// A code entering the view is sometimes read at one end only: every scan line that reads it
    /// finishes at the same place, so its box has no length along the lines (zbar reports where a
    /// line finished the code). Which lines read it wanders over the bars' height, so its box may
    /// sit a few lines beside the lines that later read the whole code. Such a track is the code
    /// whose length covers its end, when that code lies within `oneEndedLines` across the lines;
    /// two codes side by side never cover each other's ends (their quiet zones lie between).
    static func oneEnded(_ track: Track, _ box: Box, within other: Box) -> Bool {
        guard let alongRows = track.readAlongRows else { return false }
        let (length, start, end, otherStart, otherEnd) =
            alongRows
            ? (box.width, box.minX, box.maxX, other.minX, other.maxX)
            : (box.height, box.minY, box.maxY, other.minY, other.maxY)
        let (low, high, otherLow, otherHigh) =
            alongRows
            ? (box.minY, box.maxY, other.minY, other.maxY) : (box.minX, box.maxX, other.minX, other.maxX)
        guard length <= 2, start >= otherStart - 2, end <= otherEnd + 2 else { return false }
        return low <= otherHigh + oneEndedLines && high >= otherLow - oneEndedLines
    }

    /// Two tracks of one code become one: the confirmed is kept, else the older; the other is
    /// absorbed (`.merged` when it was confirmed), and the keeper confirms when the reads now
    /// suffice (with `requireExtent`, only if one of them showed more than a scan-line hit).
    private mutating func fold(_ a: Track, _ b: Track, requireExtent: Bool, into events: inout [TrackerEvent])
        -> Track
    {
        let keepFirst = a.confirmed != b.confirmed ? a.confirmed : a.serial < b.serial
        var keeper = keepFirst ? a : b
        let gone = keepFirst ? b : a
        Self.absorb(gone, into: &keeper)
        if gone.confirmed { events.append(.merged(gone, into: keeper.id)) }
        if !keeper.confirmed && keeper.decodes >= config.minDecodes && (!requireExtent || keeper.sawExtent) {
            confirm(&keeper)
            events.append(.added(keeper))
        }
        return keeper
    }

    private static func absorb(_ gone: Track, into keeper: inout Track) {
        keeper.decodes += gone.decodes
        for (key, count) in gone.votes { keeper.votes[key, default: 0] += count }
        // Ties go to the lexicographically smaller value, the same in every run.
        if let leader = keeper.votes.max(by: { a, b in
            a.value != b.value ? a.value < b.value : b.key.value.lexicographicallyPrecedes(a.key.value)
        }), leader.value > keeper.votes[Track.VoteKey(symbology: keeper.symbology, value: keeper.value), default: 0] {
            keeper.symbology = leader.key.symbology
            keeper.value = leader.key.value
        }
        if gone.firstFrame < keeper.firstFrame {
            keeper.firstFrame = gone.firstFrame
            keeper.firstSeen = gone.firstSeen
            keeper.firstBox = gone.firstBox
        }
        // As with the last read below: the keeper's place, the later frame.
        keeper.presentFrame = max(keeper.presentFrame, gone.presentFrame)
        if gone.lastFrame > keeper.lastFrame {
            keeper.lastFrame = gone.lastFrame
            keeper.lastSeen = gone.lastSeen
        }
        if gone.decodes > keeper.decodes - gone.decodes {
            // The absorbed track knew the code better (more reads): take its motion.
            keeper.velocityX = gone.velocityX
            keeper.velocityY = gone.velocityY
        }
    }

    /// Speed on one axis from a whole reading and the last whole reading before it. The anchor
    /// counts only if it, too, showed the code whole as its size is known now (the very first
    /// read may have shown one end).
    static func measureSpeed(
        _ velocity: inout Double, _ measuredBefore: inout Bool, _ anchor: inout Track.Anchor,
        _ origin: inout Track.Anchor?, center: Double, extent: Int, typical: Int, frame: Int
    ) {
        if frame > anchor.frame, anchor.extent * 10 >= typical * 8 {
            let speed = (center - anchor.center) / Double(frame - anchor.frame)
            velocity = measuredBefore ? 0.7 * velocity + 0.3 * speed : speed
            measuredBefore = true
        }
        anchor = Track.Anchor(center: center, extent: extent, frame: frame)
        // The first whole reading, as the code's size is known now (one that turns out to have
        // shown part of it is replaced).
        if origin.map({ $0.extent * 10 < typical * 8 }) ?? true { origin = anchor }
    }

    /// Pixels across a read that is one scan line or a few neighbouring ones.
    static let lineWidth = 4

    /// Where the code lies on one axis given what was seen on it; `acrossLines` when the axis
    /// runs across the scan lines that read it.
    static func axis(
        predicted: (low: Int, high: Int), seen: (low: Int, high: Int), typical: Int, known: Bool,
        acrossLines: Bool
    ) -> (low: Int, high: Int, complete: Bool) {
        let extent = seen.high - seen.low + 1
        if known && extent * 10 > typical * 16 { return (predicted.low, predicted.high, false) }
        // One scan line (or a few neighbouring ones) never shows a code's whole extent across the
        // lines, whatever the track's first reads made typical: lines read at different heights
        // are not motion.
        let line = acrossLines && extent <= lineWidth
        if !line && extent * 10 >= typical * 8 { return (seen.low, seen.high, true) }
        var shift = 0
        if seen.low < predicted.low { shift = seen.low - predicted.low }
        if seen.high > predicted.high { shift = seen.high - predicted.high }
        return (predicted.low + shift, predicted.high + shift, false)
    }

    /// How far from its predicted place a box may lie and still continue a track: a quarter of
    /// the code's size (at least `minimum`), more for fast codes and for each frame it was not seen.
    static func gate(size: Int, velocity: (Double, Double), frames: Int, minimum: Double) -> Double {
        let speed = (velocity.0 * velocity.0 + velocity.1 * velocity.1).squareRoot()
        return max(minimum, 0.25 * Double(size)) + (0.5 * speed + 2) * Double(frames)
    }

    /// Nearest first: the gap between the boxes, and a little of the distance between centres
    /// (to choose among boxes that all overlap the prediction).
    static func pairingCost(_ predicted: Box, _ box: Box, gap: Double) -> Double {
        let dx = box.centerX - predicted.centerX
        let dy = box.centerY - predicted.centerY
        return gap + 0.05 * (dx * dx + dy * dy).squareRoot()
    }

    /// Distance between two boxes' edges; 0 when they touch or overlap.
    static func gap(_ a: Box, _ b: Box) -> Double {
        let apart = a.gap(to: b)
        let dx = Double(max(0, apart.x))
        let dy = Double(max(0, apart.y))
        return (dx * dx + dy * dy).squareRoot()
    }
}
