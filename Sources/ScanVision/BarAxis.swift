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

    /// Gradients weaker than this (grey levels between pixels two apart) are belt, paper or noise.
    public static let minGradient = 24
    /// Bars, not modules: below this coherence a region is not straightened.
    public static let barCoherence = 0.6

    public init(angle: Double, coherence: Double, samples: Int) {
        self.angle = angle
        self.coherence = coherence
        self.samples = samples
    }

    /// The axis of `box` in `image`, sampling every `step`-th pixel each way; nil when the box
    /// has too few strong gradients to tell.
    public static func estimate(in image: GrayImage, box: Box, step: Int = 2) -> BarAxis? {
        guard let area = box.clamped(to: Box(minX: 1, minY: 1, maxX: image.width - 2, maxY: image.height - 2))
        else { return nil }
        var xx = 0.0
        var yy = 0.0
        var xy = 0.0
        var samples = 0
        // Scharr's operator: of the 3×3 gradients the one whose answer depends least on the
        // direction, which matters for bars two pixels wide (central differences pull the angle
        // of such bars about 5° towards the diagonal). Its weights sum to 16 each way.
        let threshold = 16 * 16 * minGradient * minGradient
        image.pixels.withUnsafeBufferPointer { pixels in
            let width = image.width
            var y = area.minY
            while y <= area.maxY {
                var x = area.minX
                while x <= area.maxX {
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
                        xx += Double(gx * gx)
                        yy += Double(gy * gy)
                        xy += Double(gx * gy)
                        samples += 1
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
        return BarAxis(angle: angle, coherence: coherence, samples: samples)
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
        let centerX = box.centerX
        let centerY = box.centerY
        // The box's half extents along and across the axis.
        let halfW = Double(box.width) / 2
        let halfH = Double(box.height) / 2
        let alongExtent = halfW * abs(cosine) + halfH * abs(sine) + Double(margin)
        let acrossExtent = halfW * abs(sine) + halfH * abs(cosine) + Double(margin)
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

    /// A point of the view, in the frame.
    public func frameLocation(_ point: Point) -> Point {
        let u = Double(point.x)
        let v = Double(point.y)
        return Point(
            x: Int((origin.x + u * along.x + v * across.x).rounded()),
            y: Int((origin.y + u * along.y + v * across.y).rounded()))
    }
}
