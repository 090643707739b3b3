// Foundation for atan2, sin and cos.
import Foundation
import ScanCore

/// The direction across a linear code's bars in one region of a frame, from the region's
/// brightness gradients, and a view of the region turned so that the bars stand upright.
///
/// zbar scans rows and columns and zxing-cpp rows (and columns with tryRotate): a linear code
/// more than about 15° off both is read by neither, since no scan line crosses all its bars.
/// A bar's edges all have their gradient across the bar, so the gradients of a code region share
/// one direction (up to sign). The structure tensor of the region — the sums of gx², gy² and
/// gx·gy over its strong gradients — has that direction as its main axis, and its coherence
/// (how much stronger the main axis is than the other, 0…1) tells bars (near 1) from a 2-D
/// code's modules or print (two directions, far lower). Resampling the region along that
/// axis then gives the engines a code whose bars are columns.
/// Pure: reads the frame, allocates the view.
public struct BarAxis: Sendable, Equatable {
    /// The direction across the bars, in radians from the frame's x axis, in [0, π) (a code and
    /// the same code turned 180° have the same axis; the engines read both ways).
    public var angle: Double
    /// How much one gradient direction dominates: 1 for perfect bars, 0 for no preferred direction.
    public var coherence: Double
    /// Strong gradients that went into the estimate.
    public var samples: Int
    /// Where the bars lie, when asked for (`estimate(…, withExtent: true)`): a view of that
    /// rectangle alone holds the code. nil: the box's extent stands for it.
    public var extent: Extent?

    /// A strong gradient: where, which way, and whether inside the box the axis is of.
    struct StrongEdge {
        var x: Int32
        var y: Int32
        var gx: Int32
        var gy: Int32
        var inBox: Bool
    }

    /// The rectangle the bars' edges fill, along the axis: its middle in the frame and half its
    /// length along the axis (across the bars) and across it (along the bars).
    public struct Extent: Sendable, Equatable {
        public var centerX: Double
        public var centerY: Double
        public var halfAlong: Double
        public var halfAcross: Double
        /// The bars run off the frame at one end (or both): the edges at that end of the extent
        /// lie at the frame's edge, so no line across the bars is whole in view.
        public var cut: Bool

        public init(centerX: Double, centerY: Double, halfAlong: Double, halfAcross: Double, cut: Bool = false) {
            self.centerX = centerX
            self.centerY = centerY
            self.halfAlong = halfAlong
            self.halfAcross = halfAcross
            self.cut = cut
        }
    }

    /// Gradients weaker than this (grey levels between pixels two apart) are belt, paper or noise.
    public static let minGradient = 24
    /// Bars, not modules: below this coherence a region is not straightened.
    public static let barCoherence = 0.6
    /// Bars alone: a region this coherent holds no 2-D code beside its bars (a label of bars with
    /// a DataMatrix or QR code on it is less coherent).
    public static let barsAlone = 0.75

    public init(angle: Double, coherence: Double, samples: Int, extent: Extent? = nil) {
        self.angle = angle
        self.coherence = coherence
        self.samples = samples
        self.extent = extent
    }

    /// The axis of `box` in `image`, sampling every `step`-th pixel each way; nil when the box
    /// has too few strong gradients to tell. `withExtent`: also where the bars lie (`extent`),
    /// looking `extentMargin` pixels beyond the box too (a localiser's cells can cut a code's
    /// ends; the axis is the box's alone).
    public static func estimate(
        in image: GrayImage, box: Box, step: Int = 2, withExtent: Bool = false, extentMargin: Int = 0
    ) -> BarAxis? {
        let inner = Box(minX: 1, minY: 1, maxX: image.width - 2, maxY: image.height - 2)
        guard let area = box.clamped(to: inner) else { return nil }
        let outer = withExtent ? (box.widened(by: extentMargin).clamped(to: inner) ?? area) : area
        var xx = 0.0
        var yy = 0.0
        var xy = 0.0
        var samples = 0
        // The strong gradients, when the extent is asked for: where they lie, and the gradient.
        var strong: [StrongEdge] = []
        // Scharr's operator: of the 3×3 gradients the one whose answer depends least on the
        // direction, which matters for bars two pixels wide (central differences pull the angle
        // of such bars about 5° towards the diagonal). Its weights sum to 16 each way.
        let threshold = 16 * 16 * minGradient * minGradient
        image.pixels.withUnsafeBufferPointer { pixels in
            let width = image.width
            // Stepping from the box's corner, so the box's own samples are the same with or
            // without a margin.
            var y = area.minY - (area.minY - outer.minY) / step * step
            while y <= outer.maxY {
                let rowInBox = y >= area.minY && y <= area.maxY
                var x = area.minX - (area.minX - outer.minX) / step * step
                while x <= outer.maxX {
                    let up = (y - 1) * width + x
                    let here = y * width + x
                    let down = (y + 1) * width + x
                    let gx =
                        3 * (Int(pixels[up + 1]) - Int(pixels[up - 1])) + 10
                        * (Int(pixels[here + 1]) - Int(pixels[here - 1]))
                        + 3 * (Int(pixels[down + 1]) - Int(pixels[down - 1]))
                    let gy =
                        3 * (Int(pixels[down - 1]) - Int(pixels[up - 1])) + 10 * (Int(pixels[down]) - Int(pixels[up]))
                        + 3 * (Int(pixels[down + 1]) - Int(pixels[up + 1]))
                    if gx * gx + gy * gy >= threshold {
                        let inBox = rowInBox && x >= area.minX && x <= area.maxX
                        if inBox {
                            xx += Double(gx * gx)
                            yy += Double(gy * gy)
                            xy += Double(gx * gy)
                            samples += 1
                        }
                        if withExtent {
                            strong.append(
                                StrongEdge(x: Int32(x), y: Int32(y), gx: Int32(gx), gy: Int32(gy), inBox: inBox))
                        }
                    }
                    x += step
                }
                y += step
            }
        }
        guard samples >= 16, xx + yy > 0 else { return nil }
        var angle = 0.5 * atan2(2 * xy, xx - yy)
        if angle < 0 { angle += Double.pi }
        let coherence = ((xx - yy) * (xx - yy) + 4 * xy * xy).squareRoot() / (xx + yy)
        let extent =
            withExtent
            ? Self.extent(of: strong, angle: angle, box: outer, frameWidth: image.width, frameHeight: image.height)
            : nil
        return BarAxis(angle: angle, coherence: coherence, samples: samples, extent: extent)
    }

    /// The rectangle along `angle` that the bars' edges fill: the gradients that point along the
    /// axis (within about 25°: the edges of bars, not of the label's long sides or of print
    /// across them), projected on the axis and across it, the outermost 1 % each way left out
    /// (a stray edge of the belt or of the next label in the box) unless it lies close to the
    /// rest (a long code's end bars). nil when too few edges point
    /// that way. An end whose edges lie mostly at the frame's edge is where the frame cuts the
    /// code: the bars there run on out of view (a code's own ends have a quiet zone before any
    /// edge of the frame, and the bars' tops cut by it leave their ends in view).
    static func extent(
        of strong: [StrongEdge], angle: Double, box: Box, frameWidth: Int, frameHeight: Int
    ) -> Extent? {
        let cosine = cos(angle)
        let sine = sin(angle)
        let centerX = box.centerX
        let centerY = box.centerY
        // Projections in whole pixels from the box's centre, as histogram bins.
        let reach = Int((Double(box.width * box.width + box.height * box.height).squareRoot() / 2).rounded(.up)) + 1
        var alongCounts = [Int32](repeating: 0, count: 2 * reach + 1)
        var acrossCounts = [Int32](repeating: 0, count: 2 * reach + 1)
        // Each aligned edge's bins along the axis and across it, whether it lies in the box, and
        // whether at the frame's edge.
        var aligned: [(along: Int, across: Int, inBox: Bool, atFrameEdge: Bool)] = []
        let inset: Int32 = 4
        for point in strong {
            let gx = Double(point.gx)
            let gy = Double(point.gy)
            let dot = gx * cosine + gy * sine
            // cos²(25°) ≈ 0.82: the gradient within 25° of the axis, either sign.
            guard dot * dot >= 0.82 * (gx * gx + gy * gy) else { continue }
            let dx = Double(point.x) - centerX
            let dy = Double(point.y) - centerY
            let along = min(max(Int((dx * cosine + dy * sine).rounded()) + reach, 0), 2 * reach)
            let across = min(max(Int((-dx * sine + dy * cosine).rounded()) + reach, 0), 2 * reach)
            let atFrameEdge =
                point.x < inset || point.y < inset || point.x >= Int32(frameWidth) - inset
                || point.y >= Int32(frameHeight) - inset
            aligned.append((along, across, point.inBox, atFrameEdge))
            if point.inBox { acrossCounts[across] += 1 }
        }
        let inBoxCount = aligned.count { $0.inBox }
        guard inBoxCount >= 16 else { return nil }
        // How far beyond the trimmed ends edges still count: a long code's end bars (a wide bar
        // or gap at 2 px a module is 8 px); a stray edge lies further off, beyond a quiet zone.
        let gap = 10
        func range(_ counts: [Int32], trim: Int) -> (low: Double, high: Double) {
            var low = 0
            var seen = 0
            while seen + Int(counts[low]) <= trim { seen += Int(counts[low]); low += 1 }
            var high = counts.count - 1
            seen = 0
            while seen + Int(counts[high]) <= trim { seen += Int(counts[high]); high -= 1 }
            // The trim cuts a long code's outermost bars too (a few of its thousands of edges):
            // edges no more than `gap` beyond the trimmed ends count again (not in a chain: the
            // belt's texture would lead on to the box's edge).
            let trimmedLow = low
            for bin in max(0, trimmedLow - gap)..<trimmedLow where counts[bin] > 0 {
                low = bin
                break
            }
            let trimmedHigh = high
            for bin in stride(from: min(counts.count - 1, trimmedHigh + gap), to: trimmedHigh, by: -1)
            where counts[bin] > 0 {
                high = bin
                break
            }
            return (Double(low - reach), Double(high - reach))
        }
        // Across the bars, the box's edges alone: beyond it lies the next code across (an EAN
        // under an SSCC). Along them, the edges within that band beyond the box too (the code's
        // ends the box cut).
        let across = range(acrossCounts, trim: inBoxCount / 100)
        let band = (Int(across.low) + reach - 2)...(Int(across.high) + reach + 2)
        var count = 0
        for edge in aligned where band.contains(edge.across) {
            alongCounts[edge.along] += 1
            count += 1
        }
        guard count >= 16 else { return nil }
        let along = range(alongCounts, trim: count / 100)
        // The edges within 2 px of each end: mostly at the frame's edge, the frame cuts the code.
        var ends = (low: 0, lowAtEdge: 0, high: 0, highAtEdge: 0)
        let lowBin = Int(along.low) + reach
        let highBin = Int(along.high) + reach
        for edge in aligned where band.contains(edge.across) {
            if edge.along <= lowBin + 2 {
                ends.low += 1
                if edge.atFrameEdge { ends.lowAtEdge += 1 }
            }
            if edge.along >= highBin - 2 {
                ends.high += 1
                if edge.atFrameEdge { ends.highAtEdge += 1 }
            }
        }
        let cut = 2 * ends.lowAtEdge > ends.low || 2 * ends.highAtEdge > ends.high
        let midAlong = (along.low + along.high) / 2
        let midAcross = (across.low + across.high) / 2
        return Extent(
            centerX: centerX + midAlong * cosine - midAcross * sine,
            centerY: centerY + midAlong * sine + midAcross * cosine,
            halfAlong: (along.high - along.low) / 2, halfAcross: (across.high - across.low) / 2, cut: cut)
    }

    /// How far the axis is from the nearest of the frame's rows and columns, in degrees (0…45):
    /// what scan lines along rows or columns must cope with.
    public var degreesOffGrid: Double {
        let degrees = angle * 180 / Double.pi
        let off = degrees.truncatingRemainder(dividingBy: 90)
        return min(off, 90 - off)
    }
}

/// A region of a frame resampled along a code's axis: its columns run along the bars, its rows
/// across them. `frameLocation` takes a point of the view back to the frame.
public struct StraightenedView: Sendable {
    public var image: GrayImage
    /// The frame position of the view's pixel (0, 0), and the frame step of one view pixel along
    /// its rows (the code's axis) and down its columns.
    public var origin: (x: Double, y: Double)
    public var along: (x: Double, y: Double)
    public var across: (x: Double, y: Double)

    /// `box` of `image` (widened by `margin` pixels each way, for the quiet zones) turned so that
    /// `axis` runs along the view's rows; pixels outside the frame are white. Bilinear sampling,
    /// one view pixel a frame pixel along the axis and `lineSpacing` frame pixels across it: a
    /// reader that scans every second line of the turned region is given those lines alone
    /// (`lineSpacing` 2), and the others are never sampled.
    public init(
        of image: GrayImage, box: Box, axis: BarAxis, margin: Int, lineSpacing: Int = 1, samplesPerPixel: Int = 1,
        averaged: Int = 1
    ) {
        let cosine = cos(axis.angle)
        let sine = sin(axis.angle)
        // The box's half extents along and across the axis; where the bars' own rectangle is
        // known, that instead (a code at 45° fills about a quarter of its box turned, and the
        // extent may reach beyond a box that cut the code's ends).
        let halfW = Double(box.width) / 2
        let halfH = Double(box.height) / 2
        var centerX = box.centerX
        var centerY = box.centerY
        var alongExtent = halfW * abs(cosine) + halfH * abs(sine) + Double(margin)
        var acrossExtent = halfW * abs(sine) + halfH * abs(cosine) + Double(margin)
        if let bars = axis.extent {
            centerX = bars.centerX
            centerY = bars.centerY
            alongExtent = bars.halfAlong + Double(margin)
            acrossExtent = bars.halfAcross + Self.acrossMargin
        }
        let spacing = Double(max(1, lineSpacing))
        let upsample = Double(max(1, samplesPerPixel))
        let width = max(1, Int((2 * alongExtent * upsample).rounded(.up)))
        let height = max(1, Int((2 * acrossExtent / spacing).rounded(.up)))
        along = (cosine / upsample, sine / upsample)
        across = (-sine * spacing, cosine * spacing)
        origin = (
            centerX - alongExtent * cosine + acrossExtent * sine,
            centerY - alongExtent * sine - acrossExtent * cosine
        )
        var pixels = [UInt8](repeating: 255, count: width * height)
        var sums = [Int](repeating: 0, count: width)
        let frameWidth = image.width
        let frameHeight = image.height
        let start = origin
        let step = across
        let lines = max(1, averaged)
        // Fixed point, 16 fraction bits: positions and steps; the weights keep 8 bits.
        let one = 65_536.0
        let stepX = Int((along.x * one).rounded())
        let stepY = Int((along.y * one).rounded())
        image.pixels.withUnsafeBufferPointer { source in
            pixels.withUnsafeMutableBufferPointer { out in
                sums.withUnsafeMutableBufferPointer { sums in
                    for v in 0..<height {
                        for u in 0..<width { sums[u] = 0 }
                        // `averaged` lines one frame pixel apart across the axis, centred on the
                        // view's line: the bars run along them, so their mean is the same profile
                        // with less noise.
                        for line in 0..<lines {
                            let offset = Double(line) - Double(lines - 1) / 2
                            var x = Int(((start.x + Double(v) * step.x - offset * sine) * one).rounded(.down))
                            var y = Int(((start.y + Double(v) * step.y + offset * cosine) * one).rounded(.down))
                            for u in 0..<width {
                                let x0 = x >> 16
                                let y0 = y >> 16
                                if x0 >= 0 && y0 >= 0 && x0 + 1 < frameWidth && y0 + 1 < frameHeight {
                                    let fx = (x >> 8) & 0xFF
                                    let fy = (y >> 8) & 0xFF
                                    let index = y0 * frameWidth + x0
                                    let top = Int(source[index]) * (256 - fx) + Int(source[index + 1]) * fx
                                    let bottom =
                                        Int(source[index + frameWidth]) * (256 - fx)
                                        + Int(source[index + frameWidth + 1]) * fx
                                    sums[u] += top * (256 - fy) + bottom * fy
                                } else {
                                    sums[u] += 255 << 16
                                }
                                x += stepX
                                y += stepY
                            }
                        }
                        let row = v * width
                        let half = lines << 15
                        for u in 0..<width { out[row + u] = UInt8((sums[u] + half) / (lines << 16)) }
                    }
                }
            }
        }
        self.image = GrayImage(width: width, height: height, pixels: pixels)
    }

    /// Frame pixels the view reaches beyond the bars' ends (`BarAxis.extent`) along them.
    static let acrossMargin = 3.0

    /// A point of the view, in the frame.
    public func frameLocation(_ point: Point) -> Point {
        let u = Double(point.x)
        let v = Double(point.y)
        return Point(
            x: Int((origin.x + u * along.x + v * across.x).rounded()),
            y: Int((origin.y + u * along.y + v * across.y).rounded()))
    }
}
