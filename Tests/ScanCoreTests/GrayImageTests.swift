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
}
