import ScanTestSupport
import ScanTestTiming
import Testing

@testable import ScanCore

@Suite("values as events carry them", .timed)
struct EncodedValueTests {
    @Test("base64 matches RFC 4648 test vectors")
    func vectors() {
        let vectors = [
            "": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=",
            "foobar": "Zm9vYmFy",
        ]
        for (plain, encoded) in vectors {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(Base64.decode(encoded) == Array(plain.utf8))
        }
        #expect(Base64.decode("no*t") == nil)
    }

    @Test("random bytes round-trip through base64")
    func roundTrip() {
        var generator = SeededGenerator(seed: 42)
        for length in 0..<64 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(Base64.decode(Base64.encode(bytes)) == bytes)
        }
    }

    @Test("text stays text, GS1 separators included; NUL and invalid UTF-8 become base64")
    func encoding() {
        #expect(EncodedValue(bytes: Array("4006381333931".utf8)).encoding == "text")
        #expect(EncodedValue(bytes: Array("0104012345678901\u{1D}10ABC".utf8)).text == "0104012345678901\u{1D}10ABC")
        #expect(EncodedValue(bytes: [0x41, 0x00, 0x42]).encoding == "base64")
        #expect(EncodedValue(bytes: [0xFF, 0xFE]).eventString == "//4=")
        #expect(EncodedValue(bytes: Array("📦".utf8)).text == "📦")
    }
}

@Suite("geometry and names", .timed)
struct GeometryTests {
    @Test("a box encloses its points and measures overlap")
    func box() throws {
        let box = try #require(Box(enclosing: [Point(x: 5, y: 9), Point(x: 1, y: 3), Point(x: 4, y: 4)]))
        #expect(box == Box(minX: 1, minY: 3, maxX: 5, maxY: 9))
        #expect(box.intersectionOverUnion(box) == 1)
        #expect(box.intersectionOverUnion(Box(minX: 100, minY: 100, maxX: 110, maxY: 110)) == 0)
        #expect(Box(enclosing: [Point]()) == nil)
    }

    @Test("a box widened by a margin, clamped to a frame; gaps between boxes along each axis")
    func widenedAndGap() throws {
        let box = Box(minX: 10, minY: 20, maxX: 29, maxY: 24)
        #expect(box.widened(x: 5, y: 2) == Box(minX: 5, minY: 18, maxX: 34, maxY: 26))
        #expect(box.widened(by: 3).width == box.width + 6)
        #expect(box.widened(by: -2) == Box(minX: 12, minY: 22, maxX: 27, maxY: 22))
        let frame = Box(minX: 0, minY: 0, maxX: 31, maxY: 31)
        #expect(box.widened(by: 12).clamped(to: frame) == Box(minX: 0, minY: 8, maxX: 31, maxY: 31))
        #expect(Box(minX: 40, minY: 40, maxX: 50, maxY: 50).widened(by: 4).clamped(to: frame) == nil)
        // Side by side on x (adjacent pixels), apart on y by 10 rows.
        let beside = Box(minX: 30, minY: 35, maxX: 39, maxY: 40)
        #expect(box.gap(to: beside) == (x: 1, y: 11))
        #expect(beside.gap(to: box) == (x: 1, y: 11))
        // Overlapping on x by 5 columns: the gap is 1 - 5.
        let overlapping = Box(minX: 25, minY: 0, maxX: 60, maxY: 5)
        #expect(box.gap(to: overlapping).x == -4)
        #expect(box.gap(to: overlapping).y == 15)
    }

    @Test("symbology names: contract spellings and common aliases")
    func names() {
        #expect(Symbology(name: "EAN-13") == .ean13)
        #expect(Symbology(name: "ean13") == .ean13)
        #expect(Symbology(name: "code128") == .code128)
        #expect(Symbology(name: "qr") == .qrCode)
        #expect(Symbology(name: "I2/5") == .interleaved2of5)
        #expect(Symbology(name: "telepen") == nil)
    }
}
