import ScanTestTiming
import Testing

@testable import ScanCore
@testable import ScanVision

/// The localiser's edge counts along rows and down columns, in the forms the compiler vectorises,
/// against one change at a time.
@Suite("localiser edge counts", .timed)
struct CodeLocalizerCountTests {
    /// Edges along the sampled rows one change at a time, each row's last strong change carried
    /// through its cells: the localiser's first form, kept here as the reference.
    static func countAlongRowsOneByOne(_ sampling: CodeLocalizer.Sampling, into across: UnsafeMutablePointer<Int32>) {
        let bounds = sampling.bounds
        var y = bounds.minY + sampling.lineStep / 2
        while y <= bounds.maxY {
            let line = sampling.pixels + y * sampling.width
            var last: Int32 = 0
            for x in (bounds.minX + 1)..<max(bounds.minX + 1, bounds.maxX) {
                let change = Int32(line[x + 1]) - Int32(line[x - 1])
                let counted = CodeLocalizer.edge(change, threshold: sampling.threshold, after: &last)
                across[(y - bounds.minY) / sampling.cell * sampling.columns + (x - bounds.minX) / sampling.cell] +=
                    counted
            }
            y += sampling.lineStep
        }
    }

    /// Counts per cell of both forms, on one image and area: `rows` along rows, else down columns.
    static func counts(
        _ image: GrayImage, bounds: Box, cell: Int, lineStep: Int, threshold: Int32, rows: Bool
    ) -> (vector: [Int32], oneByOne: [Int32]) {
        let columns = (bounds.width + cell - 1) / cell
        var vector = [Int32](repeating: 0, count: columns * ((bounds.height + cell - 1) / cell))
        var oneByOne = vector
        image.pixels.withUnsafeBufferPointer { pixels in
            guard let pixels = pixels.baseAddress else { return }
            let sampling = CodeLocalizer.Sampling(
                pixels: pixels, width: image.width, bounds: bounds, cell: cell, lineStep: lineStep,
                threshold: threshold, columns: columns)
            func fill(_ counts: inout [Int32], by count: (UnsafeMutablePointer<Int32>) -> Void) {
                counts.withUnsafeMutableBufferPointer { if let base = $0.baseAddress { count(base) } }
            }
            fill(&vector) {
                rows
                    ? CodeLocalizer.countAlongRows(sampling, into: $0)
                    : CodeLocalizer.countDownColumns(sampling, into: $0)
            }
            fill(&oneByOne) {
                rows
                    ? Self.countAlongRowsOneByOne(sampling, into: $0)
                    : CodeLocalizer.countDownColumnsOneByOne(sampling, into: $0)
            }
        }
        return (vector, oneByOne)
    }

    @Test(
        "counted many changes at once or one at a time: the same counts along rows and down columns, for any area, cell, line step and threshold (±256 and beyond, 0, negative)",
        arguments: [1, 2, 3] as [UInt64])
    func sameCounts(seed: UInt64) throws {
        var state = seed &* 0x9E37_79B9_7F4A_7C15
        func random(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        var compared = 0
        for _ in 0..<60 {
            let width = 8 + random(300)
            let height = 8 + random(200)
            // Horizontal bars of random heights, vertical ones of random widths in some rows, noise
            // of a random strength, flat patches (runs of no change).
            let noise = 1 + random(80)
            var bars = [Int](repeating: 0, count: width)
            var bar = 0
            for x in 0..<width {
                if random(6) == 0 { bar = random(2) * 70 }
                bars[x] = bar
            }
            var pixels = [UInt8](repeating: 0, count: width * height)
            var level = random(256)
            for y in 0..<height {
                if random(3) == 0 { level = random(256) }
                let barred = y % 24 < 12
                for x in 0..<width {
                    let flat = (x / 16 + y / 16) % 5 == 0
                    let value = level + (barred ? bars[x] : 0)
                    pixels[y * width + x] = UInt8(clamping: flat ? level : value + random(noise) - noise / 2)
                }
            }
            let image = GrayImage(width: width, height: height, pixels: pixels)
            let minX = random(width / 2)
            let minY = random(height / 2)
            let bounds = Box(
                minX: minX, minY: minY, maxX: minX + random(width - minX), maxY: minY + random(height - minY))
            let cell = [8, 16, 32, 40, 300][random(5)]
            let lineStep = 1 + random(6)
            let threshold = Int32([1, 12, 36, 90, 255, 256, 300, 0, -5, -400][random(10)])
            for rows in [true, false] {
                let result = Self.counts(
                    image, bounds: bounds, cell: cell, lineStep: lineStep, threshold: threshold, rows: rows)
                #expect(
                    result.vector == result.oneByOne,
                    "\(rows ? "rows" : "columns") \(width)x\(height) \(bounds) cell \(cell) step \(lineStep) threshold \(threshold)"
                )
                compared += result.oneByOne.count { $0 > 0 }
            }
        }
        #expect(compared > 100, "the images have edges to count")
    }
}
