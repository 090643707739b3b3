import ScanCore
import ScanTestTiming
import Testing

@testable import ScanVision

/// One frame's reads from several engines and regions, put together.
@Suite("detections of one frame", .timed)
struct DetectionTests {
    static func read(_ value: String, _ box: Box, symbology: Symbology = .code128, engine: String = "zbar")
        -> Detection
    {
        Detection(symbology: symbology, value: Array(value.utf8), points: box.corners, engine: engine)
    }

    @Test(
        "a read on other rows of a code already read joins it; one that overlaps is dropped; a stacked twin, another value or a far band stays apart"
    )
    func joiningBands() throws {
        // zxing-cpp's read of a tracked Code 128: a 22 px band of its 125 px bars.
        let band = Box(minX: 940, minY: 608, maxX: 1154, maxY: 630)
        var frame = [Self.read("LPN700023", band, engine: "zxing")]
        frame.appendJoiningBands([
            // zbar on the label's discovery region: rows further down the same bars.
            Self.read("LPN700023", Box(minX: 948, minY: 643, maxX: 1162, maxY: 703)),
            // The same value on the next label of the stack, 270 px lower: another code.
            Self.read("LPN700023", Box(minX: 940, minY: 900, maxX: 1154, maxY: 1010)),
            // Another value beside it, and a read overlapping the band (the same read again).
            Self.read("LPN700024", Box(minX: 940, minY: 640, maxX: 1154, maxY: 700)),
            Self.read("LPN700023", Box(minX: 950, minY: 612, maxX: 1150, maxY: 628)),
        ])
        #expect(frame.count == 3, "\(frame.map(\.box))")
        let joined = try #require(frame.first?.box)
        #expect(joined == Box(minX: 940, minY: 608, maxX: 1162, maxY: 703), "both bands: \(joined)")
        #expect(frame.dropFirst().compactMap(\.text) == ["LPN700023", "LPN700024"])
        // Along the rows half the code at least: a read of the same value beside it is not a band.
        var beside = [Self.read("LPN700023", band)]
        beside.appendJoiningBands([Self.read("LPN700023", Box(minX: 1100, minY: 640, maxX: 1314, maxY: 700))])
        #expect(beside.count == 2)
        // Down columns (a code turned a quarter, read so by either engine): bands side by side.
        var turned = [Self.read("LPN700025", Box(minX: 608, minY: 940, maxX: 630, maxY: 1154), engine: "zxing")]
        turned[0].alongRows = false
        turned.appendJoiningBands([
            Self.read("LPN700025", Box(minX: 643, minY: 948, maxX: 703, maxY: 1162)),
            Self.read("LPN700025", Box(minX: 900, minY: 940, maxX: 1010, maxY: 1154)),
        ])
        #expect(turned.count == 2 && turned.first?.box == Box(minX: 608, minY: 940, maxX: 703, maxY: 1162))
        // A 2-D code is never joined: its corners are its own.
        var qr = [Self.read("Q1", Box(minX: 0, minY: 0, maxX: 99, maxY: 99), symbology: .qrCode)]
        qr.appendJoiningBands([Self.read("Q1", Box(minX: 0, minY: 110, maxX: 99, maxY: 209), symbology: .qrCode)])
        #expect(qr.count == 2)
    }

    @Test("the reads not already present: another value, or the same value elsewhere; an overlapping read of it is not")
    func absent() {
        let present = [Self.read("LPN700030", Box(minX: 100, minY: 100, maxX: 300, maxY: 160), engine: "zxing")]
        let more = [
            Self.read("LPN700030", Box(minX: 120, minY: 110, maxX: 310, maxY: 150)),
            Self.read("LPN700030", Box(minX: 600, minY: 100, maxX: 800, maxY: 160)),
            Self.read("LPN700031", Box(minX: 120, minY: 110, maxX: 310, maxY: 150)),
        ]
        #expect(more.absent(from: present).map(\.box?.minX) == [600, 120])
        var joined = present
        joined.appendNew(more)
        #expect(joined.count == 3)
    }

    @Test(
        "an ITF piece on a slanted row beside the longer ITF read of its code's middle lines is dropped; a piece of another label further off, or a whole code of another symbology, is not"
    )
    func truncatedPieces() {
        // The straightened view read the code on the middle of its bars (a 217 × 39 px box); a
        // frame row 20 px below that box crossed a part of the slanted bars.
        let whole = Self.read(
            "8968523226", Box(minX: 191, minY: 134, maxX: 408, maxY: 173), symbology: .interleaved2of5)
        let piece = Self.read("896852", Box(minX: 258, minY: 193, maxX: 390, maxY: 194), symbology: .interleaved2of5)
        // An ITF label of its own 200 px below, and a Code 39 beside the ITF code.
        let other = Self.read("4411", Box(minX: 200, minY: 380, maxX: 300, maxY: 420), symbology: .interleaved2of5)
        let code39 = Self.read("ABC", Box(minX: 260, minY: 180, maxX: 380, maxY: 200), symbology: .code39)
        let kept = [whole, piece, other, code39].withoutTruncatedReads().map {
            String(decoding: $0.value, as: UTF8.self)
        }
        #expect(kept == ["8968523226", "4411", "ABC"])
    }
}
