import ScanTestTiming
import Testing

@testable import ScanCore
@testable import ScanVision

@Suite("code normalisation", .timed)
struct CodeNormalizerTests {
    @Test("UPC-A becomes EAN-13 with a leading zero")
    func upcA() {
        let detection = Detection(symbology: .upcA, value: Array("036000291452".utf8), points: [])
        let normalized = CodeNormalizer().normalize(detection)
        #expect(normalized.symbology == .ean13)
        #expect(normalized.text == "0036000291452")
        #expect(CodeNormalizer(upcAsEAN13: false).normalize(detection) == detection)
    }

    @Test(
        "UPC-E expands to UPC-A by its last digit's rule",
        arguments: [
            ("01234565", "012345000065"), ("04252614", "042100005264"), ("01234531", "012300000451"),
            ("01234543", "012340000053"),
        ])
    func upcE(upcE: String, upcA: String) {
        #expect(CodeNormalizer.expandUPCE(Array(upcE.utf8)).map { String(decoding: $0, as: UTF8.self) } == upcA)
        #expect(Symbology.hasValidGS1CheckDigit(Array(upcA.utf8)))
    }

    @Test("GS1 check digits")
    func checkDigits() {
        #expect(Symbology.hasValidGS1CheckDigit(Array("4006381333931".utf8)))
        #expect(!Symbology.hasValidGS1CheckDigit(Array("4006381333932".utf8)))
        #expect(Symbology.hasValidGS1CheckDigit(Array("96385074".utf8)))
        #expect(!Symbology.hasValidGS1CheckDigit(Array("40063813339X1".utf8)))
    }
}
