import ScanCore

/// Where to decode in a frame, and how densely: tracking-guided decoding.
///
/// On a conveyor almost every code in a frame is already tracked, and the tracker knows where it
/// will be. So instead of scanning the whole frame:
/// - **tracked**: every live track (tentative ones too, so they confirm on the next frame) is
///   decoded where the tracker predicts it, with a margin for the prediction's error; a linear code
///   read along rows only needs rows;
/// - **discovery**: code-like regions found by the `CodeLocalizer` that no tracked region covers
///   (a label entering the view, or placed by hand in the middle of it) are decoded with lines
///   across the edges the localiser saw there (both ways for a 2-D code);
/// - **sweep**: the region of interest is also cut into `sweepFrames` stripes, one decoded per
///   frame, so that a code the localiser misses is still found within that many frames (columns
///   reach into the next stripe, so that a code standing upright lies whole in one).
/// Overlapping regions of the same kind are joined (one code is never cut between two of them).
/// Pure: the caller gives the frame's size, the tracks and the localiser's regions.
public struct DecodePlanner: Sendable {
    public var config: DecoderConfig

    public init(config: DecoderConfig) {
        self.config = config
    }

    /// What the planner knows about a live track.
    public struct TrackedCode: Sendable, Equatable {
        public var symbology: Symbology
        public var value: [UInt8]
        /// Where the tracker predicts the code in this frame.
        public var box: Box
        /// The code's usual size (a partial read gives a smaller box).
        public var typicalWidth: Int
        public var typicalHeight: Int
        /// Pixels per frame.
        public var velocityX: Double
        public var velocityY: Double
        /// How its linear reads ran: true along rows, false down columns, nil unknown or 2-D.
        public var readAlongRows: Bool?
        public var confirmed: Bool
        /// Frames since it was last decoded (1: in the previous frame).
        public var framesSinceRead: Int
        /// Last read on a view straightened along its bars (`Detection.straightened`).
        public var straightened: Bool

        public init(
            symbology: Symbology, value: [UInt8], box: Box, typicalWidth: Int, typicalHeight: Int, velocityX: Double,
            velocityY: Double, readAlongRows: Bool?, confirmed: Bool, framesSinceRead: Int = 1,
            straightened: Bool = false
        ) {
            self.straightened = straightened
            self.symbology = symbology
            self.value = value
            self.box = box
            self.typicalWidth = typicalWidth
            self.typicalHeight = typicalHeight
            self.velocityX = velocityX
            self.velocityY = velocityY
            self.readAlongRows = readAlongRows
            self.confirmed = confirmed
            self.framesSinceRead = framesSinceRead
        }
    }

    /// `straightened`: a tracked linear code at a steep angle, read along its bars
    /// (`ZBarFrameDecoder.readAngled`); no row or column of the frame is scanned for it.
    public enum Purpose: String, Sendable, Equatable {
        case tracked, straightened, discovery, sweep, whole
    }

    /// One region to decode: zbar scans rows every `rowStep` pixels and columns every
    /// `columnStep` (0: not at all).
    public struct Region: Sendable, Equatable {
        public var box: Box
        public var purpose: Purpose
        public var rowStep: Int
        public var columnStep: Int
        /// The tracked codes this region was planned for (indexes into the plan's input).
        public var tracks: [Int]

        public init(box: Box, purpose: Purpose, rowStep: Int, columnStep: Int, tracks: [Int] = []) {
            self.box = box
            self.purpose = purpose
            self.rowStep = rowStep
            self.columnStep = columnStep
            self.tracks = tracks
        }

        /// Pixels zbar walks: the scan lines' total length.
        public var scannedPixels: Int {
            (rowStep > 0 ? (box.height + rowStep - 1) / rowStep * box.width : 0)
                + (columnStep > 0 ? (box.width + columnStep - 1) / columnStep * box.height : 0)
        }
    }

    /// The regions to decode in frame `frame` (its index drives the sweep's stripe).
    public func plan(
        frame: Int, width: Int, height: Int, tracks: [TrackedCode], candidates: [CodeLocalizer.Region]
    ) -> [Region] {
        let area = config.regionOfInterest.pixels(width: width, height: height)
        let density = max(1, config.density)
        guard config.mode == .guided else {
            return [Region(box: area, purpose: .whole, rowStep: density, columnStep: density)]
        }
        var tracked: [Region] = []
        var straightened: [Region] = []
        for (index, track) in tracks.enumerated() {
            // The code's usual size around the predicted centre, plus a margin for the prediction's
            // error (it grows with speed) and for the quiet zone zbar needs around a linear code.
            let halfWidth = Double(max(track.box.width, track.typicalWidth)) / 2
            let halfHeight = Double(max(track.box.height, track.typicalHeight)) / 2
            // A linear code at a steep angle is read along its bars where it is predicted (the
            // view adds its quiet zones); its bounding box, scanned on rows and columns, read
            // nothing and joined its neighbours' into regions as large as the frame.
            if track.straightened && track.symbology.isLinear {
                let margin = 8 + 2 * max(abs(track.velocityX), abs(track.velocityY))
                let box = Box(
                    minX: Int(track.box.centerX - halfWidth - margin),
                    minY: Int(track.box.centerY - halfHeight - margin),
                    maxX: Int(track.box.centerX + halfWidth + margin),
                    maxY: Int(track.box.centerY + halfHeight + margin))
                if let clipped = box.clamped(to: area) {
                    straightened.append(
                        Region(box: clipped, purpose: .straightened, rowStep: 0, columnStep: 0, tracks: [index]))
                }
                continue
            }
            // A linear code read along rows needs its quiet zone left and right, but across the
            // bars only the prediction's error: rows beyond its bars read nothing.
            // A thin line of points is a read at one end: along rows when it is a column.
            let thin: Bool? = track.box.width <= 4 ? true : track.box.height <= 4 ? false : nil
            let direction = track.readAlongRows ?? thin
            let rows = track.symbology.isLinear && direction == true
            let columns = track.symbology.isLinear && direction == false
            // Reads at one end only (a label entering the view) leave the extent along the lines
            // unknown: look as far as codes are usually long (rarely over five times their height).
            let alongUnknown = rows ? halfWidth < halfHeight : columns ? halfHeight < halfWidth : false
            let reach = alongUnknown ? 10 * max(halfWidth, halfHeight) : 0
            let marginX = (columns ? 8 : max(0.5 * halfWidth + 16, reach)) + 2 * abs(track.velocityX)
            let marginY = (rows ? 8 : max(0.5 * halfHeight + 16, reach)) + 2 * abs(track.velocityY)
            let box = Box(
                minX: Int(track.box.centerX - halfWidth - marginX), minY: Int(track.box.centerY - halfHeight - marginY),
                maxX: Int(track.box.centerX + halfWidth + marginX), maxY: Int(track.box.centerY + halfHeight + marginY))
            guard let clipped = box.clamped(to: area) else { continue }
            // A linear code read along rows is read again along rows, on fewer lines than a
            // search needs while it keeps being read; at the search density once it was missed
            // (blur, glare, a code that decodes on few lines). Anything else is scanned both ways.
            let step = rows || columns ? (track.framesSinceRead > 1 ? density : max(1, config.trackedDensity)) : density
            tracked.append(
                Region(
                    box: clipped, purpose: .tracked, rowStep: columns ? 0 : step, columnStep: rows ? 0 : step,
                    tracks: [index]))
        }
        tracked = Self.joinOverlapping(tracked)
        var regions = tracked + straightened
        // Discovery: what the localiser saw that no tracked region holds.
        var discovery: [Region] = []
        for candidate in candidates {
            // Lines across the edges the localiser saw: a linear code's bars cross one direction
            // (a few cells of its text the other); a 2-D code's modules cross both.
            let rows = candidate.rowCells * 4 >= candidate.columnCells
            let columns = candidate.columnCells * 4 >= candidate.rowCells
            // Mostly inside a tracked region that scans the way the candidate would be scanned:
            // that code (its human-readable text, its quiet zone). A 2-D code beside a linear one
            // (edges both ways) in a region scanned along rows only is not covered: zbar finds QR
            // only with lines both ways. A few cells of edges down columns on a label read along
            // rows (its text, a logo) are not a 2-D code: the search would scan rows only there,
            // which the tracked regions do already (at 4K such labels were searched every frame).
            // Several tracked regions together count: the localiser sees a label with an SSCC
            // above an EAN-13 as one region, and the tracker plans one region for each code
            // (the joined tracked regions do not overlap, so their shares add up). Bars (edges one
            // way) in a region planned for 2-D codes alone are not those codes: a label beside a
            // DataMatrix, whose region zbar does not scan (zxing-cpp reads it).
            let candidateArea = Double(candidate.box.width * candidate.box.height)
            let inTracked = tracked.filter { region in
                (!rows || region.rowStep > 0) && (!columns || region.columnStep > 0)
                    && (rows && columns || region.tracks.contains { tracks[$0].symbology.isLinear })
            }
            .compactMap { candidate.box.clamped(to: $0.box) }
            .reduce(0.0) { $0 + Double($1.width * $1.height) }
            // Where an angled code is read along its bars, what the localiser sees may be another
            // code (an item put down in its place): it is searched as any other (the decoder
            // does not scan a region of steep bars on rows and columns, `ZBarFrameDecoder.steep`).
            let covered = inTracked >= 0.5 * candidateArea
            guard !covered else { continue }
            // The localiser's cells may cut a code's quiet zone or its last modules.
            let marginX = 16 + candidate.box.width / 10
            let marginY = 16 + candidate.box.height / 10
            guard let clipped = candidate.box.widened(x: marginX, y: marginY).clamped(to: area) else { continue }
            discovery.append(
                Region(
                    box: clipped, purpose: .discovery, rowStep: rows ? density : 0, columnStep: columns ? density : 0))
        }
        regions += Self.joinOverlapping(discovery)
        // The sweep: stripe `frame % sweepFrames` of the area. A row crosses a code lying along
        // rows wholly wherever it cuts it, so rows scan the stripe alone; a column must cross a code
        // lying along columns from end to end, so columns scan the stripe and the next `sweepOverlap`
        // pixels (the tallest such code that must lie whole in one stripe).
        if config.sweepFrames > 0 {
            let step = max(density, config.sweepDensity)
            if let rows = Self.stripe(frame, of: config.sweepFrames, in: area), rows.height > 1 {
                let columns = Box(
                    minX: rows.minX, minY: rows.minY, maxX: rows.maxX,
                    maxY: min(area.maxY, rows.maxY + config.sweepOverlap))
                regions.append(Region(box: rows, purpose: .sweep, rowStep: step, columnStep: 0))
                regions.append(Region(box: columns, purpose: .sweep, rowStep: 0, columnStep: step))
            }
        }
        return regions
    }

    /// Stripe `index % count` of `area` cut into `count` stripes of equal height, top first; nil
    /// when the area is too short to have that stripe.
    public static func stripe(_ index: Int, of count: Int, in area: Box) -> Box? {
        let height = (area.height + count - 1) / count
        let top = area.minY + (index % count) * height
        guard top <= area.maxY else { return nil }
        return Box(minX: area.minX, minY: top, maxX: area.maxX, maxY: min(area.maxY, top + height - 1))
    }

    /// Joins regions whose boxes overlap, until none do; the joined region scans as densely as
    /// the densest of its parts, in every direction any of them scanned.
    public static func joinOverlapping(_ input: [Region]) -> [Region] {
        var regions = input
        var changed = true
        while changed {
            changed = false
            outer: for i in regions.indices {
                for j in regions.indices where j > i && regions[i].box.intersects(regions[j].box) {
                    let a = regions[i]
                    let b = regions[j]
                    regions[i] = Region(
                        box: a.box.union(b.box), purpose: a.purpose, rowStep: Self.finer(a.rowStep, b.rowStep),
                        columnStep: Self.finer(a.columnStep, b.columnStep), tracks: a.tracks + b.tracks)
                    regions.remove(at: j)
                    changed = true
                    break outer
                }
            }
        }
        return regions
    }

    /// The finer of two scan steps, where 0 means "no lines in this direction".
    static func finer(_ a: Int, _ b: Int) -> Int {
        if a == 0 { return b }
        if b == 0 { return a }
        return min(a, b)
    }
}
