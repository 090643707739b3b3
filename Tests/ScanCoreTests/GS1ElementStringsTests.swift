import ScanCore
import ScanTestTiming
import Testing

@Suite("GS1 element strings split into application identifiers", .timed)
struct GS1ElementStringsTests {
    typealias E = GS1ElementStrings.Element
    static let gs = "\u{1D}"

    static func parse(_ text: String, year: Int = 2026) -> [E]? {
        GS1ElementStrings.parse(Array(text.utf8), referenceYear: year)
    }

    @Test("an SSCC label: fixed fields run on, variable ones end at GS or the end; dates as YYYY-MM-DD")
    func logisticsLabel() {
        // SSCC (check digit 8), GTIN, best before, batch, count, net weight 12.5 kg (3102), serial.
        let value =
            "00340123450000000017" + "0104012345678901" + "15270131" + "10LOT-7" + Self.gs + "3712"
            + Self.gs + "3102012500" + "21SN 9/X"
        #expect(
            Self.parse(value) == [
                E(ai: "00", value: "340123450000000017"), E(ai: "01", value: "04012345678901"),
                E(ai: "15", value: "2027-01-31"), E(ai: "10", value: "LOT-7"), E(ai: "37", value: "12"),
                E(ai: "3102", value: "012500"), E(ai: "21", value: "SN 9/X"),
            ])
        // A GS after a fixed field is allowed; one at the start is skipped.
        #expect(
            Self.parse(Self.gs + "0104012345678901" + Self.gs + "17260300")?.map(\.value) == [
                "04012345678901", "2026-03",
            ])
    }

    @Test("the century follows GS1's window around the reference year; impossible dates refuse the value")
    func dates() {
        #expect(Self.parse("17761231", year: 2026)?.first?.value == "2076-12-31")
        #expect(Self.parse("17771231", year: 2026)?.first?.value == "1977-12-31")
        #expect(Self.parse("17990101", year: 2051)?.first?.value == "2099-01-01")
        #expect(Self.parse("17000101", year: 2051)?.first?.value == "2100-01-01")
        #expect(Self.parse("11260229") == nil, "2026 has no 29 February")
        #expect(Self.parse("11280229")?.first?.value == "2028-02-29")
        #expect(Self.parse("11261301") == nil)
    }

    @Test("only what is certain: unknown AIs, wrong check digits, overlong or non-numeric fields, repeats give nil")
    func refusals() {
        #expect(Self.parse("00340123450000000018") == nil, "SSCC check digit")
        #expect(Self.parse("0104012345678900") == nil, "GTIN check digit")
        #expect(Self.parse("0404012345678901") == nil, "AI 04 is not known")
        #expect(Self.parse("10" + String(repeating: "A", count: 21)) == nil, "batch is at most 20")
        #expect(Self.parse("3712A") == nil, "count is numeric")
        #expect(Self.parse("0104012345") == nil, "GTIN cut short")
        #expect(Self.parse("10A" + Self.gs + "10B") == nil, "an AI twice")
        #expect(Self.parse("10\u{7}") == nil, "a control character")
        #expect(Self.parse("") == nil)
        #expect(Self.parse("10") == nil, "an AI without data")
    }

    @Test("the UTC year of an instant")
    func utcYear() {
        #expect(Timestamp(milliseconds: 1_798_761_599_999).utcYear == 2026)  // 2026-12-31T23:59:59.999Z
        #expect(Timestamp(milliseconds: 1_798_761_600_000).utcYear == 2027)
        #expect(Timestamp(milliseconds: -1).utcYear == 1969)
    }
}
