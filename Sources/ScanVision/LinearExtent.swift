import ScanCore

/// Where a linear code read at one end lies along its scan line.
///
/// zbar places a point where a scan line finishes a code, so a code read on one line (or on
/// lines that all finish it at the same end) is known by one end only: a box a few pixels wide at
/// its left end in one frame and at its right end in the next, which the tracker cannot follow
/// (each read starts a track of its own and none is confirmed). The bars themselves show where
/// the code is: bars run across the scan lines, so the lines just before and after the read's
/// line show the same pattern over the code and nowhere else (sensor noise differs from line to
/// line, plain label and belt have no pattern). From the read's point, the line is followed both
/// ways, a window at a time, while that holds; then the lines across while each shows the pattern
/// of the one before it. Found only from the image: no track or region is needed.
public enum LinearExtent {
    /// The span along the line through `point` (its row when `alongRows`, else its column) over
    /// which the lines a little before and after it show the same pattern (bars run across the
    /// lines; sensor noise and plain label do not): nil where there are no bars at the point.
    public static func span(in image: GrayImage, at point: Point, alongRows: Bool) -> ClosedRange<Int>? {
        let length = alongRows ? image.width : image.height
        let across = alongRows ? image.height : image.width
        let (at, line) = alongRows ? (point.x, point.y) : (point.y, point.x)
        guard length >= window, (0..<length).contains(at), (0..<across).contains(line) else { return nil }
        let before = max(0, line - lineStep)
        let after = min(across - 1, line + lineStep)
        guard before < after else { return nil }
        func bars(_ start: Int) -> Bool {
            let range = start...(start + window - 1)
            return correlation(
                pattern(image, line: before, over: range, alongRows: alongRows),
                pattern(image, line: after, over: range, alongRows: alongRows)) >= minCorrelation
        }
        let first = min(max(0, at - window / 2), length - window)
        guard bars(first) else { return nil }
        var low = first
        while low - window / 2 >= 0, bars(low - window / 2) { low -= window / 2 }
        var high = first
        while high + window / 2 + window <= length, bars(high + window / 2) { high += window / 2 }
        return low...(high + window - 1)
    }

    /// A thin read (a linear code known by one end: at most `thin` pixels along its scan
    /// direction) widened to the span its bars cover on the line through its points' middle;
    /// other reads, and reads where no bars are found, are returned as they are.
    public static func widened(_ detection: Detection, in image: GrayImage, thin: Int = 4) -> Detection {
        guard detection.symbology.isLinear, let box = detection.box else { return detection }
        let alongRows = detection.readsAlongRows
        guard (alongRows ? box.width : box.height) <= thin else { return detection }
        let middle = Point(x: (box.minX + box.maxX) / 2, y: (box.minY + box.maxY) / 2)
        guard let span = span(in: image, at: middle, alongRows: alongRows) else { return detection }
        let lines = lines(in: image, span: span, through: alongRows ? middle.y : middle.x, alongRows: alongRows)
        var wide = detection
        if alongRows {
            wide.points += [
                Point(x: span.lowerBound, y: lines.lowerBound), Point(x: span.upperBound, y: lines.upperBound),
            ]
        } else {
            wide.points += [
                Point(x: lines.lowerBound, y: span.lowerBound), Point(x: lines.upperBound, y: span.upperBound),
            ]
        }
        return wide
    }

    /// The lines (rows when `alongRows`, else columns) through which the bars seen over `span` on
    /// line `through` run on: each next line (`lineStep` on) must show the same pattern over the
    /// span as the one before it (a skewed code drifts a little from line to line, not between
    /// neighbours); the plain label above and below the bars does not.
    public static func lines(in image: GrayImage, span: ClosedRange<Int>, through line: Int, alongRows: Bool)
        -> ClosedRange<Int>
    {
        let across = alongRows ? image.height : image.width
        func pattern(_ l: Int) -> [Int] { Self.pattern(image, line: l, over: span, alongRows: alongRows) }
        var bounds = (low: line, high: line)
        for step in [-lineStep, lineStep] {
            var previous = pattern(line)
            var next = line + step
            while (0..<across).contains(next), Self.correlation(previous, pattern(next)) >= minCorrelation {
                if step < 0 { bounds.low = next } else { bounds.high = next }
                previous = pattern(next)
                next += step
            }
        }
        return bounds.low...bounds.high
    }

    /// The grey levels of line `line` (a row when `alongRows`, else a column) over `range` of it.
    static func pattern(_ image: GrayImage, line: Int, over range: ClosedRange<Int>, alongRows: Bool) -> [Int] {
        range.map { i in Int(image.pixels[alongRows ? line * image.width + i : i * image.width + line]) }
    }

    /// Lines between the patterns compared while following the bars across.
    static let lineStep = 2
    /// How alike two lines' patterns must be to be the same bars (Pearson's r).
    static let minCorrelation = 0.6

    static func correlation(_ a: [Int], _ b: [Int]) -> Double {
        let n = Double(a.count)
        guard a.count == b.count, a.count >= 8 else { return 0 }
        let meanA = Double(a.reduce(0, +)) / n
        let meanB = Double(b.reduce(0, +)) / n
        var covariance = 0.0
        var varianceA = 0.0
        var varianceB = 0.0
        for (x, y) in zip(a, b) {
            let da = Double(x) - meanA
            let db = Double(y) - meanB
            covariance += da * db
            varianceA += da * da
            varianceB += db * db
        }
        guard varianceA > 0, varianceB > 0 else { return 0 }
        return covariance / (varianceA * varianceB).squareRoot()
    }

    /// Pixels of line compared at a time when following the bars along the line: wider than a
    /// code's widest space (four modules), narrower than the smallest code.
    static let window = 16
}
