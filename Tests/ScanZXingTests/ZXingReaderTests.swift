import ScanCore
import ScanSynth
import ScanTestSupport
import ScanTestTiming
import Testing

@testable import ScanZXing

/// The second engine on codes zint renders: what zbar cannot read, identical values, errors.
@Suite("zxing-cpp reader", .timed)
struct ZXingReaderTests {
    /// A white frame with each sprite pasted at its place.
    static func frame(_ sprites: [(Sprite, Int, Int)], width: Int = 640, height: Int = 400) -> GrayImage {
        var image = GrayImage(width: width, height: height, fill: 245)
        for (sprite, x, y) in sprites {
            for row in 0..<sprite.height {
                for column in 0..<sprite.width {
                    image[x + column, y + row] = sprite.pixels[row * sprite.width + column]
                }
            }
        }
        return image
    }

    @Test("DataMatrix and PDF417 are read with their values, four corners in frame coordinates, engine zxing")
    func matrixCodes() throws {
        let (matrix, matrixValue) = try BarcodeRenderer.render(.dataMatrix, "LPN-000123", moduleSize: 4)
        let (stacked, stackedValue) = try BarcodeRenderer.render(
            .pdf417, "SHIP 1Z999AA10123456784", moduleSize: 2, barHeight: 6)
        let image = Self.frame([(matrix, 40, 40), (stacked, 40, 200)])
        let found = try ZXingReader(settings: .matrixOnly).read(image)
        let byValue = Dictionary(uniqueKeysWithValues: found.map { ($0.text ?? "?", $0) })
        #expect(Set(byValue.keys) == [matrixValue, stackedValue])
        let dm = try #require(byValue[matrixValue])
        #expect(dm.symbology == .dataMatrix)
        #expect(dm.engine == "zxing")
        #expect(dm.points.count == 4)
        let box = try #require(dm.box)
        #expect(
            box.minX >= 38 && box.minX <= 60 && box.minY >= 38 && box.minY <= 60,
            "corners where the symbol was pasted: \(box)")
        #expect(byValue[stackedValue]?.symbology == .pdf417)
    }

    @Test("two identical DataMatrix symbols in one frame are two results")
    func identicalValues() throws {
        let (matrix, value) = try BarcodeRenderer.render(.dataMatrix, "TOTE-42", moduleSize: 4)
        let image = Self.frame([(matrix, 40, 60), (matrix, 360, 220)])
        let found = try ZXingReader(settings: .matrixOnly).read(image)
        #expect(found.map(\.text) == [value, value])
        let boxes = found.compactMap(\.box)
        #expect(boxes.count == 2 && boxes[0].intersectionOverUnion(boxes[1]) == 0, "two places, not one symbol twice")
    }

    @Test("narrowed formats: a reader for DataMatrix does not report the QR code next to it")
    func narrowedFormats() throws {
        let (matrix, value) = try BarcodeRenderer.render(.dataMatrix, "DM-1", moduleSize: 4)
        let (qr, qrValue) = try BarcodeRenderer.render(.qrCode, "QR-1", moduleSize: 4)
        let image = Self.frame([(matrix, 40, 60), (qr, 360, 60)])
        #expect(try ZXingReader(settings: ZXingSettings(symbologies: [.dataMatrix])).read(image).map(\.text) == [value])
        let all = try ZXingReader().read(image)
        #expect(Set(all.compactMap(\.text)) == [value, qrValue])
        #expect(all.first { $0.text == qrValue }?.symbology == .qrCode)
    }

    @Test("binary payloads keep their bytes; GS1 data is flagged")
    func bytesAndGS1() throws {
        let (matrix, _) = try BarcodeRenderer.render(
            .dataMatrix, "[01]09506000134352[10]ABC123", moduleSize: 4, gs1: true)
        let found = try ZXingReader(settings: .matrixOnly).read(Self.frame([(matrix, 40, 40)]))
        let gs1 = try #require(found.first)
        #expect(gs1.isGS1)
        #expect(gs1.value == Array("0109506000134352".utf8) + Array("10ABC123".utf8))
    }

    @Test("a code's text comes in UTF-8 whatever its character set; binary content keeps its bytes")
    func characterSets() throws {
        // Latin-1 "Größe é" in byte mode without an ECI: zxing-cpp tells ISO-8859-1 from the bytes.
        let latin1: [UInt8] = [0x47, 0x72, 0xF6, 0xDF, 0x65, 0x20, 0xE9]
        let binary: [UInt8] = [0x00, 0xFF, 0x80, 0x01, 0xFE, 0x7F, 0x00, 0x9C, 0x1B, 0xC3]
        for symbology in [SynthSymbology.qrCode, .dataMatrix] {
            let text = try BarcodeRenderer.render(symbology, bytes: latin1, moduleSize: 4)
            let data = try BarcodeRenderer.render(symbology, bytes: binary, moduleSize: 4)
            let found = try ZXingReader().read(Self.frame([(text, 40, 40), (data, 360, 40)]))
            let sorted = found.sorted { ($0.box?.minX ?? 0) < ($1.box?.minX ?? 0) }
            #expect(sorted.map(\.value) == [Array("Größe é".utf8), binary], "\(symbology)")
        }
        // Plain ASCII is its bytes either way.
        let (ascii, value) = try BarcodeRenderer.render(.qrCode, "LPN-42 ok", moduleSize: 4)
        #expect(try ZXingReader().read(Self.frame([(ascii, 40, 40)])).map(\.value) == [Array(value.utf8)])
    }

    @Test("bad input is an error that names it; a reader for nothing zxing-cpp reads is refused")
    func errors() throws {
        #expect {
            try ZXingReader().read(GrayImage(width: 0, height: 0, pixels: []), input: "cam-07 frame 12")
        } throws: { error in
            (error as? ZXingError)?.description.contains("cam-07 frame 12") == true
        }
        #expect {
            try ZXingReader(settings: ZXingSettings(symbologies: [.ean2]))
        } throws: { error in
            (error as? ZXingError)?.description.contains("EAN-2") == true
        }
        #expect(ZXingReader.reads(.dataMatrix) && ZXingReader.reads(.maxiCode) && !ZXingReader.reads(.sqCode))
    }

    @Test("an empty frame gives nothing, and noise gives nothing")
    func nothing() throws {
        #expect(try ZXingReader().read(GrayImage(width: 320, height: 200, fill: 200)).isEmpty)
        var generator = SeededGenerator(seed: 3)
        let noise = GrayImage(
            width: 320, height: 200, pixels: (0..<64_000).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
        #expect(try ZXingReader().read(noise).isEmpty)
    }
}
