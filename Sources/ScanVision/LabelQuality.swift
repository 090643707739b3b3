import ScanCore

/// What a label's picture says of why no engine read it: its contrast, how sharp its edges are,
/// and how many pixels its narrowest element spans. Measured on the candidate's region in the
/// frame that gave its picture (the sharpest), and turned into a `NoReadReason` an operator can
/// act on: zoom (`too-small`), focus (`blurred`), light (`low-contrast`, `overexposed`), the
/// config (`unconfigured-symbology`), or the label itself (`damaged`).
public struct LabelQuality: Sendable, Equatable {
    /// The 5th and 95th percentiles of the region's grey levels: the bars' and the paper's.
    public var dark: Double
    public var light: Double
    /// How steep its sharpest edges are against its contrast: the 98th percentile of the step
    /// between neighbouring pixels across the elements, over `contrast` (about 1 for a sharp
    /// print, 1/n for one blurred over n pixels).
    public var edge: Double
    /// The narrowest element's width in pixels (the 10th percentile of the runs across the
    /// elements, between local thresholds); nil when the region holds too few of them.
    public var pixelsPerModule: Double?

    /// `light` − `dark`, 0–255.
    public var contrast: Double { light - dark }

    /// Below this many pixels per module the engines read few labels (BENCHMARKS.md, "Small
    /// modules": about 1 px at best, with a sensor's blur).
    public static let smallestModule = 1.3
    /// Below this contrast (of 255) the bars hardly stand out from the paper.
    public static let lowestContrast = 48.0
    /// Edges spread over two pixels or more. A print in focus measures 0.8–1 (at 1 and 2 px a
    /// module, under a sensor's noise); the faults scene's labels out of focus by a module each
    /// way measured 0.22–0.47 over 8 seeds, which the threshold of 0.34 before called `damaged`
    /// on half of them.
    public static let blurredEdge = 0.5
    /// Paper clipped white and bars greyed: the exposure washed the bars out.
    public static let washedOutDark = 140.0
    public static let clippedLight = 245.0

    public init(dark: Double, light: Double, edge: Double, pixelsPerModule: Double?) {
        self.dark = dark
        self.light = light
        self.edge = edge
        self.pixelsPerModule = pixelsPerModule
    }

    /// Why a label seen whole, and not read, was not read: the first that holds of
    /// `unconfigured-symbology` (it looks like a family no configured symbology has),
    /// `overexposed`, `low-contrast`, `too-small`, `blurred`; else `damaged`.
    public func reason(family: CodeFamily?, configured: Set<CodeFamily>) -> NoReadReason {
        if let family, !configured.isEmpty, !configured.contains(family) { return .unconfiguredSymbology }
        if dark >= Self.washedOutDark && light >= Self.clippedLight { return .overexposed }
        if contrast < Self.lowestContrast { return .lowContrast }
        if let pixelsPerModule, pixelsPerModule < Self.smallestModule { return .tooSmall }
        if edge < Self.blurredEdge { return .blurred }
        return .damaged
    }

    /// Measures the part of `image` inside `box` (clipped to the image).
    public static func measure(_ image: GrayImage, in box: Box) -> LabelQuality {
        let minX = max(0, box.minX)
        let minY = max(0, box.minY)
        let maxX = min(image.width - 1, box.maxX)
        let maxY = min(image.height - 1, box.maxY)
        guard minX < maxX, minY < maxY else { return LabelQuality(dark: 0, light: 0, edge: 0, pixelsPerModule: nil) }
        var histogram = [Int](repeating: 0, count: 256)
        for y in minY...maxY {
            for x in minX...maxX { histogram[Int(image.pixels[y * image.width + x])] += 1 }
        }
        let dark = Double(percentile(histogram, 0.05))
        let light = Double(percentile(histogram, 0.95))
        // The direction that crosses the most elements is the one across them.
        let directions = [(1, 0), (0, 1), (1, 1), (1, -1)]
        let contrast = max(1, light - dark)
        var best: (transitions: Double, runs: [Double], steps: [Int]) = (0, [], [])
        for (dx, dy) in directions {
            let line = lines(
                image, minX: minX, minY: minY, maxX: maxX, maxY: maxY, dx: dx, dy: dy,
                hysteresis: Int(contrast * 0.12))
            let scale = dx != 0 && dy != 0 ? 1.414 : 1
            let density = Double(line.transitions) / max(1, Double(line.length) * scale)
            if density > best.transitions { best = (density, line.runs.map { Double($0) * scale }, line.steps) }
        }
        var steps = best.steps.sorted()
        let edge = steps.isEmpty ? 0 : Double(steps[min(steps.count - 1, steps.count * 98 / 100)]) / contrast
        steps.removeAll()
        let runs = best.runs.sorted()
        let module = runs.count < 8 ? nil : runs[runs.count / 10]
        return LabelQuality(dark: dark, light: light, edge: min(1, edge), pixelsPerModule: module)
    }

    static func percentile(_ histogram: [Int], _ share: Double) -> Int {
        let total = histogram.reduce(0, +)
        let wanted = Int(Double(total) * share)
        var seen = 0
        for (level, count) in histogram.enumerated() {
            seen += count
            if seen > wanted { return level }
        }
        return 255
    }

    /// Scan lines in direction (dx, dy) across the box, every few pixels: the runs between
    /// crossings of a local threshold (the mean of the 9 pixels around, along the line; a pixel
    /// within `hysteresis` of it keeps the side before it, so noise on a wide element crosses
    /// nothing), whole ones only, and the steps between neighbouring pixels where a crossing is.
    static func lines(
        _ image: GrayImage, minX: Int, minY: Int, maxX: Int, maxY: Int, dx: Int, dy: Int, hysteresis: Int
    ) -> (transitions: Int, length: Int, runs: [Int], steps: [Int]) {
        var transitions = 0
        var length = 0
        var runs: [Int] = []
        var steps: [Int] = []
        // Starting points: along the side the lines enter from, every 3rd pixel.
        var starts: [(Int, Int)] = []
        if dy == 0 {
            starts = stride(from: minY, through: maxY, by: 3).map { (minX, $0) }
        } else if dx == 0 {
            starts = stride(from: minX, through: maxX, by: 3).map { ($0, minY) }
        } else {
            let y0 = dy > 0 ? minY : maxY
            starts =
                stride(from: minX, through: maxX, by: 3).map { ($0, y0) }
                + stride(from: minY, through: maxY, by: 3).map { (minX, $0) }
        }
        var values: [Int] = []
        for (startX, startY) in starts {
            values.removeAll(keepingCapacity: true)
            var x = startX
            var y = startY
            while x >= minX && x <= maxX && y >= minY && y <= maxY {
                values.append(Int(image.pixels[y * image.width + x]))
                x += dx
                y += dy
            }
            guard values.count > 12 else { continue }
            length += values.count
            var sum = values[0..<9].reduce(0, +)
            var previous: Bool?
            var runStart: Int?
            for index in 4..<(values.count - 4) {
                if index > 4 { sum += values[index + 4] - values[index - 5] }
                let difference = values[index] * 9 - sum
                guard abs(difference) > hysteresis * 9 else { continue }
                let darkHere = difference < 0
                if let previous, previous != darkHere {
                    transitions += 1
                    steps.append(abs(values[index] - values[index - 1]))
                    if let runStart { runs.append(index - runStart) }
                    runStart = index
                }
                previous = darkHere
            }
        }
        return (transitions, length, runs, steps)
    }
}
