import ScanTestSupport
import Testing

@testable import ScanCore

@Suite("values as events carry them")
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

@Suite("PGM images")
struct PGMTests {
    @Test("encode then parse gives the same image")
    func roundTrip() throws {
        var image = GrayImage(width: 7, height: 3, fill: 200)
        image[2, 1] = 0
        #expect(try PGM.parse(PGM.encode(image)) == image)
    }

    @Test("a colour PPM becomes luma with the BT.601 weights")
    func colour() throws {
        let bytes = Array("P6\n3 1\n255\n".utf8) + [255, 255, 255, 255, 0, 0, 0, 0, 255]
        #expect(try PGM.parse(bytes) == GrayImage(width: 3, height: 1, pixels: [255, 76, 28]))
    }

    @Test("headers with comments parse")
    func comments() throws {
        let bytes = Array("P5\n# made by hand\n2 1\n255\n".utf8) + [10, 20]
        #expect(try PGM.parse(bytes) == GrayImage(width: 2, height: 1, pixels: [10, 20]))
    }

    @Test(
        "damaged files are refused with the reason",
        arguments: [
            ("P3\n1 1\n255\n0 0 0", "not a binary PGM"),
            ("P6\n2 1\n255\n\u{0}\u{0}\u{0}", "truncated"),
            ("P5\n2 2\n255\n\u{0}", "truncated"),
            ("P5\n2 2\n65535\n", "8-bit"),
            ("P5\n\n", "missing width"),
        ])
    func damaged(input: String, reason: String) {
        #expect {
            try PGM.parse(Array(input.utf8))
        } throws: { error in
            (error as? PGM.ParseError)?.reason.contains(reason) == true
        }
    }
}

@Suite("geometry and names")
struct GeometryTests {
    @Test("a box encloses its points and measures overlap")
    func box() throws {
        let box = try #require(Box(enclosing: [Point(x: 5, y: 9), Point(x: 1, y: 3), Point(x: 4, y: 4)]))
        #expect(box == Box(minX: 1, minY: 3, maxX: 5, maxY: 9))
        #expect(box.intersectionOverUnion(box) == 1)
        #expect(box.intersectionOverUnion(Box(minX: 100, minY: 100, maxX: 110, maxY: 110)) == 0)
        #expect(Box(enclosing: [Point]()) == nil)
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
