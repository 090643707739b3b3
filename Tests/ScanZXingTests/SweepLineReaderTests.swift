import ScanCore
import ScanSynth
import ScanTestTiming
import ScanVision
import Testing

@testable import ScanZXing

/// zxing-cpp on the sweep's scan lines alone: what it reads, and where it places it in the frame.
@Suite("zxing-cpp on the sweep's lines", .timed)
struct SweepLineReaderTests {
    static let symbologies: Set<Symbology> = [.ean13, .code128, .qrCode, .ean2, .ean5]

    /// The sprite turned a quarter (its bars run along rows: a code read down columns).
    static func turned(_ sprite: Sprite) -> Sprite {
        var turned = Sprite(width: sprite.height, height: sprite.width, fill: 0)
        for row in 0..<sprite.height {
            for column in 0..<sprite.width {
                turned.pixels[column * sprite.height + row] = sprite.pixels[row * sprite.width + column]
            }
        }
        return turned
    }

    static func box(_ sprite: Sprite, _ x: Int, _ y: Int) -> Box {
        Box(minX: x, minY: y, maxX: x + sprite.width - 1, maxY: y + sprite.height - 1)
    }

    @Test(
        "rows and columns of a sweep region: each code read once, along the lines it lies on, inside its place in the frame"
    )
    func readsBothWays() throws {
        let (code, codeValue) = try BarcodeRenderer.render(.code128, "LPN700101", moduleSize: 2, barHeight: 40)
        let (ean, eanValue) = try BarcodeRenderer.render(.ean13, "4006381333931", moduleSize: 2, barHeight: 40)
        let (upright, uprightValue) = try BarcodeRenderer.render(.code128, "LPN700102", moduleSize: 2, barHeight: 40)
        let standing = Self.turned(upright)
        let image = ZXingReaderTests.frame(
            [(code, 40, 60), (ean, 400, 90), (standing, 760, 150)], width: 900, height: 500)
        let reader = try #require(try SweepLineReader(symbologies: Self.symbologies))
        #expect(reader.symbologies == [.ean13, .code128], "linear codes only: QR needs every line")
        let places = [
            codeValue: Self.box(code, 40, 60), eanValue: Self.box(ean, 400, 90),
            uprightValue: Self.box(standing, 760, 150),
        ]
        let rows = DecodePlanner.Region(box: image.bounds, purpose: .sweep, rowStep: 6, columnStep: 0)
        let columns = DecodePlanner.Region(box: image.bounds, purpose: .sweep, rowStep: 0, columnStep: 6)
        let both = DecodePlanner.Region(box: image.bounds, purpose: .sweep, rowStep: 6, columnStep: 6)
        let alongRows = try reader.read(image, region: rows, input: "test")
        let downColumns = try reader.read(image, region: columns, input: "test")
        let all = try reader.read(image, region: both, input: "test")
        #expect(Set(alongRows.compactMap(\.text)) == [codeValue, eanValue])
        #expect(downColumns.compactMap(\.text) == [uprightValue])
        #expect(all.compactMap(\.text).sorted() == [codeValue, eanValue, uprightValue].sorted(), "each once")
        for read in all {
            let box = try #require(read.box)
            let place = try #require(places[read.text ?? ""])
            #expect(place.covers(box, fraction: 1), "\(read.text ?? "?") at \(box), pasted at \(place)")
            // The whole code along its lines (its bars, not its quiet zones), several lines across.
            let (along, placeAlong, across) =
                read.text == uprightValue ? (box.height, place.height, box.width) : (box.width, place.width, box.height)
            #expect(along >= placeAlong * 3 / 4 && across >= 12, "\(read.text ?? "?"): \(box) in \(place)")
            #expect(read.alongRows == (read.text != uprightValue))
            #expect(read.engine == "zxing")
        }
    }

    @Test("a code crossed by one line only, a region off the frame or too small: nothing read, no crash")
    func nothingToRead() throws {
        // 5 px tall: lines 8 px apart cross it once at most; zxing-cpp wants two.
        let (flat, _) = try BarcodeRenderer.render(.code128, "LPN700103", moduleSize: 2, barHeight: 5)
        let (tall, tallValue) = try BarcodeRenderer.render(.code128, "LPN700104", moduleSize: 2, barHeight: 40)
        let image = ZXingReaderTests.frame([(flat, 40, 42), (tall, 40, 200)], width: 640, height: 300)
        let reader = try #require(try SweepLineReader(symbologies: Self.symbologies))
        let sweep = { (box: Box, step: Int) in
            try reader.read(
                image, region: DecodePlanner.Region(box: box, purpose: .sweep, rowStep: step, columnStep: step),
                input: "test")
        }
        #expect(try sweep(Box(minX: 0, minY: 0, maxX: 639, maxY: 120), 8).isEmpty, "one line crosses it")
        #expect(try sweep(image.bounds, 8).compactMap(\.text) == [tallValue])
        // Partly outside: clamped to the frame; wholly outside, a line or too narrow: nothing.
        #expect(try sweep(Box(minX: -50, minY: 150, maxX: 900, maxY: 400), 6).compactMap(\.text) == [tallValue])
        #expect(try sweep(Box(minX: 700, minY: 0, maxX: 900, maxY: 100), 6).isEmpty)
        #expect(try sweep(Box(minX: 0, minY: 200, maxX: 639, maxY: 203), 6).isEmpty)
        #expect(try sweep(Box(minX: 100, minY: 0, maxX: 110, maxY: 299), 6).isEmpty)
        #expect(try SweepLineReader(symbologies: [.qrCode, .ean2]) == nil, "no linear code zxing-cpp reads")
    }
}
