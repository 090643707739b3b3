import ScanTestTiming
import Testing

@testable import ScanCore
@testable import ScanVision

/// Point layouts as zbar 0.23 reports them (recorded from real scans of rendered codes): each
/// scan line alternates direction and records where a decode completed.
@Suite("splitting zbar's merged symbols", .timed)
struct DetectionSplitterTests {
    /// One EAN-13 spanning x 42…232 on lines `rows`: right-to-left lines end at the left half
    /// (42, 134), left-to-right lines at the right half (140, 232).
    static func ean(at offset: Int, rows: StrideTo<Int>, density: Int = 1) -> [(y: Int, xs: [Int], leftToRight: Bool)] {
        rows.map { y in
            let leftToRight = (y / density) % 2 == 0
            return (y, leftToRight ? [140 + offset, 232 + offset] : [134 + offset, 42 + offset], leftToRight)
        }
    }

    /// Points in zbar's order: line by line, each line in its own direction.
    static func points(_ codes: [[(y: Int, xs: [Int], leftToRight: Bool)]]) -> [Point] {
        var byLine: [Int: (xs: [Int], leftToRight: Bool)] = [:]
        for code in codes {
            for line in code {
                byLine[line.y, default: ([], line.leftToRight)].xs += line.xs
            }
        }
        return byLine.sorted { $0.key < $1.key }.flatMap { y, line in
            let ordered = line.xs.sorted(by: line.leftToRight ? (<) : (>))
            return ordered.map { Point(x: $0, y: y) }
        }
    }

    static func detection(_ points: [Point], _ symbology: Symbology = .ean13) -> Detection {
        Detection(symbology: symbology, value: Array("4006381333931".utf8), points: points)
    }

    @Test("one code stays one")
    func single() {
        let parts = DetectionSplitter().split(
            Self.detection(Self.points([Self.ean(at: 0, rows: stride(from: 20, to: 100, by: 1))])))
        #expect(parts.count == 1)
        #expect(parts[0].box == Box(minX: 42, minY: 20, maxX: 232, maxY: 99))
    }

    @Test("identical codes side by side become two")
    func sideBySide() {
        let points = Self.points([
            Self.ean(at: 0, rows: stride(from: 20, to: 100, by: 1)),
            Self.ean(at: 280, rows: stride(from: 20, to: 100, by: 1)),
        ])
        let parts = DetectionSplitter().split(Self.detection(points))
        #expect(
            parts.compactMap(\.box).sorted { $0.minX < $1.minX } == [
                Box(minX: 42, minY: 20, maxX: 232, maxY: 99), Box(minX: 322, minY: 20, maxX: 512, maxY: 99),
            ])
    }

    @Test("identical codes one behind the other become two")
    func stacked() {
        let points = Self.points([
            Self.ean(at: 0, rows: stride(from: 20, to: 100, by: 1)),
            Self.ean(at: 0, rows: stride(from: 160, to: 240, by: 1)),
        ])
        #expect(DetectionSplitter().split(Self.detection(points)).count == 2)
    }

    @Test("four codes in a grid, at density 2")
    func grid() {
        let top = stride(from: 20, to: 100, by: 2)
        let bottom = stride(from: 200, to: 280, by: 2)
        let codes = [
            Self.ean(at: 0, rows: top, density: 2), Self.ean(at: 300, rows: top, density: 2),
            Self.ean(at: 0, rows: bottom, density: 2), Self.ean(at: 300, rows: bottom, density: 2),
        ]
        #expect(DetectionSplitter(density: 2).split(Self.detection(Self.points(codes))).count == 4)
    }

    @Test("Code 128 (one point per line: left end on right-to-left lines, right end on the others)")
    func code128() {
        func code(_ offset: Int) -> [(y: Int, xs: [Int], leftToRight: Bool)] {
            stride(from: 20, to: 80, by: 1).map { y in (y, [y % 2 == 0 ? 238 + offset : 24 + offset], y % 2 == 0) }
        }
        let one = DetectionSplitter().split(Self.detection(Self.points([code(0)]), .code128))
        #expect(one.count == 1)
        let two = DetectionSplitter().split(Self.detection(Self.points([code(0), code(280)]), .code128))
        #expect(two.count == 2)
    }

    @Test("lines that saw only one end do not cut a code in pieces")
    func sparseLines() {
        // Complete lines only at the top and bottom, one-end lines in between (glare, blur).
        var lines = Self.ean(at: 0, rows: stride(from: 20, to: 24, by: 1))
        lines += stride(from: 24, to: 70, by: 2).map { (y: $0, xs: [42], leftToRight: false) }
        lines += Self.ean(at: 0, rows: stride(from: 70, to: 74, by: 1))
        #expect(DetectionSplitter().split(Self.detection(Self.points([lines]))).count == 1)
    }

    @Test("2D codes are never split")
    func twoD() {
        let corners = [Point(x: 0, y: 0), Point(x: 0, y: 80), Point(x: 80, y: 80), Point(x: 80, y: 0)]
        let qr = Detection(
            symbology: .qrCode, value: Array("TOTE".utf8),
            points: corners + corners.map { Point(x: $0.x + 300, y: $0.y) })
        #expect(DetectionSplitter().split(qr).count == 1)
    }
}

@Suite("splitting is stable", .timed)
struct DetectionSplitterStabilityTests {
    @Test("splitting a part again gives the part back")
    func idempotent() {
        let points = DetectionSplitterTests.points([
            DetectionSplitterTests.ean(at: 0, rows: stride(from: 20, to: 100, by: 1)),
            DetectionSplitterTests.ean(at: 280, rows: stride(from: 20, to: 100, by: 1)),
            DetectionSplitterTests.ean(at: 0, rows: stride(from: 180, to: 260, by: 1)),
        ])
        let splitter = DetectionSplitter()
        let parts = splitter.split(DetectionSplitterTests.detection(points))
        #expect(parts.count == 3)
        for part in parts {
            #expect(splitter.split(part) == [part])
        }
        #expect(parts.map(\.points.count).reduce(0, +) == points.count, "no point is lost or duplicated")
    }
}
