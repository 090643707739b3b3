import ScanCore
import ScanSynth
import ScanTestTiming
import Testing

@testable import ScanZBar
import ScanVision

/// The agent's decoder on rendered codes: region of interest, add-ons.
@Suite("frame decoder", .timed)
struct FrameDecoderTests {
    /// A white 640x400 frame with `sprite` pasted at (x, y).
    static func frame(with sprite: Sprite, x: Int, y: Int) -> GrayImage {
        var image = GrayImage(width: 640, height: 400, fill: 245)
        for row in 0..<sprite.height {
            for column in 0..<sprite.width { image[x + column, y + row] = sprite.pixels[row * sprite.width + column] }
        }
        return image
    }

    @Test("only the region of interest is decoded, and points come back in frame coordinates")
    func regionOfInterest() throws {
        let (code, value) = try BarcodeRenderer.render(.qrCode, "TOTE-77", moduleSize: 4)
        let image = Self.frame(with: code, x: 400, y: 250)
        var config = DecoderConfig()
        config.density = 1
        let whole = try ZBarFrameDecoder(config: config).decode(image)
        #expect(whole.map(\.text) == [value])
        config.regionOfInterest = RegionOfInterest(x: 0.5, y: 0.5, width: 0.5, height: 0.5)
        let inside = try ZBarFrameDecoder(config: config).decode(image)
        #expect(inside.map(\.text) == [value])
        #expect(inside.first?.box == whole.first?.box, "frame coordinates, not region coordinates")
        config.regionOfInterest = RegionOfInterest(x: 0, y: 0, width: 0.5, height: 1)
        #expect(try ZBarFrameDecoder(config: config).decode(image).isEmpty)
    }

    @Test("a planned region scanned both ways is searched for QR codes, one scanned one way is not (zbar needs both)")
    func qrOnlyBothWays() throws {
        let (code, value) = try BarcodeRenderer.render(.qrCode, "TOTE-78", moduleSize: 4)
        let image = Self.frame(with: code, x: 200, y: 100)
        let box = Box(minX: 180, minY: 80, maxX: 200 + code.width + 20, maxY: 100 + code.height + 20)
        let symbologies: Set<Symbology> = [.qrCode, .ean13, .code128]
        func read(rows: Int, columns: Int) throws -> [String?] {
            let region = DecodePlanner.Region(box: box, purpose: .discovery, rowStep: rows, columnStep: columns)
            let settings = ZBarFrameDecoder.settings(for: region, symbologies: symbologies)
            if rows == 0 || columns == 0 {
                #expect(settings.symbologies == [.ean13, .code128])
            } else {
                #expect(settings.symbologies == symbologies)
            }
            return try ZBarScanner(settings: settings).scan(image.cropped(to: box)).map(\.text)
        }
        #expect(try read(rows: 2, columns: 2) == [value])
        // zbar itself finds none one way, whether it looks or not: nothing is lost.
        for (rows, columns) in [(2, 0), (0, 2)] {
            #expect(try read(rows: rows, columns: columns).isEmpty)
            let looking = ZBarSettings(symbologies: symbologies, density: 2, rowStep: rows, columnStep: columns)
            #expect(try ZBarScanner(settings: looking).scan(image.cropped(to: box)).isEmpty)
        }
    }

    @Test(
        "a tracked region of codes zbar does not read (a DataMatrix) is not scanned; one holding a code zbar reads, or a discovery region, is"
    )
    func othersOnlyNotScanned() throws {
        let (code, value) = try BarcodeRenderer.render(.ean13, "4006381333931", moduleSize: 2)
        let image = Self.frame(with: code, x: 200, y: 150)
        let box = Box(minX: 160, minY: 130, maxX: 240 + code.width, maxY: 170 + code.height)
        var config = DecoderConfig()
        config.symbologies = [.ean13, .code128, .qrCode, .dataMatrix]
        let decoder = try ZBarFrameDecoder(config: config)
        func track(_ symbology: Symbology) -> DecodePlanner.TrackedCode {
            DecodePlanner.TrackedCode(
                symbology: symbology, value: Array("LP-1".utf8), box: box, typicalWidth: box.width,
                typicalHeight: box.height, velocityX: 0, velocityY: 0, readAlongRows: nil, confirmed: true)
        }
        func read(_ purpose: DecodePlanner.Purpose, _ tracks: [DecodePlanner.TrackedCode]) throws -> [String?] {
            let region = DecodePlanner.Region(
                box: box, purpose: purpose, rowStep: 2, columnStep: 2, tracks: Array(tracks.indices))
            return try decoder.decode(image, regions: [region], tracks: tracks, threads: 1).map(\.text)
        }
        #expect(try read(.tracked, [track(.dataMatrix)]).isEmpty)
        #expect(try read(.tracked, [track(.dataMatrix), track(.code128)]) == [value])
        #expect(try read(.tracked, [track(.qrCode)]) == [value], "zbar reads QR: its region is scanned")
        #expect(try read(.discovery, []) == [value])
        #expect(try read(.tracked, []) == [value], "a tracked region of no track is scanned")
    }

    @Test("an EAN-13 with an EAN-5 add-on is one detection with addOn set")
    func addOn() throws {
        let (code, _) = try BarcodeRenderer.render(.ean13, "978014300723+51299", moduleSize: 2)
        let image = Self.frame(with: code, x: 100, y: 100)
        var config = DecoderConfig()
        config.density = 1
        config.symbologies = [.ean13, .ean5, .ean2]
        let found = try ZBarFrameDecoder(config: config).decode(image)
        #expect(found.count == 1)
        #expect(found.first?.symbology == .ean13)
        #expect(found.first?.addOn == "51299")
        #expect(found.first.map { Symbology.hasValidGS1CheckDigit($0.value) } == true)
    }

    @Test("a linear read carries the direction of the lines that read it: along rows upright, down columns turned")
    func scanDirection() throws {
        var config = DecoderConfig()
        config.density = 2
        for (symbology, text) in [(SynthSymbology.code128, "LPN700013"), (.ean13, "400638133393")] {
            let (code, _) = try BarcodeRenderer.render(symbology, text, moduleSize: 2)
            let upright = try ZBarFrameDecoder(config: config).decode(Self.frame(with: code, x: 60, y: 60))
            #expect(upright.count == 1 && upright.allSatisfy { $0.alongRows == true }, "\(symbology) upright")
            // The same code turned a quarter: its bars run along rows, only columns read it.
            var turned = GrayImage(width: 640, height: 400, fill: 245)
            for row in 0..<code.height {
                for column in 0..<code.width { turned[60 + row, 20 + column] = code.pixels[row * code.width + column] }
            }
            let sideways = try ZBarFrameDecoder(config: config).decode(turned)
            #expect(sideways.count == 1 && sideways.allSatisfy { $0.alongRows == false }, "\(symbology) turned")
        }
    }
}

/// Another engine's reads checked as zbar's own: what the zxing-cpp sweep finds passes here.
@Suite("frame decoder: checking another engine's reads", .timed)
struct CheckedReadsTests {
    @Test(
        "an EAN-13 read where the label is passes; another valid value there is rejected and counted; Code 128 passes")
    func checksEANReads() throws {
        let (code, value) = try BarcodeRenderer.render(.ean13, "4006381333931", moduleSize: 2, barHeight: 40)
        let image = FrameDecoderTests.frame(with: code, x: 200, y: 150)
        let decoder = try ZBarFrameDecoder(config: DecoderConfig())
        // Where zxing-cpp's sweep places a read: the code's length, a few of its lines.
        let points = [Point(x: 210, y: 160), Point(x: 200 + code.width - 10, y: 160), Point(x: 210, y: 178)]
        let right = Detection(symbology: .ean13, value: Array(value.utf8), points: points, engine: "zxing")
        // A valid EAN-13 (its check digit holds) that is not on the label: a misread.
        let wrong = Detection(symbology: .ean13, value: Array("5901234123457".utf8), points: points, engine: "zxing")
        let other = Detection(symbology: .code128, value: Array("LPN1".utf8), points: points, engine: "zxing")
        let kept = try decoder.checked([right, wrong, other], in: image)
        #expect(kept == [right, other])
        #expect(decoder.rejectedParts == 1 && decoder.rescans >= 1)
        // Nowhere near a label: an EAN read there is not confirmed either.
        let away = Detection(
            symbology: .ean13, value: Array(value.utf8), points: [Point(x: 20, y: 20), Point(x: 120, y: 30)])
        #expect(try decoder.checked([away], in: image).isEmpty)
    }

    @Test(
        "a fine straightened view read by two engines: EAN/UPC values that contradict each other on one code are all dropped, agreeing or lone reads kept, the second engine's EAN/UPC not taken at the frame's edge"
    )
    func crossCheckedViews() {
        func read(
            _ value: String, _ symbology: Symbology = .ean13, from: Int, to: Int, row: Int, engine: String = "zbar"
        )
            -> Detection
        {
            Detection(
                symbology: symbology, value: Array(value.utf8),
                points: [Point(x: from, y: row), Point(x: to, y: row)], engine: engine)
        }
        let right = "4843257876501"
        let wrong = "7843117876501"
        let values = { (reads: [Detection]) in reads.map { String(decoding: $0.value, as: UTF8.self) }.sorted() }
        // zbar misread it on its lines, zxing-cpp read it right: the code waits for another frame.
        let contradicted = ZBarFrameDecoder.crossChecked(
            [read(wrong, from: 10, to: 200, row: 8)], [read(right, from: 12, to: 198, row: 20, engine: "zxing")],
            atEdge: false)
        #expect(contradicted.isEmpty, "\(values(contradicted))")
        // One engine read two values on the same code (1 px a module): neither.
        let twoValues = ZBarFrameDecoder.crossChecked(
            [], [read(right, from: 12, to: 198, row: 20), read(wrong, from: 30, to: 190, row: 40)], atEdge: false)
        #expect(twoValues.isEmpty, "\(values(twoValues))")
        // Agreeing engines: one read; zxing-cpp alone: its read; a second code further along: kept.
        let agreed = ZBarFrameDecoder.crossChecked(
            [read(right, from: 10, to: 200, row: 8)],
            [read(right, from: 12, to: 198, row: 20), read("AA-19", .code128, from: 260, to: 400, row: 20)],
            atEdge: false)
        #expect(values(agreed) == [right, "AA-19"])
        let apart = ZBarFrameDecoder.crossChecked(
            [read(right, from: 10, to: 200, row: 8)], [read("4006381333931", from: 240, to: 420, row: 8)],
            atEdge: false)
        #expect(values(apart) == ["4006381333931", right])
        // ITF from the second engine is not taken (no check character); at the frame's edge its
        // EAN/UPC reads are not either (a cut label read with a made-up left half), zbar's are.
        let itf = read("12345670", .interleaved2of5, from: 320, to: 400, row: 8)
        let edge = ZBarFrameDecoder.crossChecked(
            [read("AA-5", .code128, from: 10, to: 100, row: 8)],
            [read(right, from: 120, to: 300, row: 8), itf],
            atEdge: true)
        #expect(values(edge) == ["AA-5"])
        let inside = ZBarFrameDecoder.crossChecked(
            [], [read(right, from: 120, to: 300, row: 8), itf],
            atEdge: false)
        #expect(values(inside) == [right])
    }
}
