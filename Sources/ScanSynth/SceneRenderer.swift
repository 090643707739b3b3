import Foundation
import ScanCore

/// Renders a scene frame by frame. Labels and boxes are drawn once into sprites (rotated and
/// motion-blurred there); each frame pastes them at their position over the belt and adds noise.
public struct SceneRenderer: Sendable {
    public let scene: SynthScene
    /// Per item: its sprite, and where each label's corners sit in it.
    private var itemSprites: [Sprite] = []
    private var labelRects: [[Box]] = []
    private var blurPads: [Int] = []
    /// The value each label carries (with the check digit zint added).
    public private(set) var labelValues: [[String]] = []
    private var belt: [UInt8]
    private var noiseTable: [Int8]

    public init(scene: SynthScene) throws {
        self.scene = scene
        var generator = SplitMix(seed: scene.seed)
        belt = [UInt8](repeating: 0, count: scene.width * scene.height)
        for y in 0..<scene.height {
            for x in 0..<scene.width {
                // A dull belt with faint diagonal texture.
                let texture = ((x + y) / 7) % 3 == 0 ? 6 : 0
                let slat = scene.beltSlats > 0 && x % scene.beltSlats < 6 ? -40 : 0
                belt[y * scene.width + x] = UInt8(78 + texture + slat + Int(generator.next() % 5))
            }
        }
        let noiseCount = scene.width * scene.height + 8192
        noiseTable = (0..<noiseCount).map { _ in
            scene.noise == 0 ? 0 : Int8(Int(generator.next() % UInt64(2 * scene.noise + 1)) - scene.noise)
        }
        for item in scene.items {
            // Render the labels first: the box grows to hold them with a margin.
            var placedLabels: [(Sprite, String)] = []
            var needWidth = item.width
            var needHeight = item.height
            var labels = item.labels
            var previousEnd = 0
            for index in labels.indices {
                let label = labels[index]
                var (code, value) = try BarcodeRenderer.render(
                    label.symbology, label.data, moduleSize: label.moduleSize, barHeight: label.barHeight,
                    gs1: label.gs1)
                if label.scale != 1 { code = Self.scaled(code, by: label.scale) }
                var paper = Sprite(width: code.width + 16, height: code.height + 16, fill: 245)
                Self.paste(code, into: &paper, atX: 8, y: 8)
                if label.torn {
                    for y in 8..<(8 + code.height) {
                        for x in (8 + code.width * 2 / 5)..<(8 + code.width * 3 / 5) {
                            paper.pixels[y * paper.width + x] = 245
                        }
                    }
                }
                if label.inverted { paper.pixels = paper.pixels.map { 255 &- $0 } }
                if label.fault == .overexposed { paper = Self.overexposed(paper) }
                let placed = label.rotationDegrees == 0 ? paper : Self.rotate(paper, degrees: label.rotationDegrees)
                placedLabels.append((placed, value))
                switch item.layout {
                case .offsets:
                    break
                case .column(let gap):
                    labels[index].offsetY = max(label.offsetY, previousEnd + gap)
                    previousEnd = labels[index].offsetY + placed.height
                case .row(let gap):
                    labels[index].offsetX = index == 0 ? label.offsetX : previousEnd + gap
                    previousEnd = labels[index].offsetX + placed.width
                }
                needWidth = max(needWidth, labels[index].offsetX + placed.width + 6)
                needHeight = max(needHeight, labels[index].offsetY + placed.height + 6)
            }
            var sprite = Sprite(width: needWidth, height: needHeight, fill: item.shade)
            let boxWidth = needWidth
            let boxHeight = needHeight
            for y in 0..<boxHeight {
                for x in 0..<boxWidth where x < 3 || y < 3 || x >= boxWidth - 3 || y >= boxHeight - 3 {
                    sprite.pixels[y * boxWidth + x] = item.shade &- 40
                }
            }
            var rects: [Box] = []
            var values: [String] = []
            for (label, (placed, value)) in zip(labels, placedLabels) {
                Self.paste(placed, into: &sprite, atX: label.offsetX, y: label.offsetY)
                rects.append(
                    Box(
                        minX: label.offsetX, minY: label.offsetY, maxX: label.offsetX + placed.width - 1,
                        maxY: label.offsetY + placed.height - 1))
                values.append(value)
            }
            // Out of focus: the whole box, its labels' paper edges too.
            if let radius = item.labels.filter({ $0.fault == .defocused }).map(Self.defocusRadius).max() {
                sprite = Self.boxBlurred(Self.boxBlurred(sprite, radius: radius), radius: radius)
            }
            let blur = Int((abs(item.velocityX) * scene.exposure).rounded())
            itemSprites.append(blur > 1 ? Self.blurHorizontally(sprite, length: blur) : sprite)
            blurPads.append(blur > 1 ? blur / 2 : 0)
            labelRects.append(rects)
            labelValues.append(values)
        }
    }

    /// The unreadable labels (torn or with a fault) that are wholly in view for at least
    /// `minFrames` frames: each should be one no-read.
    public func expectedNoReads(minFrames: Int = 8) -> [(item: Int, label: Int)] {
        var torn: [(item: Int, label: Int)] = []
        for (itemIndex, item) in scene.items.enumerated() {
            for (labelIndex, rect) in labelRects[itemIndex].enumerated() where item.labels[labelIndex].unreadable {
                let whole = (0..<scene.frameCount).filter { frame in
                    let (x, y) = item.position(frame: frame)
                    let left = Int(x.rounded()) + rect.minX
                    let top = Int(y.rounded()) + rect.minY
                    return left >= 0 && top >= 0 && left + rect.width <= scene.width
                        && top + rect.height <= scene.height
                }
                if whole.count >= minFrames { torn.append((itemIndex, labelIndex)) }
            }
        }
        return torn
    }

    /// What a perfect reader should report: every label that is wholly in view for at least
    /// `minFrames` frames, once; labels only partly in view are listed as `partial`.
    public func expectedCodes(minFrames: Int = 4) -> [ExpectedCode] {
        var expected: [ExpectedCode] = []
        for (itemIndex, item) in scene.items.enumerated() {
            // A torn or faulty label is seen, never read: `expectedNoReads`.
            for (labelIndex, rect) in labelRects[itemIndex].enumerated() where !item.labels[labelIndex].unreadable {
                var first: Int?
                var last: Int?
                var anyFirst: Int?
                var anyLast: Int?
                for frame in 0..<scene.frameCount {
                    let (x, y) = item.position(frame: frame)
                    let left = Int(x.rounded()) + rect.minX
                    let top = Int(y.rounded()) + rect.minY
                    if left >= 0, top >= 0, left + rect.width <= scene.width, top + rect.height <= scene.height {
                        if first == nil { first = frame }
                        last = frame
                    }
                    if left + rect.width > 0, top + rect.height > 0, left < scene.width, top < scene.height {
                        if anyFirst == nil { anyFirst = frame }
                        anyLast = frame
                    }
                }
                let value = labelValues[itemIndex][labelIndex]
                let symbology = item.labels[labelIndex].symbology.contractSymbology
                if let first, let last, last - first + 1 >= minFrames {
                    expected.append(
                        ExpectedCode(
                            item: itemIndex, label: labelIndex, value: value, symbology: symbology,
                            framesInView: first...last,
                            partial: false))
                } else if let anyFirst, let anyLast {
                    expected.append(
                        ExpectedCode(
                            item: itemIndex, label: labelIndex, value: value, symbology: symbology,
                            framesInView: anyFirst...anyLast, partial: true))
                }
            }
        }
        return expected
    }

    /// Where label `label` of item `item` lies in frame `index`: its rectangle (a turned label's
    /// bounding rectangle), in the frame's pixels.
    public func labelBox(item: Int, label: Int, frame index: Int) -> Box {
        let rect = labelRects[item][label]
        let (x, y) = scene.items[item].position(frame: index)
        let (left, top) = (Int(x.rounded()), Int(y.rounded()))
        return Box(minX: left + rect.minX, minY: top + rect.minY, maxX: left + rect.maxX, maxY: top + rect.maxY)
    }

    /// Labels at least partly in view, averaged over the clip's frames.
    public func averageCodesInView() -> Double {
        var total = 0
        for frame in 0..<scene.frameCount {
            for (itemIndex, item) in scene.items.enumerated() {
                let (x, y) = item.position(frame: frame)
                for rect in labelRects[itemIndex] {
                    let left = Int(x.rounded()) + rect.minX
                    let top = Int(y.rounded()) + rect.minY
                    if left + rect.width > 0, top + rect.height > 0, left < scene.width, top < scene.height {
                        total += 1
                    }
                }
            }
        }
        return Double(total) / Double(max(1, scene.frameCount))
    }

    /// Frame `index` as luma.
    public func render(frame index: Int) -> GrayImage {
        var pixels = belt
        let width = scene.width
        let height = scene.height
        pixels.withUnsafeMutableBufferPointer { out in
            for (itemIndex, item) in scene.items.enumerated() {
                let (x, y) = item.position(frame: index)
                let sprite = itemSprites[itemIndex]
                let blurPad = blurPads[itemIndex]
                Self.blend(
                    sprite, into: out, width: width, height: height, atX: Int(x.rounded()) - blurPad,
                    y: Int(y.rounded()))
            }
            for occluder in scene.occluders where occluder.frames.contains(index) {
                var ox = occluder.x
                var oy = occluder.y
                if let follow = occluder.followsItem {
                    let (x, y) = scene.items[follow].position(frame: index)
                    ox += Int(x.rounded())
                    oy += Int(y.rounded())
                }
                // An occluder that follows an item off the frame covers nothing there.
                let rows = max(0, oy)..<max(max(0, oy), min(height, oy + occluder.height))
                let columns = max(0, ox)..<max(max(0, ox), min(width, ox + occluder.width))
                for row in rows {
                    for column in columns { out[row * width + column] = 38 }
                }
            }
            if scene.noise > 0 {
                var mix = SplitMix(seed: scene.seed &+ UInt64(index) &* 0x9E37_79B9)
                let offset = Int(mix.next() % 8192)
                noiseTable.withUnsafeBufferPointer { noise in
                    for i in 0..<out.count {
                        let value = Int(out[i]) + Int(noise[offset + i])
                        out[i] = UInt8(clamping: value)
                    }
                }
            }
        }
        return GrayImage(width: width, height: height, pixels: pixels)
    }

    // MARK: - Drawing

    static func paste(_ sprite: Sprite, into target: inout Sprite, atX left: Int, y top: Int) {
        for y in 0..<sprite.height where top + y >= 0 && top + y < target.height {
            for x in 0..<sprite.width where left + x >= 0 && left + x < target.width {
                let a = Int(sprite.alpha[y * sprite.width + x])
                guard a > 0 else { continue }
                let t = (top + y) * target.width + left + x
                target.pixels[t] = UInt8(
                    (Int(sprite.pixels[y * sprite.width + x]) * a + Int(target.pixels[t]) * (255 - a)) / 255)
                target.alpha[t] = max(target.alpha[t], UInt8(a))
            }
        }
    }

    static func blend(
        _ sprite: Sprite, into out: UnsafeMutableBufferPointer<UInt8>, width: Int, height: Int, atX left: Int,
        y top: Int
    ) {
        let x0 = max(0, left)
        let x1 = min(width, left + sprite.width)
        let y0 = max(0, top)
        let y1 = min(height, top + sprite.height)
        guard x0 < x1, y0 < y1 else { return }
        sprite.pixels.withUnsafeBufferPointer { pixels in
            sprite.alpha.withUnsafeBufferPointer { alpha in
                for y in y0..<y1 {
                    let row = (y - top) * sprite.width
                    for x in x0..<x1 {
                        let s = row + x - left
                        let a = Int(alpha[s])
                        if a == 0 { continue }
                        let t = y * width + x
                        out[t] = a == 255 ? pixels[s] : UInt8((Int(pixels[s]) * a + Int(out[t]) * (255 - a)) / 255)
                    }
                }
            }
        }
    }

    /// Scaled by `factor` with bilinear sampling (pixel centres mapped onto the source).
    static func scaled(_ sprite: Sprite, by factor: Double) -> Sprite {
        let width = max(1, Int((Double(sprite.width) * factor).rounded()))
        let height = max(1, Int((Double(sprite.height) * factor).rounded()))
        var out = Sprite(width: width, height: height, fill: 255)
        for y in 0..<height {
            let sy = min(Double(sprite.height - 1), max(0, (Double(y) + 0.5) / factor - 0.5))
            let y0 = Int(sy)
            let y1 = min(sprite.height - 1, y0 + 1)
            let fy = sy - Double(y0)
            for x in 0..<width {
                let sx = min(Double(sprite.width - 1), max(0, (Double(x) + 0.5) / factor - 0.5))
                let x0 = Int(sx)
                let x1 = min(sprite.width - 1, x0 + 1)
                let fx = sx - Double(x0)
                func at(_ px: Int, _ py: Int) -> Double { Double(sprite.pixels[py * sprite.width + px]) }
                let top = at(x0, y0) * (1 - fx) + at(x1, y0) * fx
                let bottom = at(x0, y1) * (1 - fx) + at(x1, y1) * fx
                out.pixels[y * width + x] = UInt8((top * (1 - fy) + bottom * fy).rounded())
            }
        }
        return out
    }

    /// Rotates about the centre with bilinear sampling onto a canvas that holds the whole result.
    static func rotate(_ sprite: Sprite, degrees: Double) -> Sprite {
        let radians = degrees * .pi / 180
        let c = cos(radians)
        let s = sin(radians)
        let w = Double(sprite.width)
        let h = Double(sprite.height)
        let outWidth = Int((abs(w * c) + abs(h * s)).rounded(.up)) + 2
        let outHeight = Int((abs(w * s) + abs(h * c)).rounded(.up)) + 2
        var out = Sprite(width: outWidth, height: outHeight, fill: 0, opaque: false)
        let cx = w / 2
        let cy = h / 2
        let ox = Double(outWidth) / 2
        let oy = Double(outHeight) / 2
        for y in 0..<outHeight {
            for x in 0..<outWidth {
                let dx = Double(x) + 0.5 - ox
                let dy = Double(y) + 0.5 - oy
                let sx = c * dx + s * dy + cx - 0.5
                let sy = -s * dx + c * dy + cy - 0.5
                guard sx >= 0, sy >= 0, sx <= w - 1, sy <= h - 1 else { continue }
                let ix = Int(sx)
                let iy = Int(sy)
                let fx = sx - Double(ix)
                let fy = sy - Double(iy)
                let ix1 = min(ix + 1, sprite.width - 1)
                let iy1 = min(iy + 1, sprite.height - 1)
                let p00 = Double(sprite.pixels[iy * sprite.width + ix])
                let p10 = Double(sprite.pixels[iy * sprite.width + ix1])
                let p01 = Double(sprite.pixels[iy1 * sprite.width + ix])
                let p11 = Double(sprite.pixels[iy1 * sprite.width + ix1])
                let value = p00 * (1 - fx) * (1 - fy) + p10 * fx * (1 - fy) + p01 * (1 - fx) * fy + p11 * fx * fy
                out.pixels[y * outWidth + x] = UInt8(clamping: Int(value.rounded()))
                out.alpha[y * outWidth + x] = 255
            }
        }
        return out
    }

    /// The defocus of a box whose label is `.defocused`: a module each way (two passes: the blur
    /// spreads over about two modules).
    static func defocusRadius(_ label: SynthLabel) -> Int {
        max(1, Int((Double(label.moduleSize) * label.scale).rounded()))
    }

    /// Defocus: a box filter `2 × radius + 1` pixels wide each way, over an opaque sprite (edges
    /// repeat).
    static func boxBlurred(_ sprite: Sprite, radius: Int) -> Sprite {
        func pass(_ source: [UInt8], width: Int, height: Int, horizontal: Bool) -> [UInt8] {
            var out = source
            let span = 2 * radius + 1
            for line in 0..<(horizontal ? height : width) {
                let length = horizontal ? width : height
                func at(_ i: Int) -> Int {
                    let k = min(max(i, 0), length - 1)
                    return Int(source[horizontal ? line * width + k : k * width + line])
                }
                var sum = (-radius...radius).reduce(0) { $0 + at($1) }
                for i in 0..<length {
                    out[horizontal ? line * width + i : i * width + line] = UInt8(sum / span)
                    sum += at(i + radius + 1) - at(i - radius)
                }
            }
            return out
        }
        var out = sprite
        out.pixels = pass(
            pass(sprite.pixels, width: sprite.width, height: sprite.height, horizontal: true), width: sprite.width,
            height: sprite.height, horizontal: false)
        return out
    }

    /// Glare: each pixel the brightest of itself and its four neighbours (white blooms a pixel
    /// into the bars), then lifted so that black is a pale grey and the paper clips at 255.
    static func overexposed(_ sprite: Sprite) -> Sprite {
        var out = sprite
        let (width, height) = (sprite.width, sprite.height)
        for y in 0..<height {
            for x in 0..<width {
                var brightest = sprite.pixels[y * width + x]
                for (dx, dy) in [(-1, 0), (1, 0), (0, -1), (0, 1)] {
                    let (nx, ny) = (x + dx, y + dy)
                    guard nx >= 0, ny >= 0, nx < width, ny < height else { continue }
                    brightest = max(brightest, sprite.pixels[ny * width + nx])
                }
                out.pixels[y * width + x] = UInt8(min(255, 150 + Int(brightest) * 110 / 245))
            }
        }
        return out
    }

    /// Motion blur along x: a box filter `length` pixels long; the sprite grows by the blur on both sides.
    static func blurHorizontally(_ sprite: Sprite, length: Int) -> Sprite {
        let pad = length / 2
        var out = Sprite(width: sprite.width + 2 * pad, height: sprite.height, fill: 0, opaque: false)
        for y in 0..<sprite.height {
            for x in 0..<out.width {
                var sum = 0
                var alphaSum = 0
                for k in 0..<length {
                    let sx = x - pad - length / 2 + k
                    guard sx >= 0, sx < sprite.width else { continue }
                    let a = Int(sprite.alpha[y * sprite.width + sx])
                    sum += Int(sprite.pixels[y * sprite.width + sx]) * a
                    alphaSum += a
                }
                guard alphaSum > 0 else { continue }
                out.pixels[y * out.width + x] = UInt8(sum / alphaSum)
                out.alpha[y * out.width + x] = UInt8(alphaSum / length)
            }
        }
        return out
    }
}

/// SplitMix64: a small deterministic generator for scenes.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
