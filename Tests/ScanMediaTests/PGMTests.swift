import ScanTestSupport
import ScanTestTiming
import Testing

@testable import ScanCore
@testable import ScanMedia

@Suite("PGM images", .timed)
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
