import ScanTestTiming
import Testing

@testable import ScanCore
@testable import ScanAgentConfig

/// The measuring behind `scan-agent tune`, on hand-made readings.
@Suite("line set-up", .timed)
struct LineSetupTests {
    @Test("modules of a linear code follow from its symbology and value (Code 128 as encoders pack digits)")
    func modules() {
        #expect(LineSetup.modules(.ean13, value: "4006381333931") == 95)
        #expect(LineSetup.modules(.ean8, value: "96385074") == 67)
        // LPN (3 symbols in set B), a switch, 700007 in set C (3): 7 symbols + start + check, stop.
        #expect(LineSetup.modules(.code128, value: "LPN700007") == Double(11 * 9 + 13))
        #expect(LineSetup.modules(.code128, value: "00123456") == Double(11 * 6 + 13))
        #expect(LineSetup.modules(.code128, value: "AB12") == Double(11 * 6 + 13))
        #expect(LineSetup.modules(.qrCode, value: "x") == nil)
    }

    @Test("speed, module size, frames in view and the exposure bound from the codes' boxes")
    func analyse() throws {
        func box(_ x: Int) -> [Point] {
            [Point(x: x, y: 100), Point(x: x + 190, y: 100), Point(x: x + 190, y: 150), Point(x: x, y: 150)]
        }
        let codes = (0..<3).map { index in
            LineSetup.Code(
                symbology: .ean13, value: "400638133393\(index)", firstFrame: index * 10, lastFrame: index * 10 + 40,
                firstBox: box(10), lastBox: box(10 + 40 * 8))
        }
        let setup = try #require(LineSetup.analyse(codes, width: 640, height: 400, framesPerSecond: 30))
        #expect(setup.symbologies == [.ean13] && setup.codes == 3)
        #expect(setup.pixelsPerFrame == 8 && setup.modulePixels == 2 && setup.framesInView == 41)
        #expect(abs((setup.longestExposureMicroseconds ?? 0) - 0.5 * 2 / 8 / 30 * 1_000_000) < 0.01)
        #expect(setup.region.y > 0 && setup.region.y + setup.region.height <= 1)
        #expect(LineSetup.analyse([], width: 640, height: 400, framesPerSecond: 30) == nil)
    }
}
