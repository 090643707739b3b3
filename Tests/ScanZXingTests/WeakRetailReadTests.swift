import Foundation
import ScanCore
import ScanMedia
import ScanTestSupport
import ScanTestTiming
import ScanVision
import Testing

@testable import ScanZXing

/// zxing-cpp's valid wrong EAN/UPC values on the shared corpus (one check digit, read on its
/// minimum of scan lines, or beside the right value of the same code), and the reader's check of
/// them on their place enlarged (`ZXingSettings.weakRetailLines`).
@Suite("zxing-cpp's weak retail reads checked", .timed)
struct WeakRetailReadTests {
    /// Images where zxing-cpp alone reads a wrong value, with the value it reads and the
    /// printed one.
    static let misreads: [(image: String, wrong: String, printed: String)] = [
        ("upca-4/1.webp.pgm", "9074932437075", "0023942431015"),
        ("upca-4/2.webp.pgm", "9074932437075", "0023942431015"),
        ("upca-2/48.webp.pgm", "1077778003259", "0075720003259"),
        ("ean13-1/35.webp.pgm", "7034759003930", "5030159003930"),
    ]

    static func image(_ name: String) throws -> GrayImage {
        let path = TestEnvironment.grayCorpusRoot + "/zxing/" + name
        return try PGM.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    /// Each value as 13 digits (zxing-cpp gives a UPC-A as 12, a UPC-E as 8).
    static func gtin(_ value: [UInt8]) -> String {
        var digits = value
        if digits.count == 8, let upcA = CodeNormalizer.expandUPCE(digits) { digits = upcA }
        if digits.count == 12 { digits = [0x30] + digits }
        return String(decoding: digits, as: UTF8.self)
    }

    static func values(_ detections: [Detection]) -> Set<String> { Set(detections.map { gtin($0.value) }) }

    @Test("the wrong values give way to the printed ones; zxing-cpp as it is reads them wrong", arguments: misreads)
    func misreadReplaced(image name: String, wrong: String, printed: String) throws {
        let image = try Self.image(name)
        let plain = Self.values(try ZXingReader().read(image))
        #expect(plain.contains(wrong), "zxing-cpp as it is reads \(wrong) on \(name): \(plain)")
        var settings = ZXingSettings()
        settings.weakRetailLines = 3
        let checked = try ZXingReader(settings: settings).read(image)
        #expect(Self.values(checked) == [printed], "\(name): \(Self.values(checked))")
        // The value replaced keeps a place on the code: inside the image, on the bars.
        let box = try #require(checked.first?.box)
        #expect(box.clamped(to: image.bounds) == box)
    }

    @Test("right reads on few lines stay: every retail value zxing-cpp reads right on the corpus is still read")
    func rightReadsKept() throws {
        let root = TestEnvironment.grayCorpusRoot + "/zxing"
        var settings = ZXingSettings()
        settings.weakRetailLines = 3
        let checked = try ZXingReader(settings: settings)
        let plain = try ZXingReader()
        var weak = 0
        var kept = 0
        for folder in ["ean13-1", "ean13-2", "ean13-4", "ean8-1", "upca-2", "upca-3", "upca-4", "upca-5", "upce-3"] {
            let names = try FileManager.default.contentsOfDirectory(atPath: root + "/" + folder).filter {
                $0.hasSuffix(".pgm")
            }
            #expect(!names.isEmpty, "no grayscale images for \(folder): make corpus")
            for name in names.sorted() {
                let image = try Self.image(folder + "/" + name)
                let stem = name.split(separator: ".").first.map(String.init) ?? name
                guard
                    let expected = FileManager.default.contents(
                        atPath: TestEnvironment.corpusRoot + "/zxing/\(folder)/\(stem).txt")
                else { continue }
                let right = try plain.read(image).filter { Self.gtin($0.value) == Self.gtin(Array(expected)) }
                guard let read = right.first else { continue }
                if (read.lines ?? 0) <= 3 { weak += 1 }
                if try checked.read(image).contains(where: { $0.value == read.value }) { kept += 1 }
                #expect(
                    try checked.read(image).contains(where: { $0.value == read.value }),
                    "\(folder)/\(name): \(read.text ?? "?") read right by zxing-cpp is lost by the check")
            }
        }
        print("weak retail reads: \(weak) right reads on at most 3 lines, \(kept) right reads kept")
        #expect(weak >= 15, "the corpus has right reads on few lines, which the check must keep")
    }
}
