import Testing

@testable import ScanCore
@testable import ScanVision

/// The localiser's edge counts down columns: the vector form against one column at a time.
@Suite("localiser edge counts")
struct CodeLocalizerCountTests {
    /// Counts per cell of both forms, on one image and area.
    static func counts(
        _ image: GrayImage, bounds: Box, cell: Int, lineStep: Int, threshold: Int32
    ) -> (vector: [Int32], oneByOne: [Int32]) {
        let columns = (bounds.width + cell - 1) / cell
        let rows = (bounds.height + cell - 1) / cell
        var vector = [Int32](repeating: 0, count: columns * rows)
        var oneByOne = vector
        image.pixels.withUnsafeBufferPointer { pixels in
            guard let pixels = pixels.baseAddress else { return }
            vector.withUnsafeMutableBufferPointer {
                guard let down = $0.baseAddress else { return }
                CodeLocalizer.countDownColumns(
                    pixels, width: image.width, bounds: bounds, cell: cell, lineStep: lineStep, threshold: threshold,
                    columns: columns, into: down)
            }
            oneByOne.withUnsafeMutableBufferPointer {
                guard let down = $0.baseAddress else { return }
                CodeLocalizer.countDownColumnsOneByOne(
                    pixels, width: image.width, bounds: bounds, cell: cell, lineStep: lineStep, threshold: threshold,
                    columns: columns, into: down)
            }
        }
        return (vector, oneByOne)
    }

    @Test(
        "counted many columns at once or one at a time: the same counts, for any area, cell, line step and threshold (±256 and beyond, 0, negative)",
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
            // Horizontal bars of random heights, noise of a random strength, a few flat patches.
            let noise = 1 + random(80)
            var pixels = [UInt8](repeating: 0, count: width * height)
            var level = random(256)
            for y in 0..<height {
                if random(3) == 0 { level = random(256) }
                for x in 0..<width {
                    let flat = (x / 16 + y / 16) % 5 == 0
                    pixels[y * width + x] = UInt8(clamping: flat ? level : level + random(noise) - noise / 2)
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
            let result = Self.counts(image, bounds: bounds, cell: cell, lineStep: lineStep, threshold: threshold)
            #expect(
                result.vector == result.oneByOne,
                "\(width)x\(height) \(bounds) cell \(cell) step \(lineStep) threshold \(threshold)")
            compared += result.oneByOne.count { $0 > 0 }
        }
        #expect(compared > 50, "the images have edges to count")
    }
}
