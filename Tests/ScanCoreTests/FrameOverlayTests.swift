import ScanCore
import ScanTestTiming
import Testing

@Suite("preview pictures: a frame shrunk with boxes drawn", .timed)
struct FrameOverlayTests {
    @Test("the factor brings a width within the largest asked; each pixel is its block's mean")
    func shrinking() {
        #expect(FrameOverlay.factor(width: 1920, maxWidth: 960) == 2)
        #expect(FrameOverlay.factor(width: 1921, maxWidth: 960) == 3)
        #expect(FrameOverlay.factor(width: 3840, maxWidth: 3840) == 1)
        #expect(FrameOverlay.factor(width: 640, maxWidth: 960) == 1)
        // 4 × 2 frame: left block 0, 10, 20, 30 → 15; right block all 200.
        let frame = GrayImage(width: 4, height: 2, pixels: [0, 10, 200, 200, 20, 30, 200, 200])
        let small = FrameOverlay.draw(frame, marks: [], factor: 2)
        #expect(small.width == 2 && small.height == 1)
        #expect(small.pixel(x: 0, y: 0) == RGB(15, 15, 15) && small.pixel(x: 1, y: 0) == RGB(200, 200, 200))
    }

    @Test("a box's outline is drawn in its colour, scaled and clipped; inside and outside stay the frame's")
    func outlines() {
        let frame = GrayImage(width: 40, height: 40, pixels: [UInt8](repeating: 100, count: 1600))
        let green = RGB(0, 200, 0)
        let image = FrameOverlay.draw(
            frame,
            marks: [
                FrameOverlay.Mark(box: Box(minX: 8, minY: 8, maxX: 24, maxY: 20), colour: green),
                FrameOverlay.Mark(box: Box(minX: -10, minY: 30, maxX: 60, maxY: 90), colour: RGB(230, 0, 230)),
            ], factor: 2, thickness: 1)
        #expect(image.width == 20 && image.height == 20)
        for x in 4...12 { #expect(image.pixel(x: x, y: 4) == green && image.pixel(x: x, y: 10) == green) }
        for y in 4...10 { #expect(image.pixel(x: 4, y: y) == green && image.pixel(x: 12, y: y) == green) }
        #expect(image.pixel(x: 8, y: 7) == RGB(100, 100, 100), "inside")
        #expect(image.pixel(x: 2, y: 2) == RGB(100, 100, 100), "outside")
        // The box past the picture's edges: its top edge only, across the whole width.
        for x in 0..<20 { #expect(image.pixel(x: x, y: 15) == RGB(230, 0, 230)) }
        #expect(image.pixel(x: 10, y: 18) == RGB(100, 100, 100))
    }
}
