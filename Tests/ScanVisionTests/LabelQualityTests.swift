import ScanCore
import ScanTestTiming
import Testing

@testable import ScanVision

/// Why a label was not read, from its picture: bars drawn here at a known module size, blur,
/// exposure and contrast, over several seeds, and the reason and estimates the measure gives.
@Suite("label quality of no-reads", .timed)
struct LabelQualityTests {
    /// A linear label: 60 elements of 1–4 modules (alternating bar and space) at `module` pixels
    /// each, 50 px high, on paper `light` with bars `dark`; blurred with a box of `blur` pixels
    /// along the rows; a sensor's noise of ±`noise`. Turned by a right angle when `columns`.
    static func label(
        seed: UInt64, module: Int, dark: Int = 30, light: Int = 220, blur: Int = 0, noise: Int = 4,
        columns: Bool = false
    ) -> (image: GrayImage, box: Box) {
        var random = Draw(state: seed)
        var row: [Int] = []
        for element in 0..<60 {
            let width = Int.random(in: 1...4, using: &random) * module
            row += [Int](repeating: element % 2 == 0 ? dark : light, count: width)
        }
        if blur > 1 {
            row = row.indices.map { index in
                let window = max(0, index - blur / 2)...min(row.count - 1, index + blur / 2)
                return window.map { row[$0] }.reduce(0, +) / window.count
            }
        }
        let width = row.count
        let height = 50
        var pixels = [UInt8](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                let value = row[x] + Int.random(in: -noise...noise, using: &random)
                pixels[y * width + x] = UInt8(clamping: value)
            }
        }
        var image = GrayImage(width: width, height: height, pixels: pixels)
        if columns {
            var turned = [UInt8](repeating: 0, count: width * height)
            for y in 0..<height { for x in 0..<width { turned[x * height + y] = pixels[y * width + x] } }
            image = GrayImage(width: height, height: width, pixels: turned)
        }
        return (image, Box(minX: 0, minY: 0, maxX: image.width - 1, maxY: image.height - 1))
    }

    static let linear: Set<CodeFamily> = [.linear]

    /// Knuth's MMIX linear congruential generator: each seed draws the same label.
    struct Draw: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state ^ (state >> 29)
        }
    }

    @Test(
        "a sharp, well lit label at 3 px a module: the module measured, contrast and edges high; not read, so damaged",
        arguments: [1, 2, 3] as [UInt64])
    func sharp(seed: UInt64) {
        for columns in [false, true] {
            let (image, box) = Self.label(seed: seed, module: 3, columns: columns)
            let quality = LabelQuality.measure(image, in: box)
            #expect(abs((quality.pixelsPerModule ?? 0) - 3) <= 1, "\(quality)")
            #expect(quality.contrast > 150 && quality.edge > 0.6, "\(quality)")
            #expect(quality.reason(family: .linear, configured: Self.linear) == .damaged)
        }
    }

    @Test(
        "each cause named, over seeds: 1 px a module, blurred, overexposed, low contrast, a family not configured",
        arguments: [4, 5, 6] as [UInt64])
    func causes(seed: UInt64) {
        let small = LabelQuality.measure(
            Self.label(seed: seed, module: 1).image, in: Self.label(seed: seed, module: 1).box)
        #expect(small.reason(family: .linear, configured: Self.linear) == .tooSmall, "\(small)")
        let blurred = Self.label(seed: seed, module: 4, blur: 9)
        let soft = LabelQuality.measure(blurred.image, in: blurred.box)
        #expect(soft.reason(family: .linear, configured: Self.linear) == .blurred, "\(soft)")
        #expect((soft.pixelsPerModule ?? 0) >= LabelQuality.smallestModule, "\(soft)")
        let washed = Self.label(seed: seed, module: 3, dark: 170, light: 255)
        #expect(
            LabelQuality.measure(washed.image, in: washed.box).reason(family: .linear, configured: Self.linear)
                == .overexposed)
        let dull = Self.label(seed: seed, module: 3, dark: 100, light: 130, noise: 2)
        let dullQuality = LabelQuality.measure(dull.image, in: dull.box)
        #expect(dullQuality.reason(family: .linear, configured: Self.linear) == .lowContrast, "\(dullQuality)")
        let sharp = Self.label(seed: seed, module: 3)
        #expect(
            LabelQuality.measure(sharp.image, in: sharp.box).reason(family: .matrix, configured: Self.linear)
                == .unconfiguredSymbology)
    }

    @Test("an empty or degenerate box measures nothing and names no size")
    func degenerate() {
        let image = GrayImage(width: 4, height: 4, pixels: [UInt8](repeating: 200, count: 16))
        let quality = LabelQuality.measure(image, in: Box(minX: 2, minY: 2, maxX: 2, maxY: 9))
        #expect(quality.pixelsPerModule == nil && quality.contrast == 0)
        let flat = LabelQuality.measure(image, in: Box(minX: 0, minY: 0, maxX: 3, maxY: 3))
        #expect(flat.pixelsPerModule == nil)
        #expect(flat.reason(family: nil, configured: []) == .lowContrast)
    }
}
