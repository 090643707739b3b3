import Foundation
import ScanCore
import ScanTestTiming
import Testing

@testable import ScanVision

/// Finding a MaxiCode's bullseye, the start of sampling a symbol that is not square to the image.
@Suite("MaxiCode bullseye", .timed)
struct MaxiCodeSamplerTests {
    /// Three dark rings of width `ring` around a light centre at (cx, cy), on light paper, with
    /// noise of ±`noise` levels from `seed`.
    static func bullseye(cx: Double, cy: Double, ring: Double, noise: Int, seed: UInt64) -> GrayImage {
        let size = 400
        var state = seed
        var pixels = [UInt8](repeating: 230, count: size * size)
        for y in 0..<size {
            for x in 0..<size {
                let radius = ((Double(x) - cx) * (Double(x) - cx) + (Double(y) - cy) * (Double(y) - cy)).squareRoot()
                // Centre spot of radius 1.5 rings, then dark, light, dark, light, dark.
                let band = Int(((radius - 1.5 * ring) / ring).rounded(.down))
                let dark = radius >= 1.5 * ring && band < 5 && band % 2 == 0
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let jitter = Int(state >> 33) % (2 * noise + 1) - noise
                pixels[y * size + x] = UInt8(clamping: (dark ? 40 : 230) + jitter)
            }
        }
        return GrayImage(width: size, height: size, pixels: pixels)
    }

    @Test(
        "a bullseye is found at its centre with its outer diameter, wherever it lies", arguments: [1, 2, 3] as [UInt64])
    func found(seed: UInt64) {
        var state = seed
        func next(_ range: ClosedRange<Double>) -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return range.lowerBound + Double(state >> 11) / Double(1 << 53) * (range.upperBound - range.lowerBound)
        }
        let (cx, cy, ring) = (next(120...280), next(120...280), next(5...12))
        let image = Self.bullseye(cx: cx, cy: cy, ring: ring, noise: 12, seed: seed)
        let found = MaxiCodeSampler.bullseyes(in: image)
        #expect(found.count == 1, "\(found)")
        guard let first = found.first else { return }
        #expect(abs(first.x - cx) <= 1.5 && abs(first.y - cy) <= 1.5, "centre \(first) for (\(cx), \(cy))")
        // Outer diameter: the centre spot (3 ring widths) and five runs each side, 13 ring widths.
        #expect(abs(first.diameter - 13 * ring) <= ring + 2, "diameter \(first.diameter) for ring \(ring)")
    }

    @Test("bars, noise and a blank page hold no bullseye", arguments: [4, 5, 6] as [UInt64])
    func noneWhereThereIsNone(seed: UInt64) {
        var state = seed
        var pixels = [UInt8](repeating: 0, count: 300 * 300)
        for index in pixels.indices {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            pixels[index] = UInt8(truncatingIfNeeded: state >> 56)
        }
        #expect(MaxiCodeSampler.bullseyes(in: GrayImage(width: 300, height: 300, pixels: pixels)).isEmpty)
        let bars = GrayImage(
            width: 300, height: 300, pixels: (0..<(300 * 300)).map { ($0 % 300) / 6 % 2 == 0 ? 30 : 220 })
        #expect(MaxiCodeSampler.bullseyes(in: bars).isEmpty)
        #expect(MaxiCodeSampler.bullseyes(in: GrayImage(width: 300, height: 300, fill: 255)).isEmpty)
    }
}
