import ScanCore

/// Splits a zbar detection that stands for several physical codes.
///
/// Within one image zbar merges symbols of the same type and value into one symbol and appends
/// the scan points of all of them. For linear codes those points are where a decode completed on
/// a scan line, and zbar scans alternate lines in opposite directions: right-to-left lines end on
/// the left part of a code, left-to-right lines on its right part. Along one scan line, then, a
/// left-to-right point followed by a right-to-left point marks the gap between two codes; and a
/// gap of several scan lines separates codes stacked one behind the other. 2D codes come back
/// as separate symbols already.
public struct DetectionSplitter: Sendable {
    /// zbar's scan density: lines are this many pixels apart.
    public var density: Int
    /// Scan lines without a point that still count as one code (damage, glare).
    public var maxMissingLines: Int

    public init(density: Int = 1, maxMissingLines: Int = 6) {
        self.density = max(1, density)
        self.maxMissingLines = maxMissingLines
    }

    public func split(_ detection: Detection) -> [Detection] {
        guard detection.symbology.isLinear, detection.points.count >= 4 else { return [detection] }
        let horizontal = detection.readsAlongRows
        // Work in (along, across): `along` is the coordinate along the scan line, `line` its index.
        let samples = detection.points.map { point in
            horizontal ? (along: point.x, line: point.y) : (along: point.y, line: point.x)
        }
        let segments = lineSegments(samples)
        guard segments.count > 1 else { return [detection] }
        let groups = connect(segments)
        guard groups.count > 1 else { return [detection] }
        // Each part keeps its points in zbar's scan order, so splitting a part again changes nothing.
        var groupOf: [Point: Int] = [:]
        for (index, group) in groups.enumerated() {
            for segment in group {
                for (along, line) in zip(segment.alongs, segment.lines) {
                    groupOf[horizontal ? Point(x: along, y: line) : Point(x: line, y: along)] = index
                }
            }
        }
        var parts = [[Point]](repeating: [], count: groups.count)
        for point in detection.points {
            if let index = groupOf[point] { parts[index].append(point) }
        }
        return parts.filter { !$0.isEmpty }.map { points in
            var part = detection
            part.points = points
            return part
        }
    }

    /// Whether an EAN/UPC detection's halves belong together. zbar decodes the two halves of an
    /// EAN separately (the left half completes on right-to-left lines, the right half on
    /// left-to-right ones) and can join halves of two labels on one line. In a real code the
    /// halves are about equally long and meet at the centre guard; in such a phantom they lie
    /// apart. Nil when the points do not show both halves whole.
    public func eanHalvesFit(_ detection: Detection) -> Bool? {
        eanExtent(detection).map { $0.fits }
    }

    /// The EAN's extent along the scan lines as its halves show it, and whether they fit.
    public func eanExtent(_ detection: Detection) -> (fits: Bool, low: Int, high: Int)? {
        let horizontal = detection.readsAlongRows
        var lines: [(line: Int, alongs: [Int])] = []
        var lineIndex: [Int: Int] = [:]
        for point in detection.points {
            let (along, line) = horizontal ? (point.x, point.y) : (point.y, point.x)
            if let index = lineIndex[line] {
                lines[index].alongs.append(along)
            } else {
                lineIndex[line] = lines.count
                lines.append((line, [along]))
            }
        }
        guard let leftToRightParity = Self.leftToRightParity(lines, density: density) else { return nil }
        var leftHalves: [(Int, Int)] = []
        var rightHalves: [(Int, Int)] = []
        for line in lines where line.alongs.count == 2 {
            guard let low = line.alongs.min(), let high = line.alongs.max() else { continue }
            let span = (low, high)
            if (line.line / density) & 1 == leftToRightParity {
                rightHalves.append(span)
            } else {
                leftHalves.append(span)
            }
        }
        guard !leftHalves.isEmpty, !rightHalves.isEmpty else { return nil }
        func median(_ values: [Int]) -> Int { values.sorted()[values.count / 2] }
        let leftStart = median(leftHalves.map(\.0))
        let leftEnd = median(leftHalves.map(\.1))
        let rightStart = median(rightHalves.map(\.0))
        let rightEnd = median(rightHalves.map(\.1))
        let total = rightEnd - leftStart
        guard total > 0 else { return (false, leftStart, rightEnd) }
        let gap = rightStart - leftEnd
        let imbalance = abs((leftEnd - leftStart) - (rightEnd - rightStart))
        let fits = gap >= -total / 10 && gap * 100 <= total * 15 && imbalance * 100 <= total * 25
        return (fits, leftStart, rightEnd)
    }

    /// Drops points that lie beyond `low…high` along the scan lines (by a tenth of the width):
    /// strays that zbar attached to a real code.
    public static func trim(_ detection: Detection, low: Int, high: Int) -> Detection {
        let horizontal = detection.readsAlongRows
        let margin = (high - low) / 10 + 2
        var trimmed = detection
        trimmed.points = detection.points.filter { point in
            let along = horizontal ? point.x : point.y
            return along >= low - margin && along <= high + margin
        }
        return trimmed
    }

    /// zbar appends points in scan order: its horizontal pass goes down the image line by line,
    /// its vertical pass left to right. Whichever coordinate never goes back is the one the scan
    /// steps along.
    public static func scansHorizontally(_ points: [Point]) -> Bool {
        var forwardY = 0
        var forwardX = 0
        for (a, b) in zip(points, points.dropFirst()) {
            if b.y >= a.y { forwardY += 1 }
            if b.x >= a.x { forwardX += 1 }
        }
        return forwardY >= forwardX
    }

    struct Segment {
        /// The first scan line of the segment (a segment may join two neighbouring lines).
        var line: Int
        var alongs: [Int]
        /// The scan line of each point.
        var lines: [Int]
        var low: Int { alongs.min() ?? 0 }
        var high: Int { alongs.max() ?? 0 }
    }

    /// Cuts each scan line's points into per-code segments.
    private func lineSegments(_ samples: [(along: Int, line: Int)]) -> [Segment] {
        // Points of one line are contiguous in zbar's list and in scan order.
        var lines: [(line: Int, alongs: [Int])] = []
        var lineIndex: [Int: Int] = [:]
        for sample in samples {
            if let index = lineIndex[sample.line] {
                lines[index].alongs.append(sample.along)
            } else {
                lineIndex[sample.line] = lines.count
                lines.append((sample.line, [sample.along]))
            }
        }
        lines.sort { $0.line < $1.line }
        guard let leftToRightParity = Self.leftToRightParity(lines, density: density) else {
            // Every line runs the same way: nothing to pair; lines can still be split by gaps.
            return lines.map {
                Segment(line: $0.line, alongs: $0.alongs, lines: [Int](repeating: $0.line, count: $0.alongs.count))
            }
        }

        // Pair each line with its neighbour of the other direction and split at LTR→RTL steps.
        var segments: [Segment] = []
        var index = 0
        while index < lines.count {
            var group = [lines[index]]
            if index + 1 < lines.count, lines[index + 1].line - lines[index].line <= density,
                (lines[index + 1].line / density) & 1 != (lines[index].line / density) & 1
            {
                group.append(lines[index + 1])
                index += 2
            } else {
                index += 1
            }
            var tagged: [(along: Int, line: Int, leftToRight: Bool)] = []
            for line in group {
                let leftToRight = (line.line / density) & 1 == leftToRightParity
                tagged += line.alongs.map { ($0, line.line, leftToRight) }
            }
            tagged.sort { $0.along < $1.along }
            let lineIndex = group[0].line
            var current = Segment(line: lineIndex, alongs: [], lines: [])
            var previousLeftToRight = false
            for point in tagged {
                if !current.alongs.isEmpty && previousLeftToRight && !point.leftToRight {
                    segments.append(current)
                    current = Segment(line: lineIndex, alongs: [], lines: [])
                }
                current.alongs.append(point.along)
                current.lines.append(point.line)
                previousLeftToRight = point.leftToRight
            }
            if !current.alongs.isEmpty { segments.append(current) }
        }
        return Self.splitOverlong(segments)
    }

    /// A line pair that saw only the left part of one code and the right part of its neighbour
    /// shows no direction change between them, and its segment spans both. Segments much longer
    /// than a typical code are cut at their widest gap.
    static func splitOverlong(_ segments: [Segment]) -> [Segment] {
        let lengths = segments.map { $0.high - $0.low }.filter { $0 > 0 }.sorted()
        guard lengths.count >= 3 else { return segments }
        let typical = lengths[lengths.count / 2]
        var result: [Segment] = []
        var pending = segments
        while let segment = pending.popLast() {
            guard segment.high - segment.low > typical * 3 / 2, segment.alongs.count >= 2 else {
                result.append(segment)
                continue
            }
            let sorted = zip(segment.alongs, segment.lines).sorted { $0.0 < $1.0 }
            var widest = 0
            for index in 1..<sorted.count
            where sorted[index].0 - sorted[index - 1].0 > sorted[widest + 1].0 - sorted[widest].0 {
                widest = index - 1
            }
            let left = sorted[...widest]
            let right = sorted[(widest + 1)...]
            pending.append(Segment(line: segment.line, alongs: left.map(\.0), lines: left.map(\.1)))
            pending.append(Segment(line: segment.line, alongs: right.map(\.0), lines: right.map(\.1)))
        }
        return result.reversed()
    }

    /// Which parity of line index zbar scanned left to right (it alternates line by line).
    /// Learnt from lines holding several points (their order shows the direction); failing that,
    /// right-to-left lines end on the left part of a code, so their points lie further left.
    static func leftToRightParity(_ lines: [(line: Int, alongs: [Int])], density: Int) -> Int? {
        var votes = [0, 0]
        var sums = [0, 0]
        var counts = [0, 0]
        for line in lines {
            let parity = (line.line / density) & 1
            if line.alongs.count >= 2, let first = line.alongs.first, let last = line.alongs.last, first != last {
                votes[parity] += last > first ? 1 : -1
            }
            sums[parity] += line.alongs.reduce(0, +)
            counts[parity] += line.alongs.count
        }
        if votes[0] != 0 { return votes[0] > 0 ? 0 : 1 }
        if votes[1] != 0 { return votes[1] > 0 ? 1 : 0 }
        guard counts[0] > 0, counts[1] > 0 else { return nil }
        let mean0 = Double(sums[0]) / Double(counts[0])
        let mean1 = Double(sums[1]) / Double(counts[1])
        return mean0 >= mean1 ? 0 : 1
    }

    /// Joins segments of neighbouring lines whose extents overlap: one group per physical code.
    /// Segments that span a code (points of both directions) are joined first; lines that saw
    /// only one end of a code (a single point) are then attached to the group whose extent covers
    /// them, so a code read completely on few lines is not cut into pieces.
    private func connect(_ segments: [Segment]) -> [[Segment]] {
        var parent = Array(segments.indices)
        func root(_ i: Int) -> Int {
            var i = i
            while parent[i] != i {
                parent[i] = parent[parent[i]]
                i = parent[i]
            }
            return i
        }
        func overlaps(_ a: (low: Int, high: Int), _ b: (low: Int, high: Int)) -> Bool {
            let slack = max(4, min(a.high - a.low, b.high - b.low) / 5)
            return a.low <= b.high + slack && b.low <= a.high + slack
        }
        let lineGap = (maxMissingLines + 2) * density
        let order = segments.indices.sorted { segments[$0].line < segments[$1].line }
        let spanning = order.filter { segments[$0].high > segments[$0].low }
        for (position, i) in spanning.enumerated() {
            for j in spanning[(position + 1)...] {
                if segments[j].line - segments[i].line > lineGap { break }
                if overlaps((segments[i].low, segments[i].high), (segments[j].low, segments[j].high)) {
                    parent[root(i)] = root(j)
                }
            }
        }
        /// Extent along the scan and first/last line of each group of the given segments.
        func bounds(of members: [Int]) -> [Int: (low: Int, high: Int, first: Int, last: Int)] {
            var result: [Int: (low: Int, high: Int, first: Int, last: Int)] = [:]
            for i in members {
                let r = root(i)
                let segment = segments[i]
                if let b = result[r] {
                    result[r] = (
                        min(b.low, segment.low), max(b.high, segment.high), min(b.first, segment.line),
                        max(b.last, segment.line)
                    )
                } else {
                    result[r] = (segment.low, segment.high, segment.line, segment.line)
                }
            }
            return result
        }
        let extents = bounds(of: spanning)
        // Single points: to the nearest covering group, else to each other.
        let singles = order.filter { segments[$0].high == segments[$0].low }
        for i in singles {
            let point = segments[i].low
            let line = segments[i].line
            var best: (root: Int, distance: Int)?
            // In key order: on a tie the same group wins in every run (dictionary order is not stable).
            for (r, e) in extents.sorted(by: { $0.key < $1.key }) where point >= e.low - 4 && point <= e.high + 4 {
                let distance = line < e.first ? e.first - line : (line > e.last ? line - e.last : 0)
                if distance <= 2 * lineGap && distance < (best?.distance ?? Int.max) { best = (r, distance) }
            }
            if let best { parent[root(i)] = root(best.root) }
        }
        for (position, i) in singles.enumerated() where extents[root(i)] == nil {
            for j in singles[(position + 1)...] {
                if segments[j].line - segments[i].line > lineGap { break }
                if extents[root(j)] == nil, abs(segments[j].low - segments[i].low) <= 4 { parent[root(i)] = root(j) }
            }
        }
        // Groups that overlap along the scan and whose lines meet (single-point lines bridged the
        // gap between their complete lines) are one code.
        var merged = true
        while merged {
            merged = false
            let groupBounds = bounds(of: Array(segments.indices))
            let roots = Array(groupBounds.keys).sorted()
            search: for (position, a) in roots.enumerated() {
                for b in roots[(position + 1)...] {
                    // Both keys come from groupBounds.
                    guard let x = groupBounds[a], let y = groupBounds[b] else { continue }
                    let lineDistance = max(0, max(x.first - y.last, y.first - x.last))
                    if lineDistance <= lineGap && overlaps((x.low, x.high), (y.low, y.high)) {
                        parent[root(a)] = root(b)
                        merged = true
                        break search
                    }
                }
            }
        }
        var groups: [Int: [Segment]] = [:]
        var firstSeen: [Int] = []
        for i in segments.indices {
            let r = root(i)
            if groups[r] == nil { firstSeen.append(r) }
            groups[r, default: []].append(segments[i])
        }
        return firstSeen.compactMap { groups[$0] }  // every key in firstSeen was inserted
    }
}
