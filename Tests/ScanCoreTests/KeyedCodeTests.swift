import ScanCore
import ScanTestTiming
import Testing

/// Codes keyed by a person from a no-read's picture are checked as a scanner checks what it reads:
/// a mistyped digit is refused with what is wrong, never sent on to the WMS.
@Suite("keyed codes checked by their symbology", .timed)
struct KeyedCodeTests {
    static func check(_ text: String, _ symbology: String? = nil) throws(KeyedCodeError) -> KeyedCode {
        try KeyedCode.check(text, symbology: symbology, referenceYear: 2026)
    }

    static func refusal(_ text: String, _ symbology: String? = nil) -> String? {
        do {
            _ = try check(text, symbology)
            return nil
        } catch {
            return error.description
        }
    }

    @Test(
        "GTIN check digits hold or the right digit is named",
        arguments: [
            ("4006381333931", "EAN-13", true), ("4006381333932", "EAN-13", false), ("96385074", "EAN-8", true),
            ("96385075", "EAN-8", false), ("036000291452", "UPC-A", true), ("036000291453", "UPC-A", false),
            ("9780306406157", "ISBN-13", true), ("9780306406158", "ISBN-13", false),
            ("4006381333931", "ISBN-13", false), ("01234565", "UPC-E", true), ("01234566", "UPC-E", false),
            ("0306406152", "ISBN-10", true), ("0306406153", "ISBN-10", false), ("080442957X", "ISBN-10", true),
            ("09506000134352", "DataBar", true), ("(01)09506000134352", "DataBar", true),
            ("09506000134353", "DataBar", false), ("400638133393", "EAN-13", false),
        ])
    func checkDigits(_ text: String, _ symbology: String, _ valid: Bool) {
        let refused = Self.refusal(text, symbology)
        #expect((refused == nil) == valid, "\(text) as \(symbology): \(refused ?? "accepted")")
    }

    @Test("a mistyped EAN-13 names the check digit it should have")
    func namesTheDigit() {
        #expect(Self.refusal("4006381333932", "EAN-13")?.contains("it should be 1") == true)
        #expect(Self.refusal("4006381333932")?.contains("should be 1") == true, "13 digits without a symbology: a GTIN")
        // A value keyed as another kind of code is not held to a GTIN's check digit.
        #expect(Self.refusal("4006381333932", "CODE-128") == nil)
    }

    @Test("GS1 data keyed in brackets becomes the code's data, each field checked")
    func gs1() throws {
        let sscc = try Self.check("(00)340123450000000017", "GS1-128")
        #expect(sscc == KeyedCode(value: "00340123450000000017", symbology: .code128, gs1: true))
        // A variable-length field is ended by GS when another follows.
        let batch = try Self.check("(01)09506000134352(10)AB12(17)270131")
        #expect(batch.value == "0109506000134352" + "10AB12\u{1D}" + "17270131" && batch.gs1 && batch.symbology == nil)
        #expect(Self.refusal("(00)340123450000000018", "GS1-128")?.contains("not valid GS1 data") == true)
        #expect(Self.refusal("(01)0950600013435", "GS1-128") != nil, "13 digits for a GTIN")
        #expect(Self.refusal("(17)271340") != nil, "month 13")
        #expect(Self.refusal("(999)12", "GS1-128")?.contains("not GS1 data in brackets") == true)
        #expect(Self.refusal("(01", "GS1-128") != nil && Self.refusal("()1", "GS1-128") != nil)
        let matrix = try Self.check("(01)09506000134352(21)X1", "DataMatrix")
        #expect(matrix.gs1 && matrix.value == "0109506000134352" + "21X1")
    }

    @Test("character sets, lengths, control characters and size")
    func characters() {
        #expect(Self.refusal("ABC-123", "CODE-39") == nil)
        #expect(Self.refusal("abc", "CODE-39")?.contains("Code 39") == true)
        #expect(Self.refusal("A12-$B", "CODABAR") == nil && Self.refusal("A1X", "CODABAR") != nil)
        #expect(Self.refusal("123456", "I2/5") == nil && Self.refusal("12345", "I2/5") != nil)
        #expect(Self.refusal("12", "EAN-2") != nil, "an add-on alone")
        #expect(Self.refusal("ok\u{1B}[31m", "CODE-128")?.contains("U+1B") == true)
        #expect(Self.refusal("a\u{0}b")?.contains("control character") == true)
        #expect(Self.refusal("") != nil)
        #expect(Self.refusal(String(repeating: "A", count: KeyedCode.maxBytes), "QR-Code") == nil)
        #expect(Self.refusal(String(repeating: "A", count: KeyedCode.maxBytes + 1), "QR-Code") != nil)
        #expect(Self.refusal("x'; DROP TABLE noreads; --", "QR-Code") == nil, "any text a QR code holds")
        let unknown = Self.refusal("123", "<script>")
        #expect(unknown?.contains("is not a symbology") == true && unknown?.contains("GS1-128") == true)
        #expect(Self.refusal("TRACK-42") == nil, "no symbology, not a GTIN's length: as it is")
    }
}
