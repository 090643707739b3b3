import Foundation
import ScanCore
import ScanJPEG
import ScanTestSupport
import ScanTestTiming
import Testing
import ScanMedia

/// `scan-agent decode` on JPEG photos: the shared corpus's real JPEGs (taken by others), decoded by
/// libjpeg-turbo, against the same images converted to grayscale by ImageMagick; damaged files and
/// formats it does not read.
@Suite("scan-agent decode reads JPEG", .timed)
struct StillImageTests {
    /// The corpus's JPEG files with their grayscale PGM conversions (make test makes them).
    static func corpusJPEGs() throws -> [(jpeg: String, pgm: String, folder: String)] {
        let root = TestEnvironment.corpusRoot
        var found: [(String, String, String)] = []
        for folder in try FileManager.default.contentsOfDirectory(atPath: root + "/zxing").sorted() {
            for file in (try? FileManager.default.contentsOfDirectory(atPath: root + "/zxing/" + folder)) ?? []
            where file.lowercased().hasSuffix(".jpg") || file.lowercased().hasSuffix(".jpeg") {
                found.append(
                    (
                        root + "/zxing/\(folder)/\(file)",
                        TestEnvironment.grayCorpusRoot + "/zxing/\(folder)/\(file).pgm",
                        folder
                    ))
            }
        }
        return found.sorted { $0.0 < $1.0 }
    }

    @Test(
        "libjpeg-turbo's luma of every corpus JPEG is ImageMagick's grayscale of it, pixel for pixel within 4 levels on average"
    )
    func lumaMatchesImageMagick() throws {
        let images = try Self.corpusJPEGs()
        #expect(images.count >= 5, "the corpus has JPEG photos")
        var compared = 0
        for image in images {
            let decoded = try JPEGImage.decode(Array(try Data(contentsOf: URL(fileURLWithPath: image.jpeg))))
            let reference = try PGM.parse(Array(try Data(contentsOf: URL(fileURLWithPath: image.pgm))))
            // ImageMagick applies the EXIF orientation; a photo turned by it is compared by size only.
            guard decoded.width == reference.width && decoded.height == reference.height else {
                #expect(decoded.width * decoded.height == reference.width * reference.height, "\(image.jpeg)")
                continue
            }
            var total = 0
            for (a, b) in zip(decoded.pixels, reference.pixels) { total += abs(Int(a) - Int(b)) }
            let mean = Double(total) / Double(decoded.pixels.count)
            #expect(mean < 4, "\(image.jpeg): mean difference \(mean)")
            compared += 1
        }
        #expect(compared >= 5)
    }

    @Test("scan-agent decode reads the expected value from the corpus's JPEG files as from their grayscale conversions")
    func decodesCorpusJPEGs() throws {
        let images = try Self.corpusJPEGs()
        func values(_ paths: [String]) throws -> [String: Set<String>] {
            let result = try ProcessRunner.run(ReplayHarness.agent, ["decode"] + paths)
            #expect(result.status == 0, "\(result.stderr)")
            var found: [String: Set<String>] = [:]
            for line in result.stdoutText.split(separator: "\n") {
                let symbol = try JSONValue.parse(String(line))
                if let file = symbol["file"]?.stringValue, let value = symbol["value"]?.stringValue {
                    found[file, default: []].insert(value)
                }
            }
            return found
        }
        let fromJPEG = try values(images.map(\.jpeg))
        let fromPGM = try values(images.map(\.pgm))
        var readJPEG = 0
        var readPGM = 0
        for image in images {
            let stem = URL(fileURLWithPath: image.jpeg).deletingPathExtension().lastPathComponent
            guard
                let expected = FileManager.default.contents(
                    atPath: TestEnvironment.corpusRoot + "/zxing/\(image.folder)/\(stem).txt")
            else { continue }
            let value = String(decoding: expected, as: UTF8.self)
            if fromJPEG[image.jpeg]?.contains(value) == true { readJPEG += 1 }
            if fromPGM[image.pgm]?.contains(value) == true { readPGM += 1 }
        }
        print("corpus JPEGs: \(readJPEG) read from the JPEG files, \(readPGM) from their grayscale conversions")
        #expect(readJPEG >= 3)
        #expect(readJPEG >= readPGM)
    }

    @Test(
        "a damaged JPEG, a damaged GIF and a format not read: exit 2, each named with what is wrong; the good file is still decoded"
    )
    func badFiles() throws {
        let image = try #require(try Self.corpusJPEGs().first)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: image.jpeg))
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cut = dir + "/cut.jpg"
        try bytes.prefix(bytes.count / 3).write(to: URL(fileURLWithPath: cut))
        let gif = dir + "/label.gif"
        try Data("GIF89a\u{1}\u{0}\u{1}\u{0}".utf8).write(to: URL(fileURLWithPath: gif))
        let heif = dir + "/label.heic"
        try Data([0, 0, 0, 24] + Array("ftypheic".utf8) + [UInt8](repeating: 0, count: 16)).write(
            to: URL(fileURLWithPath: heif))
        let renamed = dir + "/photo.png"  // a JPEG under another name is read by its bytes
        try bytes.write(to: URL(fileURLWithPath: renamed))
        let result = try ProcessRunner.run(ReplayHarness.agent, ["decode", cut, gif, heif, renamed])
        #expect(result.status == 2)
        #expect(result.stderr.contains("\(cut): damaged JPEG"), "\(result.stderr)")
        #expect(result.stderr.contains("\(gif): damaged GIF"), "\(result.stderr)")
        #expect(result.stderr.contains("\(heif): HEIF/AVIF images are not read"), "\(result.stderr)")
        #expect(!result.stderr.contains(renamed), "\(result.stderr)")
        #expect(throws: JPEGImage.JPEGError.self) { try JPEGImage.decode(Array(bytes.prefix(200))) }
        #expect(throws: JPEGImage.JPEGError.self) { try JPEGImage.decode(Array(bytes), maxPixels: 1000) }
    }
}
