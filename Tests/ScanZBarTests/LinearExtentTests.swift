import ScanCore
import ScanSynth
import ScanTestTiming
import Testing

@testable import ScanVision
@testable import ScanZBar

/// A linear code zbar read on one line knows one end of it only; `LinearExtent` finds the rest of
/// the code from its bars.
@Suite("linear extent of one-line reads", .timed)
struct LinearExtentTests {
    /// A grey 640x400 frame with sensor noise (±`noise`, fixed sequence) and `sprites` pasted at
    /// their places, each on white paper with an 8 px margin.
    static func frame(_ sprites: [(Sprite, x: Int, y: Int)], noise: Int = 16) -> GrayImage {
        var image = GrayImage(width: 640, height: 400, fill: 120)
        for (sprite, x, y) in sprites {
            for row in -8..<(sprite.height + 8) {
                for column in -8..<(sprite.width + 8) {
                    let inside = (0..<sprite.height).contains(row) && (0..<sprite.width).contains(column)
                    image[x + column, y + row] = inside ? sprite.pixels[row * sprite.width + column] : 245
                }
            }
        }
        var state: UInt64 = 12345
        for index in image.pixels.indices {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let shift = Int((state >> 33) % UInt64(2 * noise + 1)) - noise
            image.pixels[index] = UInt8(clamping: Int(image.pixels[index]) + shift)
        }
        return image
    }

    /// The image turned a quarter (rows become columns).
    static func transposed(_ image: GrayImage) -> GrayImage {
        var turned = GrayImage(width: image.height, height: image.width, fill: 0)
        for y in 0..<image.height {
            for x in 0..<image.width { turned[y, x] = image[x, y] }
        }
        return turned
    }

    /// The first and last columns of `sprite` with a bar in them (zint draws quiet zones too).
    static func bars(_ sprite: Sprite) -> ClosedRange<Int> {
        let dark = (0..<sprite.width).filter { column in
            (0..<sprite.height).contains { sprite.pixels[$0 * sprite.width + column] < 128 }
        }
        return (dark.first ?? 0)...(dark.last ?? 0)
    }

    /// A read as zbar reports a code finished by one scan line: one point, where the line left
    /// the code's last bar.
    static func oneLineRead(at point: Point, alongRows: Bool) -> Detection {
        Detection(symbology: .code128, value: Array("B7310".utf8), points: [point], alongRows: alongRows)
    }

    @Test(
        "a long GS1-128 read on one line is widened to the whole code and the lines its bars cross, along rows and down columns"
    )
    func widensOneLineRead() throws {
        let (code, _) = try BarcodeRenderer.render(
            .code128, "[00]340123450000080019[15]271215[10]B7310", moduleSize: 2, barHeight: 20, gs1: true)
        let upright = Self.frame([(code, x: 40, y: 150)])
        let bars = Self.bars(code)
        let (first, last) = (40 + bars.lowerBound, 40 + bars.upperBound)
        for alongRows in [true, false] {
            let image = alongRows ? upright : Self.transposed(upright)
            // Read at its right end (upright) or its bottom end (turned), on line 170.
            let end = alongRows ? Point(x: last + 1, y: 170) : Point(x: 170, y: last + 1)
            let wide = try #require(
                LinearExtent.widened(Self.oneLineRead(at: end, alongRows: alongRows), in: image).box)
            let (low, high, top, bottom) =
                alongRows ? (wide.minX, wide.maxX, wide.minY, wide.maxY) : (wide.minY, wide.maxY, wide.minX, wide.maxX)
            // Within a window of the bars' ends (the paper's edge 8 px further may be taken in).
            #expect(abs(low - first) <= LinearExtent.window && abs(high - last) <= LinearExtent.window, "\(wide)")
            #expect(abs(top - 150) <= 3 && abs(bottom - (150 + code.height - 1)) <= 3, "\(wide)")
        }
    }

    @Test("two codes on one line with quiet zones between them: each read widens to its own code only")
    func stopsAtQuietZone() throws {
        let (left, _) = try BarcodeRenderer.render(.code128, "LPN700013", moduleSize: 2, barHeight: 24)
        let (right, _) = try BarcodeRenderer.render(.code128, "LPN700014", moduleSize: 2, barHeight: 24)
        let gap = 40
        let image = Self.frame([(left, x: 30, y: 100), (right, x: 30 + left.width + gap, y: 100)])
        let leftBars = Self.bars(left)
        let rightStart = 30 + left.width + gap + Self.bars(right).lowerBound
        let found = LinearExtent.span(in: image, at: Point(x: 30 + leftBars.upperBound + 1, y: 120), alongRows: true)
        let span = try #require(found)
        #expect(span.upperBound < rightStart - 8, "\(span) runs into the other code at \(rightStart)")
        #expect(span.lowerBound <= 30 + leftBars.lowerBound, "\(span)")
    }

    @Test("no bars at the read's place, a 2-D code, or a read that already has its length: left as it was")
    func leftAlone() throws {
        let image = Self.frame([], noise: 30)
        let lost = Self.oneLineRead(at: Point(x: 300, y: 200), alongRows: true)
        let none = LinearExtent.span(in: image, at: Point(x: 300, y: 200), alongRows: true)
        #expect(none == nil, "noise is not bars")
        #expect(LinearExtent.widened(lost, in: image) == lost)
        let qr = Detection(symbology: .qrCode, value: Array("Q".utf8), points: [Point(x: 300, y: 200)])
        #expect(LinearExtent.widened(qr, in: image) == qr)
        let (code, _) = try BarcodeRenderer.render(.code128, "LPN700013", moduleSize: 2, barHeight: 24)
        let withCode = Self.frame([(code, x: 100, y: 100)])
        let whole = Detection(
            symbology: .code128, value: Array("LPN700013".utf8),
            points: [Point(x: 100, y: 110), Point(x: 100 + code.width - 1, y: 110)], alongRows: true)
        #expect(LinearExtent.widened(whole, in: withCode) == whole)
        // Off the image: nothing to measure, no crash.
        let outside = [Point(x: -5, y: 110), Point(x: 10, y: 400), Point(x: 640, y: 10)].map {
            LinearExtent.span(in: withCode, at: $0, alongRows: true)
        }
        #expect(outside.allSatisfy { $0 == nil })
    }
}
