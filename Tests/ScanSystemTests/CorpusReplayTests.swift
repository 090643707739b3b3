import Foundation
import ScanCore
import ScanSynth
import ScanTestSupport
import ScanTestTiming
import Testing
import ScanMedia

/// Real photos from the shared corpus, held still in front of the camera for a few frames: each
/// code zbar can read must come out as exactly one sighting with the expected value.
@Suite("replay of real photos", .timed)
struct CorpusReplayTests {
    static let folders = ["ean13-3", "ean8-1", "code128-1", "itf-1", "qrcode-1", "upca-1"]

    /// A clip of `frames` copies of a grey image.
    static func stillClip(_ image: GrayImage, frames: Int, path: String) throws {
        let writer = try Y4MWriter(
            path: path, header: Y4MHeader(width: image.width, height: image.height, chroma: .mono))
        for _ in 0..<frames { try writer.write(image) }
        try writer.close()
    }

    @Test("one sighting per photo, with the corpus's value", arguments: folders)
    func photos(folder: String) throws {
        let directory = TestEnvironment.grayCorpusRoot + "/zxing/" + folder
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".pgm") }
            .sorted()
        let scratch = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let config = scratch + "/photo.json"
        // A handheld photo, not a conveyor: every symbology, every line.
        try Data(
            #"{"camera": {"id": "photo"}, "decoder": {"density": 1, "symbologies": ["EAN-13","EAN-8","UPC-A","UPC-E","CODE-128","I2/5","QR-Code"]}}"#
                .utf8
        ).write(to: URL(fileURLWithPath: config))
        var checked = 0
        for name in names {
            let original = (name as NSString).deletingPathExtension  // e.g. 1.png
            if folder == "code128-1" && original == "6.png" { continue }  // zbar ignores FNC4 (see ZBarCorpusTests)
            let stem = (original as NSString).deletingPathExtension
            guard
                let expected = FileManager.default.contents(
                    atPath: TestEnvironment.corpusRoot + "/zxing/\(folder)/\(stem).txt")
            else { continue }
            let image = try PGM.parse(Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))))
            let clip = scratch + "/\(stem).y4m"
            try Self.stillClip(image, frames: 5, path: clip)
            let replay = try ReplayHarness.replay(clip, arguments: ["--config", config])
            #expect(replay.result.status == 0)
            let values = replay.sightings.compactMap { $0["value"]?.stringValue }
            if values.isEmpty { continue }  // zbar cannot read this photo; ZBarCorpusTests covers read rates
            #expect(values == [String(decoding: expected, as: UTF8.self)], "\(folder)/\(original)")
            checked += 1
        }
        #expect(checked >= 4, "\(folder): only \(checked) photos read")
    }
}
