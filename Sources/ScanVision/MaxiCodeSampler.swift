import Foundation
import ScanCore

/// MaxiCode where it is not drawn square to the image. zxing-cpp reads MaxiCode only "pure": the
/// symbol upright, its rows along the image's rows, nothing else around it. A UPS label in a photo
/// or on a belt is none of that. This finds each MaxiCode's bullseye, fits the symbol's hexagonal
/// grid of 30 × 33 modules around it (the grid's turn, pitch and an affine skew for the camera's
/// slant), samples every module, and draws the symbol again pure, once for each of the six ways
/// the hexagonal grid can be turned onto itself (the bullseye alone does not say which way is up):
/// zxing-cpp's error correction decides which drawing is the symbol.
///
/// How, and why so: the bullseye is three dark rings around a light centre, eleven runs of about
/// one width on any line through its centre, a pattern data modules do not make over a few lines.
/// Its outer diameter is nine module pitches (measured on zxing-cpp's own test symbols), which
/// fixes the grid's scale; its centre is the grid's module at row 16, column 14. The turn is found
/// by sampling the grid's data modules at every half degree of 60° and keeping the turn whose
/// module centres are darkest (the grid on the printed dots), then the six affine parameters are
/// refined the same way. Module values are thresholded midway between the dark and the light
/// samples (a local mean called the many light modules inside light areas dark at random).
public enum MaxiCodeSampler {
    /// Where a symbol's bullseye was found: its centre and the outer diameter of its rings.
    public struct Bullseye: Sendable, Equatable {
        public var x: Double
        public var y: Double
        public var diameter: Double
    }

    /// A symbol's modules drawn pure, and the corners of the symbol in the image.
    public struct Drawing: Sendable {
        public var image: GrayImage
        public var corners: [Point]
    }

    static let rows = 33
    static let columns = 30
    /// Sampling the drawing: zxing-cpp reads a module at the centre of its cell in the symbol's
    /// black bounding box, odd rows half a cell to the right.
    static let cell = 10
    static let margin = 20
    /// The rows of hexagonal modules lie this many pitches apart.
    static let rowSpacing = 3.0.squareRoot() / 2

    /// Bullseyes in the image, most certain first (the most lines crossing the pattern).
    public static func bullseyes(in image: GrayImage, limit: Int = 4) -> [Bullseye] {
        guard image.width >= 60, image.height >= 60 else { return [] }
        var candidates: [Candidate] = []
        for y in stride(from: 0, to: image.height, by: 2) {
            let line = (0..<image.width).map { Int(image.pixels[y * image.width + $0]) }
            for half in windows(image.width) {
                candidates += ringCrossings(darkPixels(line: line, half: half)).map {
                    Candidate(x: $0.center, y: y, ring: $0.ring, diameter: $0.length, half: half)
                }
            }
        }
        // Neighbours counted once, on candidates sorted by row (a noisy photo has thousands).
        candidates.sort { $0.y < $1.y }
        var counts = [Int](repeating: 0, count: candidates.count)
        for (index, candidate) in candidates.enumerated() {
            var other = index
            while other < candidates.count, Double(candidates[other].y - candidate.y) < 2 * candidate.ring {
                if near(candidates[other], candidate) { counts[index] += 1 }
                other += 1
            }
            other = index - 1
            while other >= 0, Double(candidate.y - candidates[other].y) < 2 * candidate.ring {
                if near(candidates[other], candidate) { counts[index] += 1 }
                other -= 1
            }
        }
        var found: [Bullseye] = []
        var taken = [Bool](repeating: false, count: candidates.count)
        for seedIndex in candidates.indices.sorted(by: { counts[$0] > counts[$1] }) where found.count < limit {
            // A ring pattern on a few lines only: a chance pattern of data modules or text.
            guard counts[seedIndex] >= 3 else { break }
            guard !taken[seedIndex] else { continue }
            let seed = candidates[seedIndex]
            let members = candidates.indices.filter { !taken[$0] && near(candidates[$0], seed) }
            for member in members { taken[member] = true }
            let cluster = members.map { candidates[$0] }
            // A crossing is through the centre when the column through its middle crosses the
            // rings there too (a row through the rings off centre, or a pattern begun a run early,
            // is not).
            var verified: [(x: Double, y: Double, diameter: Double)] = []
            var columns: [Int: [(center: Double, ring: Double, length: Double)]] = [:]
            for candidate in cluster {
                let column = min(max(Int(candidate.x.rounded()), 0), image.width - 1)
                let key = column * 4096 + candidate.half
                if columns[key] == nil {
                    let line = (0..<image.height).map { Int(image.pixels[$0 * image.width + column]) }
                    columns[key] = ringCrossings(darkPixels(line: line, half: candidate.half))
                }
                if let across = columns[key]?.first(where: { abs($0.center - Double(candidate.y)) <= candidate.ring }
                ) {
                    verified.append((candidate.x, across.center, (candidate.diameter + across.length) / 2))
                }
            }
            guard !verified.isEmpty else { continue }
            var x = verified.map(\.x).sorted()[verified.count / 2]
            var y = verified.map(\.y).sorted()[verified.count / 2]
            let diameter = verified.map(\.diameter).sorted()[verified.count / 2]
            // The lines crossing the rings are not all through the centre: the centre is where
            // the light spot's run is centred both ways.
            for _ in 0..<3 {
                let column = Int(x.rounded())
                let columnDark = darkPixels(
                    line: (0..<image.height).map { Int(image.pixels[$0 * image.width + column]) }, half: seed.half)
                if let middle = middleOfRun(columnDark, around: Int(y.rounded())) { y = middle }
                let row = Int(y.rounded())
                let rowDark = darkPixels(
                    line: (0..<image.width).map { Int(image.pixels[row * image.width + $0]) }, half: seed.half)
                if let middle = middleOfRun(rowDark, around: Int(x.rounded())) { x = middle }
            }
            found.append(Bullseye(x: x, y: y, diameter: diameter))
        }
        return found
    }

    /// The symbol around a bullseye drawn pure, in the six turns of its grid; empty when no grid fits.
    /// Drawn as they are taken: a reader that stops at the first turn it reads draws no more.
    public static func drawings(around bullseye: Bullseye, in image: GrayImage) -> some Sequence<Drawing> {
        let fit = GridFit(bullseye: bullseye, image: image)
        return (0..<(fit == nil ? 0 : 6)).lazy.compactMap { turn in fit?.drawing(turn: turn) }
    }

    // MARK: - The bullseye

    /// A line's crossing of the rings, a point on it.
    struct Candidate {
        var x: Double
        var y: Int
        var ring: Double
        var diameter: Double
        /// The half-window it was seen dark in.
        var half: Int
    }

    /// The half-widths of the running means a line is thresholded with: a ring shows dark against a
    /// mean over at least about two rings, and lighting varies over much more; two windows cover
    /// rings of 3 to about 12 px on a small image and to about 50 px at 4000 px wide.
    static func windows(_ count: Int) -> [Int] { [max(8, count / 80), max(24, count / 27)] }

    /// Pixels darker than the running mean over `half` pixels either side by 5 levels.
    static func darkPixels(line: [Int], half: Int) -> [Bool] {
        let count = line.count
        var prefix = [Int](repeating: 0, count: count + 1)
        for index in 0..<count { prefix[index + 1] = prefix[index] + line[index] }
        return (0..<count).map { index in
            let low = max(0, index - half)
            let high = min(count, index + half + 1)
            let mean = (prefix[high] - prefix[low]) / (high - low)
            return line[index] < mean - 5
        }
    }

    /// Where a line crosses a bullseye through its centre: eleven runs, dark first, the ten rings
    /// about as wide as each other and the light centre one to three and a half times as wide.
    static func ringCrossings(_ dark: [Bool]) -> [(center: Double, ring: Double, length: Double)] {
        var starts: [Int] = []
        for index in dark.indices where index == 0 || dark[index] != dark[index - 1] { starts.append(index) }
        guard starts.count >= 11 else { return [] }
        let ends = Array(starts.dropFirst()) + [dark.count]
        let runs = zip(starts, ends).map { $1 - $0 }
        var found: [(center: Double, ring: Double, length: Double)] = []
        for first in 0...(runs.count - 11) where dark[starts[first]] {
            let window = runs[first..<(first + 11)]
            let rings = (Array(window.prefix(5)) + Array(window.suffix(5))).sorted()
            let ring = Double(rings[4] + rings[5]) / 2
            guard ring >= 3 else { continue }
            let tolerance = max(1.5, ring / 2)
            guard rings.allSatisfy({ abs(Double($0) - ring) <= tolerance }) else { continue }
            let centre = Double(window[first + 5])
            guard centre >= ring, centre <= 3.5 * ring else { continue }
            found.append(
                (center: Double(starts[first + 5]) + centre / 2, ring: ring, length: Double(window.reduce(0, +))))
        }
        return found
    }

    private static func near(_ a: Candidate, _ b: Candidate) -> Bool {
        abs(a.x - b.x) < b.ring && abs(Double(a.y - b.y)) < 2 * b.ring
    }

    /// The middle of the light run at `position`, or nil where the line is dark there.
    static func middleOfRun(_ dark: [Bool], around position: Int) -> Double? {
        guard dark.indices.contains(position), !dark[position] else { return nil }
        var low = position
        while low > 0 && !dark[low - 1] { low -= 1 }
        var high = position
        while high < dark.count - 1 && !dark[high + 1] { high += 1 }
        return Double(low + high) / 2
    }

    // MARK: - The grid

    /// A module's place in the grid relative to the bullseye's centre (row 16, column 14), in
    /// pitches along the rows and rows across them.
    static func place(row: Int, column: Int) -> (x: Double, y: Double) {
        (Double(column) + 0.5 + (row % 2 == 1 ? 0.5 : 0) - 14.5, Double(row - 16))
    }

    /// Every module's place (odd rows hold 29).
    static let places: [(row: Int, column: Int, x: Double, y: Double)] = (0..<rows).flatMap { row in
        (0..<(row % 2 == 1 ? columns - 1 : columns)).map { column in
            let at = place(row: row, column: column)
            return (row, column, at.x, at.y)
        }
    }

    /// The data modules, outside the bullseye and its orientation modules.
    static let dataPlaces: [(x: Double, y: Double)] = places.compactMap { module in
        let radius = (module.x * module.x + module.y * rowSpacing * module.y * rowSpacing).squareRoot()
        return radius > 7.6 ? (module.x, module.y) : nil
    }

    /// The grid laid on the image: a grid place (x, y) is at `a·x + b·y + origin` (b already holds
    /// the rows' spacing).
    struct GridFit {
        var a: (x: Double, y: Double)
        var b: (x: Double, y: Double)
        var origin: (x: Double, y: Double)
        let image: GrayImage
        let threshold: Double

        init?(bullseye: Bullseye, image: GrayImage) {
            self.image = image
            // Midway between the dark and the light of the symbol's area.
            let reach = Int(bullseye.diameter * 2)
            var histogram = [Int](repeating: 0, count: 256)
            var total = 0
            for y in stride(
                from: max(0, Int(bullseye.y) - reach), to: min(image.height, Int(bullseye.y) + reach), by: 2)
            {
                for x in stride(
                    from: max(0, Int(bullseye.x) - reach), to: min(image.width, Int(bullseye.x) + reach), by: 2)
                {
                    histogram[Int(image.pixels[y * image.width + x])] += 1
                    total += 1
                }
            }
            guard total > 100 else { return nil }
            func percentile(_ share: Double) -> Int {
                var seen = 0
                for level in 0..<256 {
                    seen += histogram[level]
                    if Double(seen) >= share * Double(total) { return level }
                }
                return 255
            }
            let dark = percentile(0.05)
            let light = percentile(0.95)
            guard light - dark >= 40 else { return nil }
            threshold = Double(dark + light) / 2
            origin = (bullseye.x, bullseye.y)
            a = (0, 0)
            b = (0, 0)
            // The turn (modulo 60°) and pitch whose module centres are darkest.
            let expected = bullseye.diameter / 9
            var best = -1.0
            for pitchStep in -6...6 {
                let pitch = expected * (1 + Double(pitchStep) * 0.01)
                for halfDegree in 0..<120 {
                    let angle = Double(halfDegree) * 0.5 * Double.pi / 180
                    let candidate = Self.turned(angle: angle, pitch: pitch)
                    let score = darkness(a: candidate.a, b: candidate.b, origin: origin)
                    if score > best { (best, a, b) = (score, candidate.a, candidate.b) }
                }
            }
            guard best > 0 else { return nil }
            refine(pitch: expected, score: best)
        }

        static func turned(angle: Double, pitch: Double) -> (a: (x: Double, y: Double), b: (x: Double, y: Double)) {
            let (c, s) = (cos(angle), sin(angle))
            return ((c * pitch, s * pitch), (-s * pitch * rowSpacing, c * pitch * rowSpacing))
        }

        /// How dark the data modules' centres are, on average, below the threshold.
        func darkness(a: (x: Double, y: Double), b: (x: Double, y: Double), origin: (x: Double, y: Double)) -> Double {
            var sum = 0.0
            for place in MaxiCodeSampler.dataPlaces {
                let level = sample(
                    x: a.x * place.x + b.x * place.y + origin.x, y: a.y * place.x + b.y * place.y + origin.y)
                sum += max(threshold - level, 0)
            }
            return sum / Double(MaxiCodeSampler.dataPlaces.count)
        }

        func sample(x: Double, y: Double) -> Double {
            let column = min(max(Int(x.rounded()), 0), image.width - 1)
            let row = min(max(Int(y.rounded()), 0), image.height - 1)
            return Double(image.pixels[row * image.width + column])
        }

        /// The six parameters moved one at a time while the grid gets darker, in halving steps.
        mutating func refine(pitch: Double, score: Double) {
            let centre = origin
            var current = score
            var step = 0.02 * pitch
            for _ in 0..<400 where step >= 0.0005 * pitch {
                var improved = false
                for parameter in 0..<6 {
                    for sign in [1.0, -1.0] {
                        var (na, nb, no) = (a, b, origin)
                        let move = sign * step
                        switch parameter {
                        case 0: na.x += move
                        case 1: na.y += move
                        case 2: nb.x += move
                        case 3: nb.y += move
                        case 4: no.x += 2 * move
                        default: no.y += 2 * move
                        }
                        // The bullseye's centre is the grid's: the origin stays near it.
                        let drift = ((no.x - centre.x) * (no.x - centre.x) + (no.y - centre.y) * (no.y - centre.y))
                        guard drift.squareRoot() < 0.3 * pitch else { continue }
                        let score = darkness(a: na, b: nb, origin: no)
                        if score > current { (current, a, b, origin, improved) = (score, na, nb, no, true) }
                    }
                }
                if !improved { step /= 2 }
            }
        }

        /// The modules drawn pure with the grid turned by `turn` sixths of a turn.
        func drawing(turn: Int) -> Drawing {
            let angle = Double(turn) * Double.pi / 3
            let (c, s) = (cos(angle), sin(angle))
            // Turning in the grid's own square measure: undo the rows' spacing, turn, redo it.
            let ux = (x: a.x, y: a.y)
            let uy = (x: b.x / MaxiCodeSampler.rowSpacing, y: b.y / MaxiCodeSampler.rowSpacing)
            let ta = (x: ux.x * c + uy.x * s, y: ux.y * c + uy.y * s)
            let tbUnit = (x: -ux.x * s + uy.x * c, y: -ux.y * s + uy.y * c)
            let tb = (x: tbUnit.x * MaxiCodeSampler.rowSpacing, y: tbUnit.y * MaxiCodeSampler.rowSpacing)
            let cell = MaxiCodeSampler.cell
            let margin = MaxiCodeSampler.margin
            let width = MaxiCodeSampler.columns * cell + 2 * margin
            let height = MaxiCodeSampler.rows * cell + 2 * margin
            var pixels = [UInt8](repeating: 255, count: width * height)
            for module in MaxiCodeSampler.places {
                let level = sample(
                    x: ta.x * module.x + tb.x * module.y + origin.x, y: ta.y * module.x + tb.y * module.y + origin.y)
                guard level < threshold else { continue }
                let left = margin + module.column * cell + (module.row % 2 == 1 ? cell / 2 : 0)
                let top = margin + module.row * cell
                for y in top..<(top + cell) {
                    for x in left..<min(left + cell, width) { pixels[y * width + x] = 0 }
                }
            }
            // A one-pixel frame on the symbol's cells: zxing-cpp takes the symbol's extent from its
            // black bounding box, which modules alone leave short wherever the edge modules are
            // light. No module centre lies on it.
            let right = margin + MaxiCodeSampler.columns * cell - 1
            let bottom = margin + MaxiCodeSampler.rows * cell - 1
            for x in margin...right {
                pixels[margin * width + x] = 0
                pixels[bottom * width + x] = 0
            }
            for y in margin...bottom {
                pixels[y * width + margin] = 0
                pixels[y * width + right] = 0
            }
            func corner(_ x: Double, _ y: Double) -> Point {
                Point(
                    x: Int((ta.x * x + tb.x * y + origin.x).rounded()),
                    y: Int((ta.y * x + tb.y * y + origin.y).rounded()))
            }
            let corners = [corner(-15, -16.5), corner(15.5, -16.5), corner(15.5, 16.5), corner(-15, 16.5)]
            return Drawing(image: GrayImage(width: width, height: height, pixels: pixels), corners: corners)
        }
    }
}
