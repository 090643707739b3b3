import ScanCore
import ScanVision

/// zxing-cpp on the sweep's scan lines (`decoder.sweepEngine` zxing): the lines zbar would walk in
/// a sweep region (every `rowStep`-th row, every `columnStep`-th column), gathered into a small
/// image of those lines alone (columns turned into rows), read with tryHarder so that every line
/// is looked at and every code on it, and placed back in the frame.
///
/// zbar walks each pixel of its lines with an edge detector that costs about as much as zxing-cpp's
/// whole read of the line; on a 1080p stripe that made the sweep over half of a frame's decoding.
/// zxing-cpp wants a code on two of the lines (its `minLineCount`), which consecutive lines `step`
/// apart give for bars at least twice the step tall: what the sweep promises
/// (`decoder.sweepDensity`). Linear symbologies only: a 2-D code needs all its lines, and the
/// localiser's discovery regions find those.
/// Used from one thread at a time.
public final class SweepLineReader {
    private let reader: ZXingReader
    /// What the reader reads.
    public let symbologies: Set<Symbology>
    /// The gathered lines, reused from frame to frame.
    private var lines: [UInt8] = []

    /// `symbologies`: what zbar would read there; nil when zxing-cpp reads no linear one of them.
    public init?(symbologies: Set<Symbology>) throws(ZXingError) {
        let linear = symbologies.filter { $0.isLinear && ZXingReader.reads($0) }
        guard !linear.isEmpty else { return nil }
        reader = try ZXingReader(settings: .asPlanned(linear))
        self.symbologies = linear
    }

    /// The codes on the region's lines, in frame coordinates; a code read both along rows and
    /// down columns once.
    public func read(_ frame: GrayImage, region: DecodePlanner.Region, input: String) throws(ZXingError)
        -> [Detection]
    {
        guard let box = region.box.clamped(to: frame.bounds) else { return [] }
        var found: [Detection] = []
        if region.rowStep > 0 {
            found.appendNew(try read(frame, box: box, step: region.rowStep, alongRows: true, input: input))
        }
        if region.columnStep > 0 {
            found.appendNew(try read(frame, box: box, step: region.columnStep, alongRows: false, input: input))
        }
        return found
    }

    /// One direction: line `i` of the gathered image is the frame's row (or column) `first + i·step`.
    private func read(_ frame: GrayImage, box: Box, step: Int, alongRows: Bool, input: String) throws(ZXingError)
        -> [Detection]
    {
        let across = alongRows ? box.height : box.width
        let length = alongRows ? box.width : box.height
        // The lines sit in the middle of their step, as zbar places them.
        let first = (across - 1) % step / 2
        let count = (across - first + step - 1) / step
        guard count >= 2, length >= 16 else { return [] }
        let width = frame.width
        lines.removeAll(keepingCapacity: true)
        lines.reserveCapacity(count * length)
        frame.pixels.withUnsafeBufferPointer { pixels in
            if alongRows {
                for line in 0..<count {
                    let start = (box.minY + first + line * step) * width + box.minX
                    lines.append(contentsOf: pixels[start..<start + length])
                }
            } else {
                lines.append(contentsOf: repeatElement(0, count: count * length))
                lines.withUnsafeMutableBufferPointer { out in
                    for y in 0..<length {
                        let row = (box.minY + y) * width + box.minX + first
                        for line in 0..<count { out[line * length + y] = pixels[row + line * step] }
                    }
                }
            }
        }
        let image = GrayImage(width: length, height: count, pixels: lines)
        return try reader.read(image, input: input).map { read in
            var placed = read
            placed.points = read.points.map { point in
                alongRows
                    ? Point(x: box.minX + point.x, y: box.minY + first + point.y * step)
                    : Point(x: box.minX + first + point.y * step, y: box.minY + point.x)
            }
            placed.alongRows = alongRows
            return placed
        }
    }
}
