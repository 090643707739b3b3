// Foundation for sin and cos.
import Foundation
import ScanCore

/// Follows code-like regions (the `CodeLocalizer`'s) across frames whether or not anything
/// decodes there, so that a label the camera sees but no engine can read still leaves a trace.
///
/// Each frame, every region continues the candidate whose predicted box it meets (nearest
/// first) or starts a new one. A candidate that a read of a confirmed track overlaps in any
/// frame (`read(_:by:)`) is decoded: that label was read. A region a read touches is first cut
/// (`split`): its unread part with modules (a DataMatrix beside a read EAN) is followed on its
/// own. A candidate that ends (not seen for `maxMissedFrames`) seen in at least `minFrames`
/// frames and never decoded is a no-read, with the reason it was not read (`NoReadReason`): one
/// only ever cut by the area's edge is `cut-by-edge` unless a track of a read code passed over
/// it (the end of a read label leaving the view) or it lay where a label seen whole was (that
/// label's end, read or not); one still in view when the stream ends or the
/// agent stops is reported then (`clip-ended`, `stopped`) if it was seen whole. Its image is kept
/// from its sharpest frame (most contrast between neighbouring pixels), with a margin, so that
/// someone can see why it failed.
/// Pure: the caller gives regions, where confirmed tracks were read, and the frame.
public struct CandidateTracker: Sendable {
    public var minFrames: Int
    public var maxMissedFrames: Int
    /// Pixels added around the region for the image.
    public var margin: Int = 24
    /// Images larger than this many pixels are halved until they fit (events stay small).
    public var maxImagePixels = 160_000
    public let idPrefix: String
    /// The families (linear, matrix) of the symbologies the camera is configured to read: a
    /// label that looks like another is `unconfigured-symbology` (empty: any).
    public var configuredFamilies: Set<CodeFamily> = []
    /// The widest gap between two pieces of one code, in pixels.
    static let maxPieceGap = 40
    /// Pixels a frame a region may move: faster is a jump to something else.
    static let maxSpeed = 60.0
    public private(set) var live: [Candidate] = []
    private var nextSerial = 0
    private var noReads = 0

    public init(minFrames: Int = 5, maxMissedFrames: Int = 10, idPrefix: String) {
        self.minFrames = max(1, minFrames)
        self.maxMissedFrames = max(0, maxMissedFrames)
        self.idPrefix = idPrefix
    }

    /// One followed region.
    public struct Candidate: Sendable, Equatable {
        let serial: Int
        public internal(set) var firstFrame: Int
        public internal(set) var lastFrame: Int
        public internal(set) var firstSeen: Timestamp
        public internal(set) var lastSeen: Timestamp
        /// Frames it was seen in.
        public internal(set) var frames: Int
        public internal(set) var firstBox: Box
        public internal(set) var lastBox: Box
        /// Pixels per frame, smoothed.
        var velocityX: Double = 0
        var velocityY: Double = 0
        var measured = false
        /// Frames its bars ran one way (linear) and frames its edges ran both ways (matrix).
        var linearVotes = 0
        var matrixVotes = 0
        /// A confirmed track overlapped it: the label was read.
        public internal(set) var decoded = false
        /// A read that was never confirmed overlapped it.
        var tentative = false
        /// A live confirmed track's place overlapped it (read or kept between reads).
        var nearTrack = false
        /// Where it was in its last frames seen, newest last: a read confirmed only when its
        /// track ended (`markDecoded(_:frame:)`) finds the candidate it lay on.
        var recent: [Sighted] = []
        /// Seen wholly inside the area (not cut by its edge) at least once.
        var sawWhole = false
        /// Its last whole view, and its speed then (before the edge cut it): where the whole
        /// label is later (`wholeBox(at:)`).
        var lastWhole: WholeView?
        /// Never whole, it lay where a label seen whole was then: a piece of that label (its end
        /// leaving the view), not a label along the edge.
        var withinWhole = false
        var sharpness: Double = -1
        var image: GrayImage?
        /// What the picture's frame showed of the region: why it was not read.
        var quality: LabelQuality?

        public var family: CodeFamily? {
            linearVotes == matrixVotes ? nil : (linearVotes > matrixVotes ? .linear : .matrix)
        }

        /// Speed from the edges that the area's border did not cut, in both boxes: a label
        /// entering or leaving the view grows or shrinks on one side only.
        mutating func measureMotion(to box: Box, frames: Int, area: Box) {
            let elapsed = Double(max(1, frames))
            let first = !measured
            let dx = CandidateTracker.shift(
                from: (lastBox.minX, lastBox.maxX), to: (box.minX, box.maxX), within: (area.minX, area.maxX))
            let dy = CandidateTracker.shift(
                from: (lastBox.minY, lastBox.maxY), to: (box.minY, box.maxY), within: (area.minY, area.maxY))
            let limit = CandidateTracker.maxSpeed
            if let dx {
                velocityX = CandidateTracker.smoothed(
                    velocityX, min(limit, max(-limit, Double(dx) / elapsed)), first: first)
            }
            if let dy {
                velocityY = CandidateTracker.smoothed(
                    velocityY, min(limit, max(-limit, Double(dy) / elapsed)), first: first)
            }
            if dx != nil || dy != nil { measured = true }
        }

        /// Where its last whole view would be in `frame`, moving as it moved then; nil: never whole.
        func wholeBox(at frame: Int) -> Box? {
            guard let whole = lastWhole else { return nil }
            let elapsed = Double(frame - whole.sighted.frame)
            return whole.sighted.box.offset(
                dx: Int((whole.velocityX * elapsed).rounded()), dy: Int((whole.velocityY * elapsed).rounded()))
        }

        /// Where it should be in `frame`, moving as it moved.
        public func predictedBox(at frame: Int) -> Box {
            let elapsed = Double(frame - lastFrame)
            return lastBox.offset(dx: Int((velocityX * elapsed).rounded()), dy: Int((velocityY * elapsed).rounded()))
        }

        struct Sighted: Sendable, Equatable {
            var frame: Int
            var box: Box
        }

        struct WholeView: Sendable, Equatable {
            var sighted: Sighted
            var velocityX: Double
            var velocityY: Double
        }

        mutating func remember(frame: Int, box: Box, keeping count: Int) {
            recent.append(Sighted(frame: frame, box: box))
            if recent.count > count { recent.removeFirst(recent.count - count) }
        }
    }

    /// A label seen but never decoded, as the tracker ends it.
    public struct NoRead: Sendable, Equatable {
        public var trackId: String
        public var firstFrame: Int
        public var lastFrame: Int
        public var firstSeen: Timestamp
        public var lastSeen: Timestamp
        public var frames: Int
        public var firstBox: Box
        public var lastBox: Box
        public var family: CodeFamily?
        /// The region with its margin from the sharpest frame.
        public var image: GrayImage?
        /// Mean contrast between neighbouring pixels in that image.
        public var sharpness: Double
        public var reason: NoReadReason
        /// The region in that frame measured: contrast, edges, pixels per module.
        public var quality: LabelQuality?
    }

    /// How a candidate's life ended.
    public enum Ending: Sendable {
        /// It left the view or was not seen for `maxMissedFrames`.
        case left
        /// The stream ended with it in view.
        case streamEnded
        /// The agent paused or stopped with it in view.
        case stopped
    }

    /// Advances by one frame. `regions`: the localiser's; `decoded`: where confirmed tracks were
    /// read in this frame; `tentative`: where tracks not (yet) confirmed were read; `tracked`:
    /// where live confirmed tracks are now, read or not; `area`: the part of the frame searched
    /// (a region touching its edge is cut); `image`: the frame, for the no-read's picture.
    /// Returns the no-reads that ended.
    public mutating func step(
        frame: Int, time: Timestamp, regions: [CodeLocalizer.Region], decoded: [Box], tentative: [Box] = [],
        tracked: [Box] = [], area: Box, image: GrayImage?
    ) -> [NoRead] {
        let split = Self.split(regions, decoded: decoded)
        let whole = Self.joined(split.read, image: image)
        let regions = whole + split.unread
        let reads = Reads(decoded: decoded, tentative: tentative, tracked: tracked)
        struct Pair {
            var candidate: Int
            var region: Int
            var cost: Double
        }
        var pairs: [Pair] = []
        for (c, candidate) in live.enumerated() {
            let predicted = candidate.predictedBox(at: frame)
            let gate = Tracker.gate(
                size: max(candidate.lastBox.width, candidate.lastBox.height),
                velocity: (candidate.velocityX, candidate.velocityY), frames: frame - candidate.lastFrame, minimum: 24)
            for (r, region) in regions.enumerated() {
                let gap = Tracker.gap(predicted, region.box)
                guard gap <= gate, Self.comparable(candidate.lastBox, region.box, area: area) else { continue }
                pairs.append(Pair(candidate: c, region: r, cost: Tracker.pairingCost(predicted, region.box, gap: gap)))
            }
        }
        pairs.sort { $0.cost < $1.cost }
        var candidateTaken = [Bool](repeating: false, count: live.count)
        var regionTaken = [Bool](repeating: false, count: regions.count)
        var paired: [(candidate: Int, region: CodeLocalizer.Region)] = []
        for pair in pairs where !candidateTaken[pair.candidate] && !regionTaken[pair.region] {
            candidateTaken[pair.candidate] = true
            regionTaken[pair.region] = true
            paired.append((pair.candidate, regions[pair.region]))
        }
        Self.absorbSplinters(into: &paired, from: whole, taken: &regionTaken, live: live, frame: frame)
        for (c, region) in paired {
            var candidate = live[c]
            candidate.measureMotion(to: region.box, frames: frame - candidate.lastFrame, area: area)
            candidate.lastFrame = frame
            candidate.lastSeen = time
            candidate.lastBox = region.box
            candidate.frames += 1
            observe(&candidate, region: region, frame: frame, reads: reads, area: area, image: image)
            live[c] = candidate
        }
        // A region more than one candidate met (two labels whose regions joined): the others
        // that it overlaps are still in view.
        for (c, candidate) in live.enumerated() where !candidateTaken[c] {
            let predicted = candidate.predictedBox(at: frame)
            if regions.contains(where: { $0.box.intersects(predicted) }) {
                candidateTaken[c] = true
                live[c].lastFrame = frame
                live[c].lastSeen = time
                live[c].lastBox = predicted
                live[c].remember(frame: frame, box: predicted, keeping: maxMissedFrames + 2)
                if Self.read(predicted, by: decoded) { live[c].decoded = true }
            }
        }
        // A piece cut by the edge where a label seen whole now is (within the widest gap between
        // two pieces of one code): that label's, leaving or coming in.
        for c in live.indices where !live[c].sawWhole && !live[c].withinWhole && live[c].lastFrame == frame {
            let piece = live[c].lastBox.widened(by: Self.maxPieceGap)
            live[c].withinWhole = live.indices.contains { other in
                other != c && live[other].wholeBox(at: frame)?.intersects(piece) == true
            }
        }
        var ended: [NoRead] = []
        var staying: [Candidate] = []
        for (c, candidate) in live.enumerated() {
            // Not seen, and where it should be is out of view: it has left, it is not hiding.
            let predicted = candidate.predictedBox(at: frame)
            let gone = !candidateTaken[c] && predicted.centreIsOutside(area)
            if !gone && frame - candidate.lastFrame <= maxMissedFrames {
                staying.append(candidate)
            } else if let noRead = noRead(candidate, ending: .left) {
                ended.append(noRead)
            }
        }
        live = staying
        for (r, region) in regions.enumerated() where !regionTaken[r] {
            var candidate = Candidate(
                serial: nextSerial, firstFrame: frame, lastFrame: frame, firstSeen: time, lastSeen: time, frames: 1,
                firstBox: region.box, lastBox: region.box)
            nextSerial += 1
            observe(&candidate, region: region, frame: frame, reads: reads, area: area, image: image)
            live.append(candidate)
        }
        return ended
    }

    /// A region of one label that the localiser split in two this frame (a faint or overexposed
    /// label's cells flicker in and out) is one candidate, not a second label beside it: an
    /// unpaired region, not cut by a read, lying mostly (half its area) where an unread candidate
    /// that took another region was expected, joins that region when the two together are no
    /// larger than the candidate's predicted box and a cell (32 px) around it. Else the piece
    /// left over starts a candidate of its own and, reported apart, becomes a second no-read for
    /// one label; and the candidate, left with the smaller piece, measures the change of shape
    /// as motion and loses the label. `whole`: the regions not cut by a read (their indices come
    /// first in `taken`).
    static func absorbSplinters(
        into paired: inout [(candidate: Int, region: CodeLocalizer.Region)], from whole: [CodeLocalizer.Region],
        taken: inout [Bool], live: [Candidate], frame: Int
    ) {
        for (r, splinter) in whole.enumerated() where !taken[r] {
            var best: (index: Int, overlap: Double)?
            for (p, pair) in paired.enumerated() where !live[pair.candidate].decoded {
                let predicted = live[pair.candidate].predictedBox(at: frame)
                guard predicted.covers(splinter.box, fraction: 0.5),
                    predicted.widened(by: 32).covers(pair.region.box.union(splinter.box), fraction: 1)
                else { continue }
                let overlap = predicted.intersectionOverUnion(splinter.box)
                if best.map({ overlap > $0.overlap }) ?? true { best = (p, overlap) }
            }
            guard let best else { continue }
            taken[r] = true
            paired[best.index].region = paired[best.index].region.joined(with: splinter)
        }
    }

    /// Ends every candidate (end of stream, pause, shutdown): each label still in view that was
    /// seen whole for `minFrames` and not read is a no-read now, with the reason `ending` gives.
    public mutating func finish(_ ending: Ending) -> [NoRead] {
        let ended = live.compactMap { candidate in candidate.sawWhole ? noRead(candidate, ending: ending) : nil }
        live.removeAll()
        return ended
    }

    /// Marks the candidates that one of `decoded` (confirmed tracks' reads in `frame`) overlaps
    /// where they were in that frame as read: for a track confirmed after that frame's step (in
    /// a later frame's, or when it ended).
    public mutating func markDecoded(_ decoded: [Box], frame: Int) {
        for index in live.indices {
            guard let seen = live[index].recent.last(where: { $0.frame == frame }) else { continue }
            if Self.read(seen.box, by: decoded) {
                live[index].decoded = true
            }
        }
    }

    /// The candidates seen in `frame`: their boxes and speeds (pixels a frame).
    public func seen(in frame: Int) -> [(box: Box, velocity: (Double, Double))] {
        live.filter { $0.lastFrame == frame && $0.frames > 1 }.map { ($0.lastBox, ($0.velocityX, $0.velocityY)) }
    }

    private mutating func noRead(_ candidate: Candidate, ending: Ending) -> NoRead? {
        // A label is seen in most frames of its pass; what flickers in and out is not one.
        let span = candidate.lastFrame - candidate.firstFrame + 1
        guard !candidate.decoded, candidate.frames >= minFrames, candidate.frames * 5 >= span * 3 else { return nil }
        let reason: NoReadReason
        switch ending {
        case .streamEnded: reason = .clipEnded
        case .stopped: reason = .stopped
        case .left:
            if candidate.sawWhole {
                reason =
                    candidate.tentative
                    ? .unconfirmed
                    : candidate.quality?.reason(family: candidate.family, configured: configuredFamilies) ?? .undecoded
            } else {
                // Never whole: a label along the edge, unless it was the end of a read code
                // (a track passed over it) or something was read on it.
                guard !candidate.nearTrack, !candidate.tentative, !candidate.withinWhole else { return nil }
                reason = .cutByEdge
            }
        }
        noReads += 1
        return NoRead(
            trackId: "\(idPrefix)-n\(noReads)", firstFrame: candidate.firstFrame, lastFrame: candidate.lastFrame,
            firstSeen: candidate.firstSeen, lastSeen: candidate.lastSeen, frames: candidate.frames,
            firstBox: candidate.firstBox, lastBox: candidate.lastBox, family: candidate.family,
            image: candidate.image, sharpness: max(0, candidate.sharpness), reason: reason, quality: candidate.quality)
    }

    /// What tracks read or hold in one frame (`step`).
    struct Reads {
        var decoded: [Box]
        var tentative: [Box]
        var tracked: [Box]
    }

    private func observe(
        _ candidate: inout Candidate, region: CodeLocalizer.Region, frame: Int, reads: Reads, area: Box,
        image: GrayImage?
    ) {
        let box = region.box
        candidate.remember(frame: frame, box: box, keeping: maxMissedFrames + 2)
        if Self.read(box, by: reads.decoded) { candidate.decoded = true }
        if Self.read(box, by: reads.tentative) { candidate.tentative = true }
        if reads.tracked.contains(where: { $0.intersects(box) }) { candidate.nearTrack = true }
        let across = min(region.rowCells, region.columnCells)
        let along = max(region.rowCells, region.columnCells)
        if across * 2 <= along { candidate.linearVotes += 1 } else { candidate.matrixVotes += 1 }
        let inside = box.minX > area.minX && box.minY > area.minY && box.maxX < area.maxX && box.maxY < area.maxY
        if inside {
            candidate.sawWhole = true
            candidate.lastWhole = Candidate.WholeView(
                sighted: Candidate.Sighted(frame: frame, box: box), velocityX: candidate.velocityX,
                velocityY: candidate.velocityY)
        }
        // Pictures only of whole views, and only while nothing has read it.
        guard inside, !candidate.decoded, let image else { return }
        let sharpness = Self.sharpness(image, in: box)
        guard sharpness > candidate.sharpness else { return }
        candidate.sharpness = sharpness
        guard let framed = box.widened(by: margin).clamped(to: image.bounds), framed.minX < framed.maxX,
            framed.minY < framed.maxY
        else { return }
        var picture = image.cropped(to: framed)
        while picture.width * picture.height > maxImagePixels && picture.width > 1 && picture.height > 1 {
            picture = picture.halved()
        }
        candidate.image = picture
        candidate.quality = LabelQuality.measure(image, in: box)
    }

    /// Whether one of `reads` lies on `box`: their overlap is at least a fifth of the smaller of
    /// the two. A read beside a region whose cells (32 pixels) reach a few pixels over it (an EAN
    /// under a long label's region) does not make that label read.
    static func read(_ box: Box, by reads: [Box]) -> Bool {
        reads.contains { lies($0, on: box) }
    }

    /// One read on one box: a fifth of either lies inside the other.
    static func lies(_ read: Box, on box: Box) -> Bool {
        box.covers(read, fraction: 0.2) || read.covers(box, fraction: 0.2)
    }

    /// Pixels around a read code's box that still belong to it (its human-readable line, quiet
    /// zone) when a region is cut into read and unread parts.
    static let readMargin = 16

    /// The localiser joins codes that stand close (an EAN and a DataMatrix beside it on one
    /// label) into one region, which the EAN's read would mark read. Each region that a read box
    /// (`decoded`, widened by `readMargin`) touches is cut: a group of cells that no read touches
    /// and that looks 2-D (modules, not the rest of a read code's bars) is `unread`, a region of
    /// its own; the other cells stay `read`.
    static func split(_ regions: [CodeLocalizer.Region], decoded: [Box]) -> (
        read: [CodeLocalizer.Region], unread: [CodeLocalizer.Region]
    ) {
        guard !decoded.isEmpty else { return (regions, []) }
        var read: [CodeLocalizer.Region] = []
        var unread: [CodeLocalizer.Region] = []
        for region in regions {
            let reads = decoded.filter { Self.lies($0, on: region.box) }
            guard !reads.isEmpty else {
                read.append(region)
                continue
            }
            let cut = region.cut(by: reads.map { $0.widened(by: readMargin) }) { $0.looksTwoDimensional }
            read += cut.rest
            unread += cut.free
        }
        return (read, unread)
    }

    /// Regions side by side in one row (or one above the other in one column) with a gap no wider
    /// than half their height (or width) are pieces of one code: a torn or smeared band through the
    /// bars cuts the localiser's region in two, and the label must stay one candidate.
    /// With the frame (`image`), pieces of a code turned to any angle are joined too
    /// (`piecesAtAnAngle`).
    public static func joined(_ regions: [CodeLocalizer.Region], image: GrayImage? = nil) -> [CodeLocalizer.Region] {
        var joined = regions
        var merged = true
        func pieces(_ a: CodeLocalizer.Region, _ b: CodeLocalizer.Region) -> Bool {
            if Self.pieces(a, b) { return true }
            guard let image else { return false }
            return Self.piecesAtAnAngle(a, b, in: image)
        }
        while merged && joined.count > 1 {
            merged = false
            search: for a in 0..<joined.count {
                for b in (a + 1)..<joined.count where pieces(joined[a], joined[b]) {
                    joined[a] = joined[a].joined(with: joined[b])
                    joined.remove(at: b)
                    merged = true
                    break search
                }
            }
        }
        return joined
    }

    /// Two regions that are pieces of one code: side by side along their bars' row (edges across
    /// rows: upright bars) or one above the other along a column (edges down columns), mostly
    /// overlapping across and close along, both 2-D or neither. Two upright labels one above the
    /// other are two codes.
    static func pieces(_ first: CodeLocalizer.Region, _ second: CodeLocalizer.Region) -> Bool {
        func overlap(_ lowA: Int, _ highA: Int, _ lowB: Int, _ highB: Int) -> Double {
            let shared = min(highA, highB) - max(lowA, lowB) + 1
            return shared <= 0 ? 0 : Double(shared) / Double(min(highA - lowA, highB - lowB) + 1)
        }
        // A torn 2-D code's pieces both look 2-D; a DataMatrix beside an EAN is two codes.
        guard first.looksTwoDimensional == second.looksTwoDimensional else { return false }
        let a = first.box
        let b = second.box
        let rows = first.rowCells + second.rowCells
        let columns = first.columnCells + second.columnCells
        let (gapX, gapY) = a.gap(to: b)
        // A tear is a band of a few modules; two labels stand further apart.
        let widest = Self.maxPieceGap
        if rows >= columns, overlap(a.minY, a.maxY, b.minY, b.maxY) >= 0.6, gapX <= min(a.height / 2, widest) {
            return true
        }
        if columns >= rows, overlap(a.minX, a.maxX, b.minX, b.maxX) >= 0.6, gapY <= min(a.width / 2, widest) {
            return true
        }
        return false
    }

    /// Two regions of bars that are pieces of one linear code turned to any angle (a tear across
    /// its bars at 30° makes two regions no row or column joins): both bars alone (gradients of one
    /// direction, `BarAxis.barsAlone`) running within 8° of one direction, one behind the other along the axis across
    /// the bars (their centres at most a quarter of the narrower one's breadth off that line), and
    /// no more than `maxPieceGap` apart along it. Two labels side by side on a box are beside each
    /// other, or further apart.
    static func piecesAtAnAngle(_ first: CodeLocalizer.Region, _ second: CodeLocalizer.Region, in image: GrayImage)
        -> Bool
    {
        // Bars at 30–60° cross rows and columns alike, so the cells look 2-D (`looksTwoDimensional`):
        // the gradients tell.
        let (gapX, gapY) = first.box.gap(to: second.box)
        guard max(gapX, gapY) <= maxPieceGap else { return false }
        guard let a = BarAxis.estimate(in: image, box: first.box), let b = BarAxis.estimate(in: image, box: second.box),
            a.coherence >= BarAxis.barsAlone, b.coherence >= BarAxis.barsAlone
        else { return false }
        var apart = abs(a.angle - b.angle)
        apart = min(apart, Double.pi - apart)
        guard apart <= 8 * Double.pi / 180 else { return false }
        let angle = a.angle + (b.angle - a.angle + (abs(a.angle - b.angle) > Double.pi / 2 ? Double.pi : 0)) / 2
        let (along, across) = ((cos(angle), sin(angle)), (-sin(angle), cos(angle)))
        func span(_ box: Box, _ axis: (Double, Double)) -> (low: Double, high: Double) {
            let corners = [(box.minX, box.minY), (box.maxX, box.minY), (box.minX, box.maxY), (box.maxX, box.maxY)]
            let projected = corners.map { Double($0.0) * axis.0 + Double($0.1) * axis.1 }
            return (projected.min() ?? 0, projected.max() ?? 0)
        }
        let (alongA, alongB) = (span(first.box, along), span(second.box, along))
        let (acrossA, acrossB) = (span(first.box, across), span(second.box, across))
        let gap = max(alongA.low, alongB.low) - min(alongA.high, alongB.high)
        let offset = abs((acrossA.low + acrossA.high) - (acrossB.low + acrossB.high)) / 2
        let breadth = min(acrossA.high - acrossA.low, acrossB.high - acrossB.low)
        return gap <= Double(maxPieceGap) && offset <= breadth / 4
    }

    /// Mean absolute difference between horizontally and vertically neighbouring pixels (every
    /// second row and column): high for a focused label, low for a blurred one.
    public static func sharpness(_ image: GrayImage, in box: Box) -> Double {
        let clipped = Box(
            minX: max(0, box.minX), minY: max(0, box.minY), maxX: min(image.width - 2, box.maxX),
            maxY: min(image.height - 2, box.maxY))
        guard clipped.minX <= clipped.maxX, clipped.minY <= clipped.maxY else { return 0 }
        var total = 0
        var count = 0
        image.pixels.withUnsafeBufferPointer { pixels in
            for y in stride(from: clipped.minY, through: clipped.maxY, by: 2) {
                let row = y * image.width
                for x in stride(from: clipped.minX, through: clipped.maxX, by: 2) {
                    let here = Int(pixels[row + x])
                    total += abs(Int(pixels[row + x + 1]) - here) + abs(Int(pixels[row + image.width + x]) - here)
                    count += 1
                }
            }
        }
        return count == 0 ? 0 : Double(total) / Double(count)
    }

    static func smoothed(_ velocity: Double, _ speed: Double, first: Bool) -> Double {
        first ? speed : 0.7 * velocity + 0.3 * speed
    }

    /// How far a box moved along one axis, from the ends the border did not cut in either view
    /// (their mean when both agree within 16 px, else the smaller move); nil when both were cut.
    static func shift(from old: (Int, Int), to new: (Int, Int), within border: (Int, Int)) -> Int? {
        var moves: [Int] = []
        if old.0 > border.0 && new.0 > border.0 { moves.append(new.0 - old.0) }
        if old.1 < border.1 && new.1 < border.1 { moves.append(new.1 - old.1) }
        guard let first = moves.first else { return nil }
        guard moves.count == 2 else { return first }
        return abs(moves[0] - moves[1]) <= 16
            ? (moves[0] + moves[1]) / 2 : (abs(moves[0]) < abs(moves[1]) ? moves[0] : moves[1])
    }

    /// Whether a region can be the same code as a candidate's last box: sizes within a factor of
    /// 2.5 on each axis the area's border cuts in neither.
    static func comparable(_ a: Box, _ b: Box, area: Box) -> Bool {
        func similar(_ x: Int, _ y: Int) -> Bool { x * 5 >= y * 2 && y * 5 >= x * 2 }
        let cutX = a.minX <= area.minX || a.maxX >= area.maxX || b.minX <= area.minX || b.maxX >= area.maxX
        let cutY = a.minY <= area.minY || a.maxY >= area.maxY || b.minY <= area.minY || b.maxY >= area.maxY
        return (cutX || similar(a.width, b.width)) && (cutY || similar(a.height, b.height))
    }
}
