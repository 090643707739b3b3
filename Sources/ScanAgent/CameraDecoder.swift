import ScanAgentRuntime
import ScanCore
import ScanZBar
import ScanZXing
import ScanEvents
import ScanPipeline
import ScanVision

/// A camera's decoding: zbar on every frame for the linear codes and QR; zxing-cpp
/// - for what zbar cannot read (DataMatrix, PDF417, Aztec, MaxiCode, DataBar Limited) when the
///   config lists those, on the region of interest, every `decoder.zxingEveryNthFrame` frames;
/// - in that same pass, for the zbar symbologies in `decoder.zxingSweep`: codes zbar never reads
///   (light on dark, damaged); a sweep result zbar also read in this frame is dropped;
/// - as a second opinion (`decoder.secondOpinion`): where a confirmed track was not decoded by
///   zbar in this frame, on the region where the tracker expects the code, for that code's
///   symbology only (a blurred, glared or partly covered label keeps its reads).
/// - in guided mode, for those same codes zbar cannot read, every frame on the plan's regions
///   where they are expected or found (`MatrixRegionReader`): the whole-frame pass is then a net;
/// - with `decoder.trackedEngine` zxing, first on the tracked regions (`TrackedRegionReaders`),
///   zbar reading only where it missed a code planned there.
/// - with `decoder.sweepEngine` zxing, on the sweep's scan lines (`SweepLineReader`); its EAN/UPC
///   reads that no region read in the frame pass zbar's rescan first.
/// Both feed the same tracker: a code is one track whichever engine read it.
///
/// zbar covers the frame as `decoder.mode` says: `guided` (the default) decodes tracked codes
/// where the tracker predicts them, code-like regions the localiser finds, and one stripe of a
/// slow sweep per frame (`DecodePlanner`), on `decoder.threads` threads; `full` scans the whole
/// region of interest in every frame.
final class CameraDecoder {
    typealias Expected = DecodePlanner.TrackedCode

    let zbar: ZBarFrameDecoder?
    let planner: DecodePlanner
    let localizer = CodeLocalizer()
    /// Diagnostics: receives one line per planned region (`replay --trace-regions`).
    var traceRegions: ((String) -> Void)?
    /// Threads that decode one frame's regions.
    let threads: Int
    /// Time per stage, regions, latency: what decoding costs.
    private(set) var profile = DecodeProfile()
    let zxing: ZXingReader?
    /// zxing-cpp for DataMatrix, PDF417 … on the regions where the plan expects or finds them.
    let matrixRegions: MatrixRegionReader?
    /// zxing-cpp on the tracked regions first (`decoder.trackedEngine`), nil: zbar alone.
    let trackedReaders: TrackedRegionReaders?
    /// zxing-cpp on the sweep's lines (`decoder.sweepEngine`), nil: zbar reads the sweep.
    let sweepLines: SweepLineReader?
    let everyNth: Int
    /// zxing-cpp on the finer straightened views of linear codes at an angle (small modules), beside
    /// zbar: `ZBarFrameDecoder.crossChecked`.
    let angledViews: ZXingReader?
    /// zbar's symbologies that the every-Nth-frame pass also looks for.
    private let sweep: Set<Symbology>
    /// One reader per symbology, made when first needed, for second opinions.
    private var secondReaders: [Symbology: ZXingReader] = [:]
    private let secondOpinion: Bool
    private let region: RegionOfInterest
    private var frameCount = 0
    private let camera: String
    /// Regions read by the second engine, and codes it found there.
    private(set) var secondOpinionsAsked = 0
    private(set) var secondOpinionReads = 0
    /// Codes of `decoder.zxingSweep` symbologies the every-Nth-frame pass found (zbar's included).
    private(set) var sweepReads = 0
    /// The localiser's regions in the last frame (no-reads).
    private(set) var located: LocatedRegions?
    /// Run the localiser in `full` mode too (no-reads need its regions).
    private let alwaysLocate: Bool
    /// At most this many regions a frame: a clip full of blurred codes must not stall decoding.
    static let secondOpinionsPerFrame = 4

    init(config: DecoderConfig, camera: String, locate: Bool = true) throws {
        self.camera = camera
        alwaysLocate = locate
        var zbarConfig = config
        zbarConfig.symbologies = config.symbologies.filter { ZBarFrameDecoder.reads($0) }
        zbar = zbarConfig.symbologies.isEmpty ? nil : try ZBarFrameDecoder(config: zbarConfig)
        let second = Set(config.symbologies.filter { !ZBarFrameDecoder.reads($0) && ZXingReader.reads($0) })
        sweep = Set(config.zxingSweep.filter { zbarConfig.symbologies.contains($0) && ZXingReader.reads($0) })
        let pass = second.union(sweep)
        zxing = pass.isEmpty ? nil : try ZXingReader(settings: Self.passSettings(pass, sweep: sweep, mode: config.mode))
        everyNth = max(1, config.zxingEveryNthFrame)
        angledViews = try Self.angledViewReader(zbarConfig.zbarSymbologies)
        secondOpinion = config.secondOpinion
        region = config.regionOfInterest
        planner = DecodePlanner(config: config)
        matrixRegions = config.mode == .guided ? try MatrixRegionReader(symbologies: second) : nil
        trackedReaders =
            config.mode == .guided && config.trackedEngine == .zxing
            ? try TrackedRegionReaders(symbologies: zbarConfig.zbarSymbologies) : nil
        sweepLines =
            config.mode == .guided && config.sweepEngine == .zxing
            ? try SweepLineReader(symbologies: zbarConfig.zbarSymbologies) : nil
        threads = config.threads ?? min(4, AvailableCores.count)
    }

    /// zxing-cpp for straightened views: the linear symbologies of `symbologies` it reads, the view
    /// as it is (its bars stand upright). Nil when there are none.
    static func angledViewReader(_ symbologies: Set<Symbology>) throws(ZXingError) -> ZXingReader? {
        let linear = Set(symbologies.filter { $0.isLinear && ZXingReader.reads($0) })
        return linear.isEmpty ? nil : try ZXingReader(settings: .asPlanned(linear))
    }

    /// zxing-cpp's pass over the region of interest (`zxingEveryNthFrame`). In guided mode with no
    /// `zxingSweep` symbologies it is only the net for matrix codes the localiser misses, and it
    /// does not look for them inverted: zxing-cpp reads an image twice for that whenever it finds
    /// nothing, and at 4K the second read was 2 ms of the tunnel scene's frame. A reverse-printed
    /// matrix code the localiser finds (it sees edges of either polarity) is read on its region,
    /// inverted (`MatrixRegionReader`); the sweep, which exists for reverse-printed codes, keeps the
    /// inverted read.
    static func passSettings(_ pass: Set<Symbology>, sweep: Set<Symbology>, mode: DecoderConfig.Mode) -> ZXingSettings {
        var settings = ZXingSettings(symbologies: pass)
        settings.tryInvert = mode != .guided || !sweep.isEmpty
        return settings
    }

    var rejectedParts: Int { zbar?.rejectedParts ?? 0 }
    var rescans: Int { zbar?.rescans ?? 0 }

    /// The frame's detections. `expected`: the live tracks and where the tracker predicts them.
    func decode(_ frame: GrayImage, expected: [Expected] = []) throws -> [Detection] {
        defer { frameCount += 1 }
        let input = "\(camera) frame \(frameCount)"
        let began = ContinuousClock.now
        var detections: [Detection] = []
        var plannedStraightened: [DecodePlanner.Region] = []
        located = nil
        if let zbar {
            if planner.config.mode == .guided {
                let area = region.pixels(width: frame.width, height: frame.height)
                let candidates = localizer.locate(frame, in: area)
                located = LocatedRegions(regions: candidates, area: area, image: frame)
                let locatedAt = ContinuousClock.now
                let regions = planner.plan(
                    frame: frameCount, width: frame.width, height: frame.height, tracks: expected,
                    candidates: candidates)
                profile.record(regions: regions, framePixels: area.width * area.height)
                plannedStraightened = regions.filter { $0.purpose == .straightened }
                if let trace = traceRegions {
                    for region in regions {
                        let box = region.box
                        trace(
                            "frame \(frameCount): \(region.purpose.rawValue) region [\(box.minX),\(box.minY)-\(box.maxX),\(box.maxY)] "
                                + "rows every \(region.rowStep), columns every \(region.columnStep)")
                    }
                }
                var readByZXing: Set<Int> = []
                var forZBar = regions
                if let trackedReaders {
                    let tracked = try trackedReaders.read(frame, regions: regions, tracks: expected, input: input)
                    detections = tracked.detections
                    forZBar = tracked.plan
                    readByZXing = tracked.read
                    profile.tracked += ContinuousClock.now - locatedAt
                }
                // The sweep's lines, where zxing-cpp reads them: zbar skips those regions, and what
                // zxing-cpp finds there joins zbar's reads as the sweep's did (after them).
                var swept: [Detection] = []
                if let sweepLines {
                    let sweepBegan = ContinuousClock.now
                    for (index, region) in forZBar.enumerated() where region.purpose == .sweep {
                        readByZXing.insert(index)
                        swept.appendNew(try sweepLines.read(frame, region: region, input: input))
                    }
                    profile.sweep += ContinuousClock.now - sweepBegan
                }
                let zbarBegan = ContinuousClock.now
                let read = try zbar.decode(
                    frame, regions: forZBar, tracks: expected, threads: threads, readElsewhere: readByZXing)
                // zbar's reads join zxing-cpp's tracked reads of the same code on other rows.
                detections.appendJoiningBands(read)
                // What the sweep found that no region read: EAN/UPC reads pass zbar's check first.
                detections += try zbar.checked(swept.absent(from: detections), in: frame)
                profile.zbar += ContinuousClock.now - zbarBegan
                if let matrixRegions {
                    let matrixBegan = ContinuousClock.now
                    detections.appendNew(
                        try matrixRegions.read(frame, regions: regions, tracks: expected, input: input))
                    profile.matrix += ContinuousClock.now - matrixBegan
                }
                profile.localize += locatedAt - began
            } else {
                detections = try zbar.decode(frame)
                profile.zbar += ContinuousClock.now - began
            }
        }
        if located == nil && alwaysLocate {
            let located = ContinuousClock.now
            let area = region.pixels(width: frame.width, height: frame.height)
            self.located = LocatedRegions(regions: localizer.locate(frame, in: area), area: area, image: frame)
            profile.localize += ContinuousClock.now - located
        }
        if let zbar, let located {
            // Linear codes at a steep angle, which no row or column crosses whole: those tracked so
            // (the plan's straightened regions) and the localiser's regions that nothing read,
            // straightened along their bars.
            let angledBegan = ContinuousClock.now
            let tracked = plannedStraightened.flatMap { region in region.tracks.map { (region.box, expected[$0].value) }
            }
            detections.appendNew(
                try zbar.readAngled(
                    frame, regions: located.regions.map(\.box), tracked: tracked, besides: detections,
                    secondEngine: angledViews.map { reader in { (try? reader.read($0, input: input)) ?? [] } }))
            profile.angled += ContinuousClock.now - angledBegan
        }
        let zbarDone = ContinuousClock.now
        if let zxing, let box = zxingPassBox(frame: frameCount, width: frame.width, height: frame.height) {
            // Codes read in this frame are painted over: the pass is the net for what nothing read,
            // and zxing-cpp's DataMatrix detector traces the bar edges of every label in it (4K,
            // sixty labels at an angle, tunnel settings: the pass 13.9 → 11.3 ms a frame).
            var image = box == frame.bounds ? frame : frame.cropped(to: box)
            image.paintWhite(detections.compactMap(\.box), origin: Point(x: box.minX, y: box.minY))
            let read = try zxing.read(image, origin: Point(x: box.minX, y: box.minY), input: input)
            // A code the regions' engines read in this frame too is one code.
            detections.appendNew(read)
            sweepReads += read.count { sweep.contains($0.symbology) }
        }
        // Parts of an ITF code a slanted line crossed, by either engine, give way to the whole.
        detections = detections.withoutTruncatedReads()
        if secondOpinion, zbar != nil {
            detections += try secondOpinions(
                frame, expected: expected.filter(\.confirmed), found: detections, input: input)
        }
        let done = ContinuousClock.now
        profile.zxing += done - zbarDone
        profile.frame(took: done - began)
        return detections
    }

    /// Where zxing-cpp's pass reads in this frame, nil: not in this frame. In `full` mode the
    /// region of interest every `zxingEveryNthFrame` frames. In guided mode, where the regions'
    /// engines read the matrix codes the plan knows of and the pass is only the net for those it
    /// does not, one of `zxingEveryNthFrame` stripes of the region every frame (reaching
    /// `sweepOverlap` pixels into the next, so a code up to that tall lies whole in one): the same
    /// cover, without a frame that costs a whole pass (at 4K about 50 ms, a frame and a half).
    func zxingPassBox(frame: Int, width: Int, height: Int) -> Box? {
        let area = region.pixels(width: width, height: height)
        guard planner.config.mode == .guided, everyNth > 1 else {
            return frame % everyNth == 0 ? area : nil
        }
        guard let stripe = DecodePlanner.stripe(frame, of: everyNth, in: area) else { return nil }
        return Box(
            minX: stripe.minX, minY: stripe.minY, maxX: stripe.maxX,
            maxY: min(area.maxY, stripe.maxY + planner.config.sweepOverlap))
    }

    /// Starts a new measuring window (the heartbeat reports one window at a time).
    func resetProfileWindow() { profile.resetWindow() }

    /// zxing-cpp on the expected regions of zbar's codes that no detection of this frame covers.
    private func secondOpinions(_ frame: GrayImage, expected: [Expected], found: [Detection], input: String) throws
        -> [Detection]
    {
        let frameBox = frame.bounds
        let missing = expected.filter { track in
            ZBarFrameDecoder.reads(track.symbology) && ZXingReader.reads(track.symbology)
                && !found.contains { $0.box.map { $0.intersectionOverUnion(track.box) > 0 } ?? false }
        }
        var extra: [Detection] = []
        // The region of interest bounds every engine: a second opinion never reads outside it.
        let roi = region.pixels(width: frame.width, height: frame.height)
        // Only where the tracker knows the code's extent: a box that is still a line or a point (a
        // label entering the view, zbar's scan points on its edge) says too little where to look.
        for track in missing.filter({ $0.box.width >= 8 && $0.box.height >= 8 }).prefix(Self.secondOpinionsPerFrame) {
            // The expected box with a margin of half its size (the prediction is not exact), inside the frame.
            let marginX = max(track.box.width / 2, 8)
            let marginY = max(track.box.height / 2, 8)
            guard let area = track.box.widened(x: marginX, y: marginY).clamped(to: roi)?.clamped(to: frameBox),
                area.minX < area.maxX, area.minY < area.maxY, area.width >= 16, area.height >= 8
            else { continue }
            let reader: ZXingReader
            if let known = secondReaders[track.symbology] {
                reader = known
            } else {
                reader = try ZXingReader(settings: ZXingSettings(symbologies: [track.symbology]))
                secondReaders[track.symbology] = reader
            }
            secondOpinionsAsked += 1
            // A second opinion confirms the tracked code; another code of that symbology inside the
            // margin is left to zbar (a partial read there would start a track of its own).
            // Its place: the tracker's box for the code, centred where zxing-cpp saw it. The two
            // engines outline a code differently (zbar: scan-line hits; zxing-cpp: the rows it read),
            // and the tracker's size and speed estimates must not jump between the two.
            let found = try reader.read(
                frame.cropped(to: area), origin: Point(x: area.minX, y: area.minY), input: input
            )
            .filter { $0.value == track.value && $0.symbology == track.symbology }
            .map { read in
                guard let seen = read.box else { return read }
                let dx = (seen.minX + seen.maxX - track.box.minX - track.box.maxX) / 2
                let dy = (seen.minY + seen.maxY - track.box.minY - track.box.maxY) / 2
                var adjusted = read
                adjusted.points = track.box.offset(dx: dx, dy: dy).corners
                return adjusted
            }
            secondOpinionReads += found.count
            extra += found
        }
        return extra
    }
}

extension CameraDecoder: FrameDecoding {
    func takeWindow() -> DecodingWindow {
        let window = profile.window
        defer { resetProfileWindow() }
        let scanned = DecodeProfile.coverage(window.scanned, areaPixels: window.areaPixels).map {
            AgentStatus.ScannedShare(purpose: $0.0.rawValue, share: $0.1)
        }
        return DecodingWindow(
            latencies: window.latencies, scanned: scanned, mode: planner.config.mode.rawValue, threads: threads)
    }

    var summary: String { profile.summary }

    /// `replay --profile`: time per stage, and who read the tracked regions.
    var stages: String {
        guard let trackedReaders, trackedReaders.regionsRead + trackedReaders.regionsLeft > 0 else {
            return profile.stages
        }
        return profile.stages
            + "\n  tracked regions: \(trackedReaders.regionsRead) read by zxing-cpp, \(trackedReaders.regionsLeft) left to zbar"
    }
}
