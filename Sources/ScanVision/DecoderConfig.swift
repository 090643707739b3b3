import ScanCore

public struct RegionOfInterest: Sendable, Equatable {
    public var x: Double = 0
    public var y: Double = 0
    public var width: Double = 1
    public var height: Double = 1
    public init(x: Double = 0, y: Double = 0, width: Double = 1, height: Double = 1) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
    public var isWholeFrame: Bool { x == 0 && y == 0 && width == 1 && height == 1 }

    /// The region in pixels of a frame, clamped to it.
    public func pixels(width frameWidth: Int, height frameHeight: Int) -> Box {
        let minX = max(0, min(frameWidth - 1, Int((x * Double(frameWidth)).rounded(.down))))
        let minY = max(0, min(frameHeight - 1, Int((y * Double(frameHeight)).rounded(.down))))
        let maxX = max(minX, min(frameWidth - 1, Int(((x + width) * Double(frameWidth)).rounded(.up)) - 1))
        let maxY = max(minY, min(frameHeight - 1, Int(((y + height) * Double(frameHeight)).rounded(.up)) - 1))
        return Box(minX: minX, minY: minY, maxX: maxX, maxY: maxY)
    }
}

public struct DecoderConfig: Sendable, Equatable {
    /// What conveyors carry: retail EAN/UPC, logistics Code 128/39 and ITF, QR on totes.
    public static let conveyorSymbologies: [Symbology] = [
        .ean13, .ean8, .upcA, .upcE, .code128, .code39, .interleaved2of5, .qrCode,
    ]
    public var symbologies: [Symbology] = DecoderConfig.conveyorSymbologies
    /// zbar scans every `density`-th line; 2 halves the work and still reads labels taller than a few lines.
    public var density: Int = 2
    public var regionOfInterest: RegionOfInterest = RegionOfInterest()
    public var upcAsEAN13: Bool = true
    /// zxing-cpp's pass over the region of interest (DataMatrix, PDF417 … when `symbologies` names
    /// them): `full` mode, the whole region every Nth frame; guided mode, one of N stripes of it
    /// every frame (the regions' engines read the matrix codes the plan knows of every frame).
    public var zxingEveryNthFrame: Int = 1
    /// Where a confirmed track was not decoded by zbar in a frame, zxing-cpp reads the region
    /// where the tracker expects the code (a blurred or damaged label keeps its reads).
    public var secondOpinion: Bool = true
    /// Symbologies zbar reads that zxing-cpp also looks for in its every-Nth-frame pass over the
    /// region of interest: codes zbar never reads (light on dark, damaged, steeply tilted) become
    /// tracks, and the second opinion keeps them between passes. Each must be in `symbologies`.
    public var zxingSweep: [Symbology] = []

    /// How zbar covers a frame.
    public enum Mode: String, Sendable, CaseIterable {
        /// Tracking-guided: tracked codes where the tracker predicts them, code-like regions the
        /// localiser finds, and one stripe of the sweep per frame (`DecodePlanner`).
        case guided
        /// The whole region of interest in every frame (the first version's decoder).
        case full
    }
    public var mode: Mode = .guided
    /// Threads that decode one frame's regions in parallel; nil: the cores this process may use,
    /// at most 4 (more did not help on the benchmarks). Events are the same whatever the number.
    public var threads: Int?
    /// Guided mode: the region of interest is also swept in this many stripes, one per frame, so a
    /// code the localiser misses is still decoded within this many frames. 0 turns the sweep off.
    public var sweepFrames: Int = 8
    /// Scan-line spacing of the sweep, in pixels (codes whose bars are at least twice this tall
    /// are read by it).
    public var sweepDensity: Int = 6
    /// A stripe's columns reach this many pixels into the next stripe, so an upright code up to
    /// this tall lies whole in one of them (its rows scan the stripe alone).
    public var sweepOverlap: Int = 120
    /// Scan-line spacing in a tracked linear code's region (its bars are known to be tall enough).
    public var trackedDensity: Int = 4
    /// Guided: the engine that reads a tracked code where the tracker predicts it.
    public var trackedEngine: TrackedEngine = .zxing
    /// Guided: the engine that reads the sweep's stripe on its scan lines.
    public var sweepEngine: SweepEngine = .zxing
    public init() {}

    /// Which engine reads the sweep's lines.
    public enum SweepEngine: String, Sendable, CaseIterable {
        /// zxing-cpp with tryHarder on the stripe's scan lines alone, gathered into an image of
        /// their own (the linear symbologies; a fourteenth of zbar's time or less on the same
        /// lines, BENCHMARKS.md); its EAN/UPC reads pass zbar's rescan.
        case zxing
        /// zbar on the stripe, every `sweepDensity`-th line (the 0.9.0 decoder's sweep).
        case zbar
    }

    /// Which engine reads the tracked regions.
    public enum TrackedEngine: String, Sendable, CaseIterable {
        /// zxing-cpp without tryHarder first (a third to an eighth of zbar's time on these regions,
        /// as many reads: BENCHMARKS.md); zbar on the regions where it did not read every code
        /// the region was planned for.
        case zxing
        /// zbar alone (the decoder before 0.9).
        case zbar
    }

    /// What zbar is set to read: `symbologies`, and EAN-2/EAN-5 wherever an EAN/UPC code is read,
    /// so that an add-on is read with its main code (a supplement alone is never a code: the
    /// decoder drops it). zxing-cpp reads add-ons with their EAN/UPC code anyway.
    public var zbarSymbologies: Set<Symbology> {
        var set = Set(symbologies)
        if !set.isDisjoint(with: [.ean13, .ean8, .upcA, .upcE, .isbn13]) { set.formUnion([.ean2, .ean5]) }
        return set
    }
}
