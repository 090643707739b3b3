import ScanCore
import ScanVision

/// What `scan-agent tune` measures on a clip of a line and what it suggests (docs/cameras.md):
/// from the sightings of a replay with every symbology on, the symbologies present, the module
/// size in pixels, how far codes move a frame, how many frames each is in view, and from them the
/// longest exposure that keeps motion blur under half a module. Pure: the caller decodes.
public struct LineSetup: Sendable, Equatable {
    /// One code the replay read: what, and where it was first and last.
    public struct Code: Sendable, Equatable {
        public var symbology: Symbology
        public var value: String
        public var firstFrame: Int
        public var lastFrame: Int
        public var firstBox: [Point]
        public var lastBox: [Point]
        public init(
            symbology: Symbology, value: String, firstFrame: Int, lastFrame: Int, firstBox: [Point], lastBox: [Point]
        ) {
            self.symbology = symbology
            self.value = value
            self.firstFrame = firstFrame
            self.lastFrame = lastFrame
            self.firstBox = firstBox
            self.lastBox = lastBox
        }
    }

    public var symbologies: [Symbology]
    /// Median pixels a module (linear codes whose module count follows from their value).
    public var modulePixels: Double?
    /// Median pixels a code moves between frames.
    public var pixelsPerFrame: Double
    /// Median frames a code is in view (first to last decode).
    public var framesInView: Int
    /// The longest exposure keeping blur under half a module at the measured speed, in µs.
    public var longestExposureMicroseconds: Double?
    /// The band of the frame the codes crossed (fractions), with a margin.
    public var region: RegionOfInterest
    public var codes: Int

    /// Modules of a linear code of `value` (bars and spaces, no quiet zones), where the
    /// symbology fixes them; nil otherwise.
    public static func modules(_ symbology: Symbology, value: String) -> Double? {
        switch symbology {
        case .ean13, .upcA, .isbn13: return 95
        case .ean8: return 67
        case .upcE: return 51
        case .code128:
            // As encoders do: runs of four digits or more (a whole value of an even number of
            // digits) in code set C, two digits a symbol, with a switch; the rest one a symbol.
            // Start and check symbols of 11 modules and the stop of 13 around them.
            let characters = Array(value)
            var symbols = 0
            var index = 0
            var inSetC = false
            while index < characters.count {
                var run = 0
                while index + run < characters.count, characters[index + run].isASCII,
                    characters[index + run].isNumber
                {
                    run += 1
                }
                if run >= 4 || (index == 0 && run == characters.count && run >= 2 && run % 2 == 0) {
                    symbols += run / 2 + (index == 0 || inSetC ? 0 : 1)
                    index += run / 2 * 2
                    inSetC = true
                } else {
                    if inSetC { symbols += 1 }
                    inSetC = false
                    symbols += 1
                    index += 1
                }
            }
            return Double(11 * (symbols + 2) + 13)
        case .code39: return Double(13 * (value.count + 2) - 1)  // wide:narrow 2:1, a narrow gap between characters
        case .interleaved2of5: return Double(value.count / 2 * 14 + 9)  // wide:narrow 2:1, pairs of 14 modules
        default: return nil
        }
    }

    /// Analyses `codes` of a clip of `width`×`height` at `framesPerSecond`; nil when nothing was read.
    public static func analyse(_ codes: [Code], width: Int, height: Int, framesPerSecond: Double) -> LineSetup? {
        guard !codes.isEmpty else { return nil }
        func median(_ values: [Double]) -> Double? {
            guard !values.isEmpty else { return nil }
            let sorted = values.sorted()
            return sorted[sorted.count / 2]
        }
        func center(_ box: [Point]) -> (Double, Double) {
            (
                Double(box.map(\.x).reduce(0, +)) / Double(max(1, box.count)),
                Double(box.map(\.y).reduce(0, +)) / Double(max(1, box.count))
            )
        }
        var speeds: [Double] = []
        var moduleSizes: [Double] = []
        var minY = height
        var maxY = 0
        for code in codes {
            let frames = code.lastFrame - code.firstFrame
            if frames > 0 {
                let (x0, y0) = center(code.firstBox)
                let (x1, y1) = center(code.lastBox)
                speeds.append(((x1 - x0) * (x1 - x0) + (y1 - y0) * (y1 - y0)).squareRoot() / Double(frames))
            }
            if let count = modules(code.symbology, value: code.value), code.symbology.isLinear {
                let xs = code.lastBox.map(\.x)
                if let low = xs.min(), let high = xs.max(), high > low {
                    moduleSizes.append(Double(high - low) / count)
                }
            }
            for point in code.firstBox + code.lastBox {
                minY = min(minY, point.y)
                maxY = max(maxY, point.y)
            }
        }
        let speed = median(speeds) ?? 0
        let module = median(moduleSizes)
        var exposure: Double?
        if let module, speed > 0 { exposure = 0.5 * module / speed / framesPerSecond * 1_000_000 }
        let margin = max(20, (maxY - minY) / 4)
        let top = max(0, minY - margin)
        let bottom = min(height, maxY + margin)
        return LineSetup(
            symbologies: Array(Set(codes.map(\.symbology))).sorted { $0.rawValue < $1.rawValue },
            modulePixels: module, pixelsPerFrame: speed,
            framesInView: Int(median(codes.map { Double($0.lastFrame - $0.firstFrame + 1) }) ?? 0),
            longestExposureMicroseconds: exposure,
            region: RegionOfInterest(
                x: 0, y: Double(top) / Double(height), width: 1, height: Double(bottom - top) / Double(height)),
            codes: codes.count)
    }
}
