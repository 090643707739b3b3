import Foundation
import ScanCore
import ScanTestTiming
import Testing

@testable import ScanVision

/// The view a linear code at an angle is read on: its bars stand upright, and its points map back
/// to where they are in the frame, however finely it is sampled.
@Suite("straightened view of a code at an angle", .timed)
struct StraightenedViewTests {
    /// Bars `period` px apart (half dark) across the direction `degrees`, on a 240×240 frame.
    static func bars(degrees: Double, period: Double) -> GrayImage {
        let angle = degrees * .pi / 180
        var pixels = [UInt8](repeating: 255, count: 240 * 240)
        for y in 0..<240 {
            for x in 0..<240 {
                let along = Double(x) * cos(angle) + Double(y) * sin(angle)
                let phase = along / period - (along / period).rounded(.down)
                pixels[y * 240 + x] = phase < 0.5 ? 30 : 220
            }
        }
        return GrayImage(width: 240, height: 240, pixels: pixels)
    }

    @Test(
        "each column of the view is one shade (a bar or a gap), and a view point maps back onto the same shade in the frame",
        arguments: [(35.0, 1, 1, 1), (35.0, 2, 2, 3), (120.0, 4, 1, 1), (120.0, 2, 2, 3), (77.0, 3, 2, 3)])
    func upright(degrees: Double, lineSpacing: Int, samples: Int, averaged: Int) {
        let image = Self.bars(degrees: degrees, period: 8)
        let axis = BarAxis(angle: degrees * .pi / 180, coherence: 1, samples: 100)
        let box = Box(minX: 70, minY: 70, maxX: 170, maxY: 170)
        let view = StraightenedView(
            of: image, box: box, axis: axis, margin: 4, lineSpacing: lineSpacing, samplesPerPixel: samples,
            averaged: averaged)
        let width = view.image.width
        let height = view.image.height
        // Along the axis the view holds `samples` pixels a frame pixel; across it one line every
        // `lineSpacing` frame pixels.
        let diagonal = 100 * (abs(cos(axis.angle)) + abs(sin(axis.angle))) + 8
        #expect(abs(Double(width) - diagonal * Double(samples)) <= 2 * Double(samples) + 2)
        #expect(abs(Double(height) - diagonal / Double(lineSpacing)) <= 2)
        var columnsChecked = 0
        for u in stride(from: 4 * samples, to: width - 4 * samples, by: 3) {
            let shades = (1..<(height - 1)).map { Int(view.image.pixels[$0 * width + u]) }
            // Away from the edges between bars (where sampling blends the two), a column is one shade.
            guard let low = shades.min(), let high = shades.max(), low > 200 || high < 50 else { continue }
            columnsChecked += 1
            #expect(high - low <= 24, "column \(u): \(low)…\(high)")
            // The same point in the frame lies on the same shade.
            let point = view.frameLocation(Point(x: u, y: height / 2))
            let frameShade = Int(image.pixels[point.y * 240 + point.x])
            #expect((frameShade > 128) == (high > 128), "column \(u) maps to (\(point.x), \(point.y))")
        }
        #expect(columnsChecked >= width / 12, "only \(columnsChecked) clean columns of \(width)")
    }
}
