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

/// Where a code's bars lie inside its region: the view holds that rectangle alone, and a code cut
/// by the frame's edge is told from one wholly in view.
@Suite("the bars' extent at an angle", .timed)
struct BarExtentTests {
    /// A white label (bars of `period` px, `length` × `height`, 10 px of quiet zone each end and 4
    /// above and below) centred at (`centerX`, `centerY`) and turned `degrees`, on a grey box in a
    /// `width` × `frameHeight` frame, with a few grey levels of noise.
    static func label(
        degrees: Double, centerX: Double, centerY: Double, length: Double = 160, height: Double = 50,
        width: Int = 400, frameHeight: Int = 400, seed: UInt64
    ) -> GrayImage {
        let angle = degrees * .pi / 180
        var random = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var pixels = [UInt8](repeating: 0, count: width * frameHeight)
        for y in 0..<frameHeight {
            for x in 0..<width {
                let dx = Double(x) - centerX
                let dy = Double(y) - centerY
                let along = dx * cos(angle) + dy * sin(angle)
                let across = -dx * sin(angle) + dy * cos(angle)
                var shade = 120.0
                if abs(along) <= length / 2 + 10 && abs(across) <= height / 2 + 4 { shade = 235 }
                if abs(along) <= length / 2 && abs(across) <= height / 2 {
                    // Bars of two widths, so the pattern is not a single frequency.
                    let phase = Int(((along + length / 2) / 3).rounded(.down))
                    if phase % 5 == 0 || phase % 5 == 2 || phase % 7 == 3 { shade = 25 }
                }
                random ^= random << 13
                random ^= random >> 7
                random ^= random << 17
                pixels[y * width + x] = UInt8(max(0, min(255, shade + Double(Int(random % 9) - 4))))
            }
        }
        return GrayImage(width: width, height: frameHeight, pixels: pixels)
    }

    @Test(
        "the extent is the bars' rectangle at every angle, within 4 px, whatever the region around it",
        arguments: [UInt64(1), 2, 3])
    func extent(seed: UInt64) throws {
        for step in 0..<12 {
            let degrees = Double(step * 30) + 7 * Double(seed)
            let image = Self.label(degrees: degrees, centerX: 200, centerY: 190, seed: seed)
            // The region a localiser would give: the label's bounding box and some of the box around it.
            let box = Box(minX: 80, minY: 70, maxX: 330, maxY: 320)
            let axis = try #require(BarAxis.estimate(in: image, box: box, withExtent: true), "\(degrees)°")
            let bars = try #require(axis.extent, "\(degrees)°")
            #expect(abs(bars.centerX - 200) <= 4 && abs(bars.centerY - 190) <= 4, "\(degrees)°: \(bars)")
            // Along the axis: the bars, up to the label's ends (their edges point along it too).
            #expect(bars.halfAlong >= 80 - 4 && bars.halfAlong <= 90 + 4, "\(degrees)°: \(bars)")
            // Across it: the bars' length, up to the label's (its ends' edges run that far).
            #expect(bars.halfAcross >= 25 - 4 && bars.halfAcross <= 29 + 2, "\(degrees)°: \(bars)")
            // The view is that rectangle and its quiet zones, not the box turned.
            let view = StraightenedView(of: image, box: box, axis: axis, margin: 12)
            #expect(abs(Double(view.image.width) - 2 * (bars.halfAlong + 12)) <= 2, "\(degrees)°")
            #expect(abs(Double(view.image.height) - 2 * (bars.halfAcross + StraightenedView.acrossMargin)) <= 2)
            #expect(!bars.cut, "\(degrees)°: wholly in view")
        }
    }

    @Test(
        "a code whose bars run off the frame's edge is cut; one whose ends are in view is not, even with its bars' tops cut",
        arguments: [UInt64(4), 5, 6])
    func cut(seed: UInt64) throws {
        for degrees in [20.0, 45.0, 135.0, 160.0] {
            // Centred 30 px from the left edge: the bars' 160 px run off it at any of these angles.
            let cut = Self.label(degrees: degrees, centerX: 30, centerY: 200, seed: seed)
            let box = Box(minX: 0, minY: 80, maxX: 150, maxY: 320)
            let axis = try #require(BarAxis.estimate(in: cut, box: box, withExtent: true), "\(degrees)°")
            #expect(axis.extent?.cut == true, "\(degrees)°: \(String(describing: axis.extent))")
        }
        // Turned a little either way, the bars standing up from the bottom edge: their lower ends
        // are cut, lines across them higher up are whole.
        for degrees in [5.0, 355.0, 175.0] {
            let standing = Self.label(degrees: degrees, centerX: 200, centerY: 390, height: 60, seed: seed)
            let box = Box(minX: 90, minY: 330, maxX: 310, maxY: 399)
            let axis = try #require(BarAxis.estimate(in: standing, box: box, withExtent: true))
            #expect(axis.extent?.cut == false, "\(degrees)°: \(String(describing: axis.extent))")
        }
    }
}
