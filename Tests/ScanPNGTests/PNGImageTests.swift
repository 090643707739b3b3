import Foundation
import ScanCore
import ScanPNG
import ScanTestSupport
import ScanTestTiming
import Testing

@Suite("PNG still images", .timed)
struct PNGImageTests {
    @Test("a greyscale image written and read back is the same image")
    func roundTrip() throws {
        var image = GrayImage(width: 37, height: 11, fill: 0)
        for index in image.pixels.indices { image.pixels[index] = UInt8((index * 7) % 256) }
        let bytes = try PNGImage.encode(image)
        #expect(PNGImage.isPNG(bytes))
        #expect(try PNGImage.decode(bytes) == image)
    }

    @Test("colour and transparency become luma: red darker than green, transparent white")
    func colour() throws {
        // Written by ImageMagick: 3x1 RGBA, red, green, fully transparent black.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(TestEnvironment.uniqueName("png")).path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/rgba.png"
        let result = try ProcessRunner.run(
            "/usr/bin/convert",
            ["-size", "1x1", "xc:#ff0000", "xc:#00ff00", "xc:#00000000", "+append", "PNG32:" + path])
        try #require(result.status == 0, "convert: \(result.stderr)")
        let data = try #require(FileManager.default.contents(atPath: path))
        let image = try PNGImage.decode(Array(data))
        #expect(image.width == 3 && image.height == 1)
        // libpng weighs the channels in linear light (Rec. 709): red 0.21, green 0.72, re-encoded as sRGB.
        #expect(image.pixels[0] < image.pixels[1], "red is darker than green: \(image.pixels)")
        #expect(image.pixels[0] > 100 && image.pixels[0] < 150, "red: \(image.pixels[0])")
        #expect(image.pixels[1] > 200 && image.pixels[1] < 250, "green: \(image.pixels[1])")
        #expect(image.pixels[2] == 255, "transparent is laid over white")
    }

    @Test("damaged, truncated and foreign bytes are clear errors, never a crash")
    func damaged() throws {
        let good = try PNGImage.encode(GrayImage(width: 64, height: 64, fill: 128))
        #expect(throws: PNGImage.PNGError.self) { try PNGImage.decode(Array("P5\n1 1\n255\n".utf8) + [0]) }
        #expect(throws: PNGImage.PNGError.self) { try PNGImage.decode(Array(good.prefix(good.count / 2))) }
        #expect(throws: PNGImage.PNGError.self) { try PNGImage.decode(Array(good.prefix(12))) }
        var corrupted = good
        for index in 40..<min(corrupted.count, 60) { corrupted[index] ^= 0x5A }
        #expect(throws: PNGImage.PNGError.self) { try PNGImage.decode(corrupted) }
        // A header claiming a huge image is refused before any pixel is allocated.
        let huge = try PNGImage.encode(GrayImage(width: 200, height: 200, fill: 0))
        do {
            _ = try PNGImage.decode(huge, maxPixels: 1_000)
            Issue.record("a 200x200 image passed a 1,000-pixel limit")
        } catch {
            #expect(error.reason.contains("larger than 1000 pixels"))
        }
    }
}
