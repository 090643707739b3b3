import ScanCore
import ScanVision

/// A camera's decoder: its own zbar scanner set up from the agent's `decoder` config, and the
/// region of interest cut out of each frame before scanning.
public final class ZBarFrameDecoder {
    public let config: DecoderConfig
    private let scanner: ZBarScanner
    private let splitter: DetectionSplitter
    private var crop: [UInt8] = []
    /// Split parts that a rescan of their own region did not confirm (zbar phantoms).
    public private(set) var rejectedParts = 0
    /// Rescans made to check parts.
    public private(set) var rescans = 0
    /// Codes a rescan read in the last few frames, where the rescan found them: a part of the same
    /// value right there is the same code moved on, and needs no rescan of its own. Only rescans
    /// add entries, so an accepted part never vouches for the next one.
    private var recentlyConfirmed: [(value: [UInt8], box: Box, frame: Int)] = []
    private var frameCount = 0
    /// Codes read at an angle in the last frames: their axis, with the bars' rectangle centred
    /// where the read lay. A tracked one is straightened on that again, without the gradients'
    /// pass (a parcel on a belt does not turn between frames); where that reads nothing, the axis
    /// is found afresh.
    private var angledMemory: [(value: [UInt8], axis: BarAxis, frame: Int)] = []
    private var angledFrames = 0
    /// Frames a remembered axis is used for after its code's last read.
    static let angledMemoryFrames = 2
    /// EAN/UPC values read at an angle without an add-on: how often a longer view looked for one
    /// (`addOnView`), and in which frame last; `Int.max` looks once one was found.
    private var addOnLooks: [[UInt8]: (looks: Int, frame: Int)] = [:]
    /// Looks for a value's add-on, at most one every `addOnLookSpacing` frames: enough for a
    /// label whose supplement comes into view after its main code, few for the many without one.
    static let addOnLooksPerValue = 4
    static let addOnLookSpacing = 3
    /// A value not read at an angle for this many frames is forgotten (its label has gone).
    static let addOnMemoryFrames = 30

    /// `testInverted`: also read light codes on a dark ground (still images; costs a second pass).
    public init(config: DecoderConfig, testInverted: Bool = false) throws(ZBarError) {
        self.config = config
        let settings = ZBarSettings(
            symbologies: config.zbarSymbologies, density: config.density, testInverted: testInverted)
        self.scanner = try ZBarScanner(settings: settings)
        self.splitter = DetectionSplitter(density: config.density)
    }

    /// Linear codes lying off the frame's rows and columns, which no scan line of `decode` crosses
    /// whole: each of `regions` whose gradients show bars (`BarAxis`) at more than `minDegrees`
    /// from both is straightened along its axis (`StraightenedView`) and scanned along the view's
    /// rows by a fresh scanner (nothing carried from one region to the next); what it reads on at
    /// least two lines is kept, its points taken back to the frame (`Detection.straightened`).
    /// `tracked`: where the tracker expects codes it last read this way, and their values: each
    /// is read unless a read of its value lies there already. Then `regions` (the localiser's),
    /// at most `limit` of them, the largest first, skipping those a detection of `read` or one
    /// just found touches (their code is read).
    /// `secondEngine`: another engine's reads of a view, in its coordinates (zxing-cpp), asked on
    /// the finer views only (small modules), where zbar alone misreads: see `crossChecked`.
    public func readAngled(
        _ frame: GrayImage, regions: [Box], tracked: [(box: Box, value: [UInt8])] = [], besides read: [Detection],
        minDegrees: Double = 8, limit: Int = 8, secondEngine: ((GrayImage) -> [Detection])? = nil
    ) throws(ZBarError) -> [Detection] {
        let linear = config.zbarSymbologies.filter(\.isLinear)
        guard !linear.isEmpty else { return [] }
        // Every line of a view that holds every second line of the turned region.
        let settings = ZBarSettings(symbologies: linear, density: 1, rowStep: 1, columnStep: 0)
        var found: [Detection] = []
        angledFrames += 1
        angledMemory.removeAll { angledFrames - $0.frame > Self.angledMemoryFrames }
        addOnLooks = addOnLooks.filter { angledFrames - $0.value.frame <= Self.addOnMemoryFrames }
        let addOnsConfigured = linear.contains(.ean2) || linear.contains(.ean5)
        func touches(_ detection: Detection, _ box: Box) -> Bool {
            detection.box.map { $0.intersectionOverUnion(box) > 0 } ?? false
        }
        /// Whether a remembered rectangle's middle lies in `box`.
        func centred(_ entry: (value: [UInt8], axis: BarAxis, frame: Int), in box: Box) -> Bool {
            guard let bars = entry.axis.extent else { return false }
            return Double(box.minX) <= bars.centerX && bars.centerX <= Double(box.maxX)
                && Double(box.minY) <= bars.centerY && bars.centerY <= Double(box.maxY)
        }
        func atFrameEdge(_ box: Box) -> Bool {
            box.minX <= 1 || box.minY <= 1 || box.maxX >= frame.width - 2 || box.maxY >= frame.height - 2
        }
        /// False when the region was not worth a view (no bars, or square at the frame's edge).
        @discardableResult
        func straighten(_ box: Box, lineSpacing: Int, expected: [UInt8]? = nil) throws(ZBarError) -> Bool {
            // A tracked code read at an angle lately: its axis and rectangle as they were,
            // centred where the tracker expects it now (the planner's box is centred there).
            if let expected,
                let remembered = angledMemory.last(where: { $0.value == expected && centred($0, in: box) }),
                var bars = remembered.axis.extent
            {
                var axis = remembered.axis
                bars.centerX = box.centerX
                bars.centerY = box.centerY
                axis.extent = bars
                if try views(along: axis, box: box, lineSpacing: lineSpacing, expected: expected) { return true }
            }
            // The bars looked for a localiser cell beyond the box: its cells at a code's ends
            // can hold too few bars to count, and a view that cuts an EAN's end is a view
            // zxing-cpp makes the missing half up on (at 1 px a module, a valid wrong value).
            guard
                let axis = BarAxis.estimate(
                    in: frame, box: box, withExtent: true, extentMargin: CodeLocalizer.defaultCell),
                axis.coherence >= BarAxis.barCoherence
            else { return false }
            // The bars cut by the frame's edge: no line crosses the code whole.
            guard axis.extent?.cut != true else { return false }
            // One view pixel a frame pixel first; where that reads nothing (small modules: at 1.25
            // px a module the bilinear samples blur neighbouring bars together), a finer view, two
            // samples a pixel along the axis, each the mean of three lines along the bars. A code
            // square to the frame has had its one-pixel look: the frame's own rows and columns.
            // At the frame's edge the code is most likely cut by it: not worth the finer look.
            guard !(axis.degreesOffGrid <= minDegrees && atFrameEdge(box)) else { return false }
            _ = try views(along: axis, box: box, lineSpacing: lineSpacing, expected: expected)
            return true
        }
        /// Views of `box` along `axis` (one pixel a frame pixel, then finer; a code square to the
        /// frame the finer alone); true when one read a code. The codes read join `found`.
        func views(along axis: BarAxis, box: Box, lineSpacing: Int, expected: [UInt8]?) throws(ZBarError) -> Bool {
            let square = axis.degreesOffGrid <= minDegrees
            let atEdge = atFrameEdge(box)
            // A code square to the frame fills its box as the box lies: the box turned a few
            // degrees is the view (the bars' extent saves little there, and on long GS1-128
            // labels at 1.5 px a module beside an EAN it read fewer of them).
            var viewAxis = axis
            if square { viewAxis.extent = nil }
            for (samples, averaged) in square ? [(2, 3)] : [(1, 1), (2, 3)] {
                let view = StraightenedView(
                    of: frame, box: box, axis: viewAxis, margin: 12, lineSpacing: lineSpacing,
                    samplesPerPixel: samples, averaged: averaged)
                let reads = Self.mergeSameValue(try ZBarScanner(settings: settings).scan(view.image)).filter { read in
                    // zbar joins EAN/UPC halves from different lines: at small modules a misread
                    // left half with a good right half can hold the check digit. In the view the
                    // bars stand upright, so the halves' geometry is checked as on the frame's
                    // rows; a read whose halves are not both seen stands only for the code tracked
                    // there.
                    guard Self.phantomProne(read.symbology) else { return true }
                    let fits = Self.verifierSplitter.eanExtent(read)?.fits ?? (read.value == expected)
                    if !fits { rejectedParts += 1 }
                    return fits
                }
                var any = false
                // ITF has no check character: in the finer view, blurred bars of another code
                // (an EAN-13 at 1.25 px a module) read as ITF on a few lines; a code that is ITF
                // reads on most of the view's lines.
                var kept = Self.attachAddOns(reads).filter {
                    $0.points.count >= (samples > 1 && $0.truncationProne ? 5 : 2)
                }
                if samples > 1, let secondEngine {
                    kept = Self.crossChecked(kept, secondEngine(view.image), atEdge: atEdge)
                }
                for read in kept {
                    var moved = read
                    if addOnsConfigured && !square && read.addOn == nil && Self.phantomProne(read.symbology) {
                        moved.addOn = try addOn(
                            of: read, axis: axis, box: box, lineSpacing: lineSpacing, samples: samples,
                            averaged: averaged)
                    }
                    moved.points = read.points.map(view.frameLocation)
                    moved.alongRows = nil
                    moved.straightened = true
                    any = true
                    if !found.contains(where: { $0.isSameCode(as: moved) }) { found.append(moved) }
                    // Remembered with its rectangle where this read lies (the tracker's box of
                    // it is centred there too).
                    if var bars = axis.extent, let spot = moved.box {
                        // The same code's older entry gives way (an identical label elsewhere
                        // keeps its own).
                        let near = spot.widened(by: CodeLocalizer.defaultCell)
                        angledMemory.removeAll { $0.value == moved.value && centred($0, in: near) }
                        bars.centerX = spot.centerX
                        bars.centerY = spot.centerY
                        var remembered = axis
                        remembered.extent = bars
                        angledMemory.append((moved.value, remembered, angledFrames))
                    }
                }
                if any { return true }
            }
            return false
        }
        /// The supplement of an EAN/UPC read at an angle without one: the bars' rectangle ends
        /// with the main code (a supplement lies 7 to 12 modules on, a gap the extent does not
        /// bridge), so a view of the same lines reaching 0.7 of the code's length past either end
        /// (an EAN-5 with its gap and quiet zone is 0.64) is read for it. Few looks a value
        /// (`addOnLooks`); one found ends them (the tracker keeps a track's add-on).
        func addOn(
            of read: Detection, axis: BarAxis, box: Box, lineSpacing: Int, samples: Int, averaged: Int
        ) throws(ZBarError) -> String? {
            let record = addOnLooks[read.value] ?? (looks: 0, frame: Int.min / 2)
            guard record.looks < Self.addOnLooksPerValue, angledFrames - record.frame >= Self.addOnLookSpacing,
                var bars = axis.extent
            else { return nil }
            bars.halfAlong *= 2.4
            var long = axis
            long.extent = bars
            let view = StraightenedView(
                of: frame, box: box, axis: long, margin: 12, lineSpacing: lineSpacing, samplesPerPixel: samples,
                averaged: averaged)
            let reads = Self.attachAddOns(Self.mergeSameValue(try ZBarScanner(settings: settings).scan(view.image)))
            let found = reads.first { $0.value == read.value && $0.addOn != nil }?.addOn
            addOnLooks[read.value] = (found == nil ? record.looks + 1 : Int.max, angledFrames)
            return found
        }
        for (box, value) in tracked where !(read + found).contains(where: { $0.value == value && touches($0, box) }) {
            try straighten(box, lineSpacing: 4, expected: value)
        }
        // A truncation-prone read (ITF) does not make its region read: at an angle it may be a
        // part of the code, and the straightened view reads it whole (`withoutTruncatedReads`
        // then drops the part).
        let unread = regions.filter { box in !read.contains { !$0.truncationProne && touches($0, box) } }
        // The limit counts views made: regions a tracked code was just read on, or with no bars,
        // do not use it up (at 4K, 40 labels at an angle come into view at once).
        var views = 0
        for box in unread.sorted(by: { $0.width * $0.height > $1.width * $1.height }) where views < limit {
            guard !found.contains(where: { !$0.truncationProne && touches($0, box) }) else { continue }
            if try straighten(box, lineSpacing: 2) { views += 1 }
        }
        return found
    }

    /// zbar's reads of a fine view beside a second engine's of the same view. At 1.25 px a module,
    /// under noise, zbar can read an EAN-13 wrongly on most of a view's lines, its check digit
    /// holding (two left-half digits and the parity that gives the first one), where zxing-cpp reads
    /// the same view right; at 1 px zxing-cpp too reads a wrong value on some lines beside the
    /// right one. The view's bars stand upright, so reads whose spans along its rows overlap are of
    /// one code: EAN/UPC reads there of more than one value, by either engine, are all dropped (the
    /// code waits for a frame that reads it one way). The other engine's other reads of checked
    /// symbologies are added (not ITF: no check character, blurred bars read as ITF there), but
    /// not its EAN/UPC reads of a region at the frame's edge: there zxing-cpp reads a label cut by
    /// the edge as a valid value, its right half whole and the left one made up.
    static func crossChecked(_ zbar: [Detection], _ other: [Detection], atEdge: Bool) -> [Detection] {
        var all = zbar
        for read in other where !read.truncationProne && !all.contains(where: { $0.value == read.value }) {
            if atEdge && phantomProne(read.symbology) { continue }
            all.append(read)
        }
        func span(_ read: Detection) -> ClosedRange<Int>? { read.box.map { $0.minX...$0.maxX } }
        // Every EAN/UPC read of the view by either engine, with its span, once.
        let retail: [(value: [UInt8], span: ClosedRange<Int>)] = (zbar + other).compactMap { read in
            guard phantomProne(read.symbology), let there = span(read) else { return nil }
            return (read.value, there)
        }
        return all.filter { read in
            guard phantomProne(read.symbology), let here = span(read) else { return true }
            return !retail.contains { $0.value != read.value && here.overlaps($0.span) }
        }
    }

    /// Whether zbar decodes the symbology (zbar 0.23 lists PDF417 but cannot decode it).
    public static func reads(_ symbology: Symbology) -> Bool {
        symbology != .pdf417 && symbology != .sqCode && ZBarSymbologyMap.zbarType(symbology) != nil
    }

    /// Every physical symbol in the frame's region of interest, in frame coordinates: zbar's merged
    /// symbols are split into one detection per code, and EAN/UPC parts are verified.
    public func decode(_ frame: GrayImage) throws(ZBarError) -> [Detection] {
        let raw: [Detection]
        let region = config.regionOfInterest
        if region.isWholeFrame {
            raw = try scanner.scan(frame)
        } else {
            let box = region.pixels(width: frame.width, height: frame.height)
            raw = try scanner.scan(cut(frame, box), origin: Point(x: box.minX, y: box.minY))
        }
        frameCount += 1
        recentlyConfirmed.removeAll { frameCount - $0.frame > 3 }
        return try Self.attachAddOns(verified(raw, in: frame, splitter: splitter, vouchers: []))
    }

    /// Tracking-guided decoding: each planned region is scanned by a fresh scanner of its own
    /// (zbar carries half-codes from one image to the next, so a region's result must not depend
    /// on what was scanned before it), `threads` regions at a time. Parts are then split, checked
    /// and merged in region order on the calling thread, so the result is the same for any number
    /// of threads. A code read in several regions is reported once, from the first.
    /// `readElsewhere`: indexes of regions another engine has read; they are not scanned, but a
    /// tracked one still marks what lies in it as that track's code (a fragment of it read by
    /// another region is not a new code). A tracked region of codes zbar does not read alone (a
    /// DataMatrix) is not scanned either: zxing-cpp reads those, and a linear code coming into
    /// such a region gets a discovery region of its own (`DecodePlanner`). At 4K zbar's scans of
    /// DataMatrix regions took 3.7 ms a frame and could find nothing of their codes.
    public func decode(
        _ frame: GrayImage, regions: [DecodePlanner.Region], tracks: [DecodePlanner.TrackedCode], threads: Int,
        readElsewhere: Set<Int> = []
    ) throws(ZBarError) -> [Detection] {
        let symbologies = config.zbarSymbologies
        let scanned = ParallelWork.map(Array(regions.enumerated()), threads: threads) {
            item -> Result<[Detection], ZBarError> in
            let (index, region) = item
            guard region.purpose != .straightened, !readElsewhere.contains(index),
                !Self.othersOnly(region, tracks: tracks, symbologies: symbologies),
                !Self.steep(region, in: frame)
            else { return .success([]) }
            return Result { () throws(ZBarError) -> [Detection] in
                let settings = Self.settings(for: region, symbologies: symbologies)
                return try ZBarScanner(settings: settings).scan(
                    frame.cropped(to: region.box), origin: Point(x: region.box.minX, y: region.box.minY))
            }
        }
        frameCount += 1
        recentlyConfirmed.removeAll { frameCount - $0.frame > 3 }
        var result: [Detection] = []
        let trackedRegions = regions.filter { $0.purpose == .tracked }
        for (region, outcome) in zip(regions, scanned) {
            let raw = try outcome.get()
            guard !raw.isEmpty else { continue }
            // Codes already confirmed in this region vouch for their own value where they are.
            let vouchers = region.tracks.compactMap { index -> (value: [UInt8], box: Box)? in
                let track = tracks[index]
                return track.confirmed ? (track.value, track.box) : nil
            }
            // Read already: the same code from an earlier region, or, outside the tracked regions, a
            // code of a tracked value lying wholly inside the region searched for it (a fragment
            // of that code: the tracked region, scanned for it alone, read what was there).
            let known = { (part: Detection) -> Bool in
                guard let box = part.box else { return false }
                if result.contains(where: { $0.isSameCode(as: part) }) {
                    return true
                }
                guard region.purpose != .tracked else { return false }
                return trackedRegions.contains { tracked in
                    tracked.box.covers(box, fraction: 1)
                        && tracked.tracks.contains {
                            tracks[$0].symbology == part.symbology && tracks[$0].value == part.value
                        }
                }
            }
            let splitter = DetectionSplitter(density: region.rowStep > 0 ? region.rowStep : region.columnStep)
            let found = try Self.attachAddOns(
                verified(raw, in: frame, splitter: splitter, vouchers: vouchers, skipping: known))
            let owners = region.tracks.map { tracks[$0] }
            // A read at one end: its bars show where the code is; failing that, the track expected
            // there does.
            result += Self.pooled(found, owners: owners).map {
                Self.completed(LinearExtent.widened($0, in: frame), by: owners)
            }
        }
        return result
    }

    /// A discovery region of bars at a steep angle (more than `steepDegrees` off the rows and
    /// columns): no row or column crosses its code whole, so it is not scanned that way; the
    /// localiser's region is straightened along its bars (`readAngled`) in the same frame. Bars at
    /// a lesser angle are still scanned both ways as planned: rows alone across the bars of a
    /// label read a QR code beside them late (zbar finds one only on lines both ways; on `flow`
    /// seeds 3–4, 7 frames after it came into view), even where the region's gradients were
    /// three quarters coherent.
    static func steep(_ region: DecodePlanner.Region, in frame: GrayImage) -> Bool {
        guard region.purpose == .discovery, let axis = BarAxis.estimate(in: frame, box: region.box, step: 3) else {
            return false
        }
        return axis.coherence >= BarAxis.barCoherence && axis.degreesOffGrid > steepDegrees
    }

    /// Beyond this angle to the rows and columns zbar reads a linear code on few lines if at all
    /// (EAN-13 at 2 px a module: on most frames up to about 15°).
    static let steepDegrees = 20.0

    /// A tracked region whose codes are all of symbologies zbar is not set to read, or cannot.
    static func othersOnly(
        _ region: DecodePlanner.Region, tracks: [DecodePlanner.TrackedCode], symbologies: Set<Symbology>
    ) -> Bool {
        region.purpose == .tracked && !region.tracks.isEmpty
            && region.tracks.allSatisfy { !symbologies.contains(tracks[$0].symbology) || !reads(tracks[$0].symbology) }
    }

    /// zbar's settings for one planned region: its lines, and the symbologies it can find on
    /// them. zbar finds a QR code only from finder patterns crossed both ways, so a region scanned
    /// one way (its localiser cells had bars, not modules) is not searched for one: the search
    /// costs on every line (3 % of zbar's time on hd-rows) and cannot succeed.
    static func settings(for region: DecodePlanner.Region, symbologies: Set<Symbology>) -> ZBarSettings {
        let oneWay = region.rowStep == 0 || region.columnStep == 0
        return ZBarSettings(
            symbologies: oneWay ? symbologies.filter(\.isLinear) : symbologies,
            density: max(1, min(region.rowStep, region.columnStep)), rowStep: region.rowStep,
            columnStep: region.columnStep)
    }

    /// In a region planned for one track of a value, every part of that value is that code (zbar's
    /// splitter can cut one code read on few lines into its ends): one detection with all the
    /// points. Where the region holds several tracks of the value (identical codes side by side),
    /// the parts stay apart; so does a part that lies off the track's predicted place (an
    /// identical label close behind it, coming into the region before it has a track).
    static func pooled(_ detections: [Detection], owners: [DecodePlanner.TrackedCode]) -> [Detection] {
        var result: [Detection] = []
        for detection in detections {
            let sameValue = owners.filter { $0.symbology == detection.symbology && $0.value == detection.value }
            let place = sameValue.first.map { $0.box.widened(by: Self.pooledMargin) }
            let onPlace = { (part: Detection) -> Bool in
                guard let place, let box = part.box else { return false }
                return place.intersects(box)
            }
            if sameValue.count == 1, detection.symbology.isLinear, onPlace(detection),
                let index = result.firstIndex(where: {
                    $0.symbology == detection.symbology && $0.value == detection.value && onPlace($0)
                })
            {
                result[index].absorb(detection)
            } else {
                result.append(detection)
            }
        }
        return result
    }

    /// Pixels around a track's predicted place within which a part of its value is that code.
    static let pooledMargin = 16

    /// A linear code read at one end only (zbar places a point where a line finishes the code, and
    /// in a tight region the lines may all finish at the same end) is a thin line of points. Where a
    /// track of that value is expected around it and its size is known, the read stands for that
    /// code: it takes the track's predicted box, so the tracker sees the code, not one of its ends.
    static func completed(_ detection: Detection, by tracks: [DecodePlanner.TrackedCode]) -> Detection {
        guard detection.symbology.isLinear, let box = detection.box, box.width <= 4 || box.height <= 4 else {
            return detection
        }
        let owner = tracks.first { track in
            guard track.value == detection.value, track.symbology == detection.symbology,
                track.typicalWidth > 8, track.typicalHeight > 8
            else { return false }
            return track.box.widened(by: 16).covers(box, fraction: 1) && track.box.width > 8 && track.box.height > 8
        }
        guard let owner else { return detection }
        var whole = detection
        whole.points = owner.box.corners
        return whole
    }

    /// Splits merged symbols and checks EAN/UPC parts: the geometry decides where it shows both
    /// halves; a confirmed track of that value right there vouches for it; otherwise the part's own
    /// region is rescanned (zbar also carries half-codes across the end of a scan line, joining a
    /// label at one edge of the frame with one at the other).
    private func verified(
        _ raw: [Detection], in frame: GrayImage, splitter: DetectionSplitter, vouchers: [(value: [UInt8], box: Box)],
        skipping known: (Detection) -> Bool = { _ in false }
    ) throws(ZBarError) -> [Detection] {
        var result: [Detection] = []
        result.reserveCapacity(raw.count)
        for detection in Self.mergeSameValue(raw) {
            let parts = splitter.split(detection).filter { !known($0) }
            guard Self.phantomProne(detection.symbology) else {
                result += parts
                continue
            }
            for part in parts {
                if let extent = splitter.eanExtent(part) {
                    let trimmed = DetectionSplitter.trim(part, low: extent.low, high: extent.high)
                    if extent.fits {
                        result.append(trimmed)
                    } else {
                        rejectedParts += 1
                    }
                } else if let box = part.box,
                    vouchers.contains(where: { $0.value == part.value && $0.box.intersects(box) })
                {
                    result.append(part)
                } else if try confirms(part, in: frame) {
                    result.append(part)
                } else {
                    rejectedParts += 1
                }
            }
        }
        return result
    }

    /// Another engine's reads checked as zbar's own are: an EAN/UPC read is kept only where a rescan
    /// of its neighbourhood reads the same value with both halves seen to fit (zxing-cpp too reads
    /// a blurred, skewed EAN-13 now and then as another valid value, and reads it so again in the
    /// next frames); other symbologies pass unchecked.
    public func checked(_ reads: [Detection], in frame: GrayImage) throws(ZBarError) -> [Detection] {
        var result: [Detection] = []
        for read in reads {
            guard Self.phantomProne(read.symbology) else {
                result.append(read)
                continue
            }
            if try confirms(read, in: frame) {
                result.append(read)
            } else {
                rejectedParts += 1
            }
        }
        return result
    }

    /// zbar reports an EAN-2/EAN-5 supplement as a symbol of its own: it belongs to the EAN/UPC
    /// code it continues along that code's scan lines, as that code's `addOn`. Upright, it lies
    /// right of the main code; a label turned half a turn has it on the left, one turned a quarter
    /// above or below (read down the frame's columns, or across a straightened view either way).
    /// Of the codes it could continue, the one it follows on the right comes first (the label as
    /// printed), then the nearest. A supplement alone is not a code and is dropped.
    public static func attachAddOns(_ detections: [Detection]) -> [Detection] {
        let addOns = detections.indices.filter {
            detections[$0].symbology == .ean2 || detections[$0].symbology == .ean5
        }
        guard !addOns.isEmpty else { return detections }
        var result = detections
        for index in addOns {
            guard let addOnBox = detections[index].box else { continue }
            // (candidate, how it lies: 0 right of an upright code, 1 any other way; the gap).
            let owners: [(index: Int, rank: Int, gap: Int)] = detections.indices.compactMap { candidate in
                guard Self.phantomProne(detections[candidate].symbology), let box = detections[candidate].box else {
                    return nil
                }
                return addOnPlace(addOnBox, beside: box, alongRows: detections[candidate].readsAlongRows).map {
                    (candidate, $0.rank, $0.gap)
                }
            }
            if let owner = owners.min(by: { ($0.rank, $0.gap) < ($1.rank, $1.gap) }) {
                result[owner.index].addOn = String(decoding: detections[index].value, as: UTF8.self)
            }
        }
        return result.enumerated().filter { !addOns.contains($0.offset) }.map(\.element)
    }

    /// Where a supplement's box lies against a main code's, when it continues that code along its
    /// scan lines: rank 0 right of a code read along rows, 1 left of it or beyond either end of one
    /// read down columns; the gap between them in pixels. zbar places the supplement's points at
    /// its far end: up to a separator and an EAN-5 (9 + 47 modules against the main code's 95)
    /// past the main code, so it reaches no further than three quarters of the code's length.
    /// Across the lines the two bands must overlap: bands merely near each other were tried (a
    /// tilted code's supplement lies beside the lines that cross the main code whole) and took a
    /// phantom EAN-2 read on lines across a tilted code's end as its add-on
    /// (`AddOnReplayTests.addOnsAtAnyAngle`, seed 79).
    static func addOnPlace(_ addOn: Box, beside box: Box, alongRows: Bool) -> (rank: Int, gap: Int)? {
        // Along the code's axis (a, the code's length) and across it (b).
        let (a0, a1, b0, b1) =
            alongRows ? (box.minX, box.maxX, box.minY, box.maxY) : (box.minY, box.maxY, box.minX, box.maxX)
        let (s0, s1, t0, t1) =
            alongRows
            ? (addOn.minX, addOn.maxX, addOn.minY, addOn.maxY) : (addOn.minY, addOn.maxY, addOn.minX, addOn.maxX)
        guard min(b1, t1) >= max(b0, t0) else { return nil }
        let reach = (a1 - a0) * 3 / 4
        if s0 >= a1 - 4 && s1 - a1 <= reach { return (alongRows ? 0 : 1, max(0, s0 - a1)) }
        if s1 <= a0 + 4 && a0 - s0 <= reach { return (1, max(0, a0 - s1)) }
        return nil
    }

    /// zbar sometimes reports one code as several symbols of the same value in one image (and
    /// sometimes several codes as one). Pooling the points per value lets the splitter decide.
    static func mergeSameValue(_ raw: [Detection]) -> [Detection] {
        guard raw.count > 1 else { return raw }
        var merged: [Detection] = []
        for detection in raw {
            if detection.symbology.isLinear,
                let index = merged.firstIndex(where: {
                    $0.symbology == detection.symbology && $0.value == detection.value
                })
            {
                merged[index].absorb(detection)
            } else {
                merged.append(detection)
            }
        }
        return merged
    }

    /// zbar decodes EAN/UPC halves separately and can join the halves of two different labels
    /// into a checksum-valid code that is in no label.
    public static func phantomProne(_ symbology: Symbology) -> Bool { symbology.isRetail }

    /// Rescans run at density 1.
    static let verifierSplitter = DetectionSplitter(density: 1)

    /// Rescans the part's neighbourhood; true when the same value is read there.
    private func confirms(_ part: Detection, in frame: GrayImage) throws(ZBarError) -> Bool {
        guard let box = part.box else { return false }
        let near = box.widened(by: 32)
        if recentlyConfirmed.contains(where: { $0.value == part.value && $0.box.intersectionOverUnion(near) > 0 }) {
            return true
        }
        rescans += 1
        // A read at one end of a code shows a thin column: look far enough along the scan lines
        // to hold the whole code (codes are rarely more than five times as wide as tall). A read
        // longer along its lines than across them shows the code whole: its quiet zones suffice.
        let horizontal = part.readsAlongRows
        let alongExtent = horizontal ? box.width : box.height
        let across = horizontal ? box.height : box.width
        let along = alongExtent > across ? alongExtent / 3 + 16 : max(alongExtent / 3 + 16, 5 * across / 2)
        let marginX = horizontal ? along : 8
        let marginY = horizontal ? 8 : along
        guard let region = box.widened(x: marginX, y: marginY).clamped(to: frame.bounds) else { return false }
        // Only the symbology in question, on lines that run the way the part was read: cheaper to
        // set up and to run.
        let settings = ZBarSettings(
            symbologies: [part.symbology], density: 1, rowStep: horizontal ? 1 : 0, columnStep: horizontal ? 0 : 1)
        let found = try ZBarScanner(settings: settings).scan(
            cut(frame, region), origin: Point(x: region.minX, y: region.minY))
        // The same value, read where the part is, with halves seen to fit: a rescan of two labels
        // can rebuild the same phantom, so a rescan that does not show both halves proves nothing
        // (UPC-E has no halves: zbar reads it in one piece, and cannot join it from two labels).
        let match = found.first { symbol in
            guard symbol.symbology == part.symbology, symbol.value == part.value, let symbolBox = symbol.box else {
                return false
            }
            let fits = Self.verifierSplitter.eanHalvesFit(symbol)
            return symbolBox.intersectionOverUnion(box) > 0
                && (fits == true || (fits == nil && part.symbology == .upcE))
        }
        guard let match, let matchBox = match.box else { return false }
        // Only a read whose halves were seen to fit vouches for the next frames.
        if Self.verifierSplitter.eanHalvesFit(match) == true {
            recentlyConfirmed.append((part.value, matchBox, frameCount))
        }
        return true
    }

    private func cut(_ frame: GrayImage, _ box: Box) -> GrayImage {
        let width = box.width
        crop.removeAll(keepingCapacity: true)
        crop.reserveCapacity(width * box.height)
        frame.pixels.withUnsafeBufferPointer { pixels in
            for row in box.minY...box.maxY {
                let start = row * frame.width + box.minX
                crop.append(contentsOf: pixels[start..<start + width])
            }
        }
        return GrayImage(width: width, height: box.height, pixels: crop)
    }
}
