import ScanCore
import ScanVision

/// zxing-cpp on the guided decoder's tracked regions (`decoder.trackedEngine` zxing): where the
/// tracker predicts a code, zxing-cpp without tryHarder reads as many codes as zbar in a third to an
/// eighth of its time (BENCHMARKS.md, "Engines on the agent's regions"). A region in which it did not
/// read every code the region was planned for is left to zbar, as are the discovery regions:
/// zxing-cpp's fast mode looks at a few lines around a region's middle only, so it is an engine for
/// where a code is known to be, not for searching (the sweep's lines have a reader of their own,
/// `SweepLineReader`, with tryHarder on every line).
///
/// The readers are made once and used for every region (zxing-cpp's set-up is paid once). For a
/// region of linear codes scanned one way: one along rows only, for codes read along rows, and one
/// that turns the region, for codes read down columns. These look for the linear symbologies only:
/// with a 2-D one among them (QR on a conveyor), zxing-cpp binarises the whole region and searches
/// it for finder patterns, which took over half its time on regions where no 2-D code is tracked.
/// A 2-D code that comes into such a region is still searched: the planner keeps the discovery
/// region of edges both ways unless tracked regions scanned both ways cover it. For any other
/// region (a 2-D code, a code whose direction is not known): one for every symbology, turning.
/// Used from one thread at a time.
public final class TrackedRegionReaders {
    private let rows: ZXingReader?
    private let turning: ZXingReader?
    private let any: ZXingReader
    /// What the readers read.
    public let symbologies: Set<Symbology>
    /// Tracked regions read, and those left to zbar.
    public private(set) var regionsRead = 0
    public private(set) var regionsLeft = 0

    /// `symbologies`: what zbar would read there; those zxing-cpp cannot read (EAN-2/EAN-5 alone,
    /// which zxing-cpp reads with their EAN/UPC code anyway) are left out.
    public init(symbologies: Set<Symbology>) throws(ZXingError) {
        self.symbologies = symbologies.filter(ZXingReader.reads)
        var settings = ZXingSettings.asPlanned(self.symbologies, tryHarder: false)
        settings.tryRotate = true
        any = try ZXingReader(settings: settings)
        let linear = self.symbologies.filter(\.isLinear)
        if linear.isEmpty {
            rows = nil
            turning = nil
        } else {
            settings.symbologies = linear
            turning = try ZXingReader(settings: settings)
            settings.tryRotate = false
            rows = try ZXingReader(settings: settings)
        }
    }

    /// The reader for a tracked region with these codes.
    private func reader(for owners: [DecodePlanner.TrackedCode], in region: DecodePlanner.Region) -> ZXingReader {
        guard owners.allSatisfy(\.symbology.isLinear), region.rowStep == 0 || region.columnStep == 0,
            let rows, let turning
        else { return any }
        return region.columnStep == 0 ? rows : turning
    }

    /// Reads the tracked regions of a plan. `detections`: what zxing-cpp read, in frame
    /// coordinates, each code once. `plan`: the regions for zbar, in the plan's order: every region
    /// that is not tracked; a tracked region in which zxing-cpp missed its only code; for a joined
    /// region, the own parts of the codes zxing-cpp missed in it. `read`: indexes into `plan` of the
    /// tracked regions zxing-cpp read whole, which zbar does not scan but still knows as tracked.
    /// A code the tracker expects to lie partly outside the frame is not looked for again: it
    /// cannot be read whole there (it is leaving or entering the view).
    public func read(
        _ frame: GrayImage, regions: [DecodePlanner.Region], tracks: [DecodePlanner.TrackedCode], input: String
    ) throws(ZXingError) -> (detections: [Detection], plan: [DecodePlanner.Region], read: Set<Int>) {
        var detections: [Detection] = []
        var plan: [DecodePlanner.Region] = []
        var done: Set<Int> = []
        let bounds = frame.bounds
        for region in regions {
            // The codes of the region these readers are for (a DataMatrix beside them is not).
            let mine = region.tracks.filter { symbologies.contains(tracks[$0].symbology) }
            let owners = mine.map { tracks[$0] }
            guard region.purpose == .tracked, !owners.isEmpty, region.box.width >= 8, region.box.height >= 8 else {
                plan.append(region)
                continue
            }
            let reader = reader(for: owners, in: region)
            var found = try reader.read(
                frame.cropped(to: region.box), origin: Point(x: region.box.minX, y: region.box.minY), input: input
            )
            // A track is read when a read of its value lies where it is expected: identical codes
            // side by side are told apart by place.
            let unread = { (found: [Detection]) in
                mine.filter { index in !found.contains { Self.reads($0, tracks[index]) } }
            }
            // Without tryHarder zxing-cpp stops at the first code on each line it reads: in a region
            // joined from several tracks, a code right of (or below) another is read on its own.
            if owners.count > 1 {
                for index in unread(found) {
                    guard
                        let own = Self.ownBox(tracks[index], apartFrom: region.tracks.map { tracks[$0].box })
                            .clamped(to: region.box), own.width >= 8, own.height >= 8
                    else { continue }
                    found.appendNew(
                        try reader.read(frame.cropped(to: own), origin: Point(x: own.minX, y: own.minY), input: input))
                }
            }
            // zxing-cpp only confirms the region's codes where they are expected, as a second
            // opinion does. A read of anything else (a code that has just come into the region, or
            // a tracked code misread: without tryHarder zxing-cpp now and then reads a blurred,
            // skewed EAN-13 as another valid value) is zbar's to decide, with its checks against
            // phantoms: the whole region is left to it.
            let known = found.filter { read in owners.contains { Self.reads(read, $0) } }
            if known.count < found.count {
                regionsLeft += 1
                plan.append(region)
                continue
            }
            // A track that does not know its code's size across the lines yet (read by zbar on a
            // few lines or at its ends only: a sliver far longer than codes are) learns it from
            // zbar, which reads the region on all its lines; zxing-cpp's read would keep the sliver.
            found = known.filter { read in owners.contains { Self.reads(read, $0) && Self.sized($0) } }
                .map { Self.placed($0, owners: owners) }
            let missing = unread(found).filter { bounds.covers(tracks[$0].box, fraction: 1) }
            if missing.isEmpty {
                regionsRead += 1
                done.insert(plan.count)
                plan.append(region)
                detections += found
                continue
            }
            regionsLeft += 1
            if owners.count == 1 {
                plan.append(region)
            } else {
                // The rest of the region is read: zbar scans the missed codes' own parts only.
                for index in missing {
                    guard
                        let own = Self.ownBox(tracks[index], apartFrom: region.tracks.map { tracks[$0].box })
                            .clamped(to: region.box)
                    else { continue }
                    var part = region
                    part.box = own
                    // Still planned for all the region's codes: zbar keeps identical ones apart.
                    part.tracks = region.tracks
                    plan.append(part)
                }
            }
            // zbar reads again only the codes zxing-cpp missed: what it found stands.
            detections += found
        }
        // Regions of tracks close together overlap: one code read in two of them is one detection.
        var unique: [Detection] = []
        for detection in detections where !unique.contains(where: { $0.isSameCode(as: detection) }) {
            unique.append(detection)
        }
        return (unique, plan, done)
    }

    /// Where the tracker should see a linear code zxing-cpp read: zxing-cpp outlines it by the few
    /// lines it read, its whole length but only a sliver across the bars; zbar and the tracker by
    /// the whole code, and the tracker's size and speed estimates must not jump between the two.
    /// So a read of a tracked value takes the track's predicted box (its usual size where the
    /// prediction is a thin line), centred where zxing-cpp saw the code. A 2-D code's corners are
    /// exact and stay.
    static func placed(_ read: Detection, owners: [DecodePlanner.TrackedCode]) -> Detection {
        guard read.symbology.isLinear, let seen = read.box,
            let owner = owners.filter({ reads(read, $0) }).min(by: {
                distance(seen, $0.box) < distance(seen, $1.box)
            })
        else { return read }
        // The predicted box, unless it is a read at one end (a thin line): then the usual size.
        let width = owner.box.width > 4 ? owner.box.width : max(owner.typicalWidth, seen.width)
        let height = owner.box.height > 4 ? owner.box.height : max(owner.typicalHeight, seen.height)
        let centreX = (seen.minX + seen.maxX) / 2
        let centreY = (seen.minY + seen.maxY) / 2
        var placed = read
        let minX = centreX - width / 2
        let minY = centreY - height / 2
        placed.points = Box(minX: minX, minY: minY, maxX: minX + width - 1, maxY: minY + height - 1).corners
        placed.alongRows = owner.readAlongRows
        return placed
    }

    /// A track's own part of a joined region: its usual size around where it is expected, with a
    /// margin for its quiet zone and the prediction's error.
    /// The own part, cut short of the codes beside it (`others`, its own box among them: boxes
    /// it overlaps are ignored): zxing-cpp would stop at the part of a neighbour on its lines.
    static func ownBox(_ track: DecodePlanner.TrackedCode, apartFrom others: [Box]) -> Box {
        var own = ownBox(track)
        let code = track.box
        for other in others where !other.intersects(code) {
            if other.maxX < code.minX { own.minX = max(own.minX, other.maxX + 1) }
            if other.minX > code.maxX { own.maxX = min(own.maxX, other.minX - 1) }
            if other.maxY < code.minY { own.minY = max(own.minY, other.maxY + 1) }
            if other.minY > code.maxY { own.maxY = min(own.maxY, other.minY - 1) }
        }
        return own
    }

    static func ownBox(_ track: DecodePlanner.TrackedCode) -> Box {
        let width = max(track.box.width, track.typicalWidth)
        let height = max(track.box.height, track.typicalHeight)
        let marginX = width / 4 + 16 + Int(2 * abs(track.velocityX))
        let marginY = height / 4 + 16 + Int(2 * abs(track.velocityY))
        let centreX = Int(track.box.centerX)
        let centreY = Int(track.box.centerY)
        return Box(
            minX: centreX - width / 2 - marginX, minY: centreY - height / 2 - marginY,
            maxX: centreX + width / 2 + marginX, maxY: centreY + height / 2 + marginY)
    }

    /// Whether the track knows its code's extent across its lines: no more than twelve times
    /// longer than it is wide. A Code 128 or an EAN-13 is two to three; a long GS1-128 label
    /// skewed by a few degrees, which zbar's rows cross whole only on a band of its height, six
    /// to twelve; a Code 128 read by zbar on its top rows only, more than fifteen.
    static func sized(_ track: DecodePlanner.TrackedCode) -> Bool {
        let width = max(track.box.width, track.typicalWidth)
        let height = max(track.box.height, track.typicalHeight)
        return max(width, height) <= 12 * min(width, height)
    }

    /// Whether a read is of the track: its value, its centre where the track is expected.
    static func reads(_ read: Detection, _ track: DecodePlanner.TrackedCode) -> Bool {
        guard read.symbology == track.symbology, read.value == track.value, let box = read.box else { return false }
        return !box.centreIsOutside(ownBox(track))
    }

    static func distance(_ a: Box, _ b: Box) -> Double {
        let dx = a.centerX - b.centerX
        let dy = a.centerY - b.centerY
        return dx * dx + dy * dy
    }

}

/// zxing-cpp for the codes zbar cannot read (DataMatrix, PDF417, Aztec, MaxiCode) on the guided
/// decoder's regions, every frame: where a track of such a code is expected, and on the discovery
/// regions where the localiser saw edges both ways (a 2-D code). The whole-frame pass then only
/// needs to run now and then, as a safety net (`decoder.zxingEveryNthFrame`): at 4K it costs
/// about half a frame's decoding. tryHarder stays on (DataMatrix reads collapse without it);
/// the regions are small. A region is read inverted too when nothing is found on it as it is: a
/// reverse-printed code (light modules on a dark ground) is read here, where the localiser finds
/// it (it counts edges of either polarity), and the net need not read every stripe twice for it.
public final class MatrixRegionReader {
    private let reader: ZXingReader
    public let symbologies: Set<Symbology>
    /// Regions read.
    public private(set) var regionsRead = 0

    /// `symbologies`: those zbar cannot read; nil when zxing-cpp reads none of them.
    public init?(symbologies: Set<Symbology>) throws(ZXingError) {
        let readable = symbologies.filter(ZXingReader.reads)
        guard !readable.isEmpty else { return nil }
        var settings = ZXingSettings.asPlanned(readable)
        settings.tryInvert = true
        reader = try ZXingReader(settings: settings)
        self.symbologies = readable
    }

    /// What zxing-cpp reads on the plan's regions that concern these symbologies, each code once.
    public func read(
        _ frame: GrayImage, regions: [DecodePlanner.Region], tracks: [DecodePlanner.TrackedCode], input: String
    ) throws(ZXingError) -> [Detection] {
        var boxes: [Box] = []
        for region in regions {
            switch region.purpose {
            case .tracked:
                for index in region.tracks where symbologies.contains(tracks[index].symbology) {
                    if let own = TrackedRegionReaders.ownBox(tracks[index]).clamped(to: region.box) {
                        boxes.append(own)
                    }
                }
            case .discovery where region.rowStep > 0 && region.columnStep > 0:
                // Edges both ways, but bars: a linear code at an angle (its region scanned both
                // ways) is no matrix code, and the DataMatrix detector traced every bar of the
                // forty such regions of a 4K frame. A label of bars and a matrix code together
                // is less coherent than this.
                if let axis = BarAxis.estimate(in: frame, box: region.box, step: 3),
                    axis.coherence >= BarAxis.barsAlone
                {
                    continue
                }
                boxes.append(region.box)
            default:
                continue
            }
        }
        var found: [Detection] = []
        for box in boxes where box.width >= 16 && box.height >= 16 {
            regionsRead += 1
            let read = try reader.read(frame.cropped(to: box), origin: Point(x: box.minX, y: box.minY), input: input)
            found.appendNew(read)
        }
        return found
    }
}
