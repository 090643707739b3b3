import ScanTestTiming
import Testing

@testable import ScanCore

@Suite("GrayImage resampling", .timed)
struct GrayImageTests {
    @Test("doubled: twice the size, each source pixel's value kept where it lies, steps become ramps")
    func doubled() {
        // A dark column beside a light one.
        let image = GrayImage(width: 2, height: 2, pixels: [0, 200, 0, 200])
        let big = image.doubled()
        #expect(big.width == 4 && big.height == 4)
        for row in 0..<4 {
            let line = Array(big.pixels[row * 4..<row * 4 + 4])
            #expect(line == [0, 50, 150, 200], "row \(row): \(line)")
        }
        // Flat stays flat.
        let flat = GrayImage(width: 3, height: 5, fill: 77)
        #expect(flat.doubled().pixels.allSatisfy { $0 == 77 })
        #expect(GrayImage(width: 0, height: 0, pixels: []).doubled().pixels.isEmpty)
    }

    @Test("blurred: the 3×3 mean inside, the border as it was, a flat image unchanged")
    func blurred() {
        var image = GrayImage(width: 5, height: 5, fill: 0)
        image[2, 2] = 90
        let soft = image.blurred()
        for y in 1...3 {
            for x in 1...3 { #expect(soft[x, y] == 10, "(\(x), \(y))") }
        }
        #expect(soft[0, 0] == 0 && soft[4, 4] == 0 && soft[2, 0] == 0)
        #expect(GrayImage(width: 6, height: 4, fill: 130).blurred().pixels.allSatisfy { $0 == 130 })
        let tiny = GrayImage(width: 2, height: 2, pixels: [1, 2, 3, 4])
        #expect(tiny.blurred() == tiny)
    }

    @Test(
        "paintWhite: boxes in frame coordinates fill a crop with white where they fall in it, clamped; the rest untouched"
    )
    func paintWhite() {
        // A crop whose pixel (0, 0) is the frame's (100, 50).
        var crop = GrayImage(width: 8, height: 6, fill: 40)
        crop.paintWhite(
            [
                Box(minX: 102, minY: 51, maxX: 103, maxY: 52),  // inside
                Box(minX: 90, minY: 54, maxX: 100, maxY: 60),  // overhangs the left and bottom edges
                Box(minX: 300, minY: 300, maxX: 310, maxY: 310),  // elsewhere in the frame
            ], origin: Point(x: 100, y: 50))
        var white: Set<[Int]> = []
        for y in 0..<6 {
            for x in 0..<8 where crop[x, y] == 255 { white.insert([x, y]) }
        }
        #expect(white == [[2, 1], [3, 1], [2, 2], [3, 2], [0, 4], [0, 5]])
        #expect(crop.pixels.allSatisfy { $0 == 40 || $0 == 255 })
    }
}
