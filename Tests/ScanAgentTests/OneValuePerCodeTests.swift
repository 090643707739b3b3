import ScanCore
import ScanTestTiming
import ScanVision
import Testing

@testable import ScanAgent

/// `scan-agent decode`'s last word on EAN/UPC reads of two values on one place.
@Suite("decode: one value per code", .timed)
struct OneValuePerCodeTests {
    static func symbol(_ value: String, engine: String, x: Int, symbology: Symbology = .ean13) -> StillDecoder.Symbol {
        let corners = [Point(x: x, y: 40), Point(x: x + 190, y: 40), Point(x: x + 190, y: 140), Point(x: x, y: 140)]
        return StillDecoder.Symbol(
            detection: Detection(symbology: symbology, value: Array(value.utf8), points: corners, engine: engine),
            engine: engine, corners: corners)
    }

    static func values(_ symbols: [StillDecoder.Symbol]) -> [String] {
        symbols.map { String(decoding: $0.detection.value, as: UTF8.self) }
    }

    @Test("a value both engines read stands; one engine's other value on that place gives way")
    func agreedStands() {
        let kept = StillDecoder.oneValuePerCode([
            Self.symbol("5030159003930", engine: "zbar+zxing", x: 100),
            Self.symbol("7034759003930", engine: "zxing", x: 120),
        ])
        #expect(Self.values(kept) == ["5030159003930"])
    }

    @Test("two values on one place, each read by one engine: neither is printed")
    func neitherSure() {
        let kept = StillDecoder.oneValuePerCode([
            Self.symbol("5030159003930", engine: "zbar", x: 100),
            Self.symbol("7034759003930", engine: "zxing (second look: zxing, enlarged)", x: 110),
        ])
        #expect(kept.isEmpty)
    }

    @Test("codes apart keep their values; other symbologies and one value on one place are left as they are")
    func othersLeft() {
        let apart = StillDecoder.oneValuePerCode([
            Self.symbol("5030159003930", engine: "zbar", x: 0),
            Self.symbol("7034759003930", engine: "zxing", x: 400),
        ])
        #expect(Self.values(apart) == ["5030159003930", "7034759003930"])
        let code128 = StillDecoder.oneValuePerCode([
            Self.symbol("ABC-1", engine: "zbar", x: 0, symbology: .code128),
            Self.symbol("ABC-2", engine: "zxing", x: 20, symbology: .code128),
        ])
        #expect(Self.values(code128) == ["ABC-1", "ABC-2"])
        let same = StillDecoder.oneValuePerCode([
            Self.symbol("5030159003930", engine: "zbar", x: 0), Self.symbol("5030159003930", engine: "zxing", x: 20),
        ])
        #expect(same.count == 2)
    }
}
