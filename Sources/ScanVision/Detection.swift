import ScanCore

/// One decoded symbol in one frame.
public struct Detection: Sendable, Equatable {
    public var symbology: Symbology
    /// The decoded bytes, exactly as the decoder returned them.
    public var value: [UInt8]
    /// Where the decoder saw it. For linear codes zbar reports scan-line hits, for 2D codes corners.
    public var points: [Point]
    /// FNC1 in first position: the data is GS1 element strings, FNC1 separators kept as GS (0x1D).
    public var isGS1: Bool
    /// An EAN-2/EAN-5 supplement read with the main code.
    public var addOn: String?
    /// Which engine read it ("zbar", "zxing").
    public var engine: String
    /// For a linear code read by zbar, the direction of the scan lines that read it: true along
    /// rows, false down columns (zbar's symbol orientation); nil when unknown.
    public var alongRows: Bool?
    /// When the value was expanded (UPC-A or UPC-E reported as EAN-13): the code as printed.
    public var printed: Printed?
    /// Read on a view straightened along the code's bars (a linear code at a steep angle, which
    /// no row or column of the frame crosses whole: `ZBarFrameDecoder.readAngled`).
    public var straightened = false
    /// How many of zxing-cpp's scan lines read this linear code (its line count); nil for zbar's
    /// reads (their points are the lines) and for 2D codes.
    public var lines: Int?

    /// A code as printed, before it was expanded.
    public struct Printed: Sendable, Equatable, Hashable {
        public var symbology: Symbology
        public var value: [UInt8]

        public init(symbology: Symbology, value: [UInt8]) {
            self.symbology = symbology
            self.value = value
        }
    }

    public init(
        symbology: Symbology, value: [UInt8], points: [Point], isGS1: Bool = false, addOn: String? = nil,
        engine: String = "zbar", alongRows: Bool? = nil
    ) {
        self.symbology = symbology
        self.value = value
        self.points = points
        self.isGS1 = isGS1
        self.addOn = addOn
        self.engine = engine
        self.alongRows = alongRows
    }

    /// The scan direction: zbar's orientation when known, else what the points' order shows.
    public var readsAlongRows: Bool { alongRows ?? DetectionSplitter.scansHorizontally(points) }

    /// Takes another read of the same value into this one: its points, and its scan direction
    /// when the two agree.
    public mutating func absorb(_ other: Detection) {
        points += other.points
        if alongRows != other.alongRows { alongRows = nil }
        straightened = straightened && other.straightened
    }

    public var box: Box? { Box(enclosing: points) }

    /// The same physical code read twice in one frame (by two engines, or in two regions): same
    /// symbology and value, overlapping boxes (or a read without a place).
    public func isSameCode(as other: Detection) -> Bool {
        guard symbology == other.symbology, value == other.value else { return false }
        guard let box, let otherBox = other.box else { return true }
        return box.intersects(otherBox)
    }

    /// The value as text when it is valid UTF-8 without NUL, else nil (then events carry base64).
    public var text: String? { EncodedValue(bytes: value).text }
}

extension Detection {
    /// Interleaved 2 of 5 has no check character, and its start and stop patterns also occur
    /// inside its data: a scan line that crosses only part of the bars (a label at an angle, its
    /// lines leaving through the bars' ends) reads a shorter value that is valid all the same.
    public var truncationProne: Bool { symbology == .interleaved2of5 }

    /// A truncation-prone read that lies on or beside a longer read of `reads` of the same
    /// symbology: what a slanted line made of part of the bars (mostly a piece of the value, now
    /// and then other digits); two codes do not lie on each other. Nor on a read of another symbology with a
    /// check of its own: at 1.25 px a module zbar reads an EAN-13's blurred bars as ITF on a few
    /// lines, around the EAN-13 it reads on others.
    public func isTruncation(among reads: [Detection]) -> Bool {
        guard truncationProne, let box else { return false }
        return reads.contains { other in
            guard let otherBox = other.box else { return false }
            // The longer read's points are the lines that crossed it whole (at an angle, those of
            // its straightened view, the bars' middle); a slanted row can cross a part of the bars
            // beyond them, nearer their ends: a quarter of the code's size around it counts.
            if other.symbology == symbology {
                let reach = max(otherBox.width, otherBox.height) / 4 + 8
                return other.value.count > value.count && otherBox.widened(by: reach).intersects(box)
            }
            return other.symbology.isLinear && !other.truncationProne
                && (box.covers(otherBox, fraction: 0.5) || otherBox.covers(box, fraction: 0.5))
        }
    }
}

extension Array where Element == Detection {
    /// Without the reads that are truncations of another (`Detection.isTruncation(among:)`).
    public func withoutTruncatedReads() -> [Detection] {
        guard contains(where: \.truncationProne), count > 1 else { return self }
        return filter { !$0.isTruncation(among: self) }
    }

    /// Appends the reads of `more` that are not a code already in the array (one engine's or
    /// region's reads joining another's in one frame).
    public mutating func appendNew(_ more: [Detection]) {
        append(contentsOf: more.absent(from: self))
    }

    /// The reads that are not a code already in `present`.
    public func absent(from present: [Detection]) -> [Detection] {
        filter { read in !present.contains { $0.isSameCode(as: read) } }
    }

    /// As `appendNew`, except that a linear read on other lines of a code already in the array
    /// joins that read (its points are added): the same value, overlapping it along the lines over
    /// at least half of the shorter one's length, and no further off across the lines than the
    /// larger of the two is wide that way. Lines are rows unless either read was made down columns
    /// (a code turned a quarter). zxing-cpp reads a tracked code on the band of lines where the
    /// track expects it, zbar may read another band of it in a discovery region; apart, the
    /// tracker matches one and drops the other, never learns the code's extent across its lines,
    /// and the label's region is searched again every frame. Identical codes stacked a label apart
    /// stay two, and a piece that lies on a read of its value already is that code, never a band
    /// of another (two identical labels close behind each other).
    public mutating func appendJoiningBands(_ more: [Detection]) {
        for piece in more {
            // An add-on one engine read with a code the other read without it: the code has it.
            if let addOn = piece.addOn,
                let index = firstIndex(where: {
                    $0.addOn == nil && $0.symbology == piece.symbology && $0.isSameCode(as: piece)
                })
            {
                self[index].addOn = addOn
            }
            guard piece.symbology.isLinear, let pieceBox = piece.box,
                !contains(where: { read in
                    read.symbology == piece.symbology && read.value == piece.value
                        && (read.isSameCode(as: piece) || read.box?.intersects(pieceBox) == true)
                }),
                let index = firstIndex(where: { read in
                    guard read.symbology == piece.symbology, read.value == piece.value, let box = read.box else {
                        return false
                    }
                    return Self.bandsOfOneCode(
                        box, pieceBox, alongRows: read.alongRows != false && piece.alongRows != false)
                })
            else { continue }
            self[index].points += piece.points
        }
        appendNew(more)
    }

    /// Two reads that are bands of one code's lines: overlapping along the lines over half the
    /// shorter, apart across them by no more than the larger is across (16 px at least).
    static func bandsOfOneCode(_ a: Box, _ b: Box, alongRows: Bool) -> Bool {
        // Down columns: the same test on the boxes turned (x for y).
        let turn = { (box: Box) in Box(minX: box.minY, minY: box.minX, maxX: box.maxY, maxY: box.maxX) }
        let (a, b) = alongRows ? (a, b) : (turn(a), turn(b))
        let overlap = Swift.min(a.maxX, b.maxX) - Swift.max(a.minX, b.minX)
        let gap = Swift.max(a.minY, b.minY) - Swift.min(a.maxY, b.maxY)
        return overlap >= Swift.min(a.width, b.width) / 2 && gap > 0 && gap <= Swift.max(a.height, b.height, 16)
    }
}
