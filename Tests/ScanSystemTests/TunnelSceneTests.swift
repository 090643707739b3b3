import ScanCore
import ScanTestSupport
import ScanTestTiming
import Testing

@testable import ScanSynth

/// The 4K tunnel scene of the benchmarks (`scan-synth tunnel-4k`): what it must hold to stand for
/// a tunnel camera.
@Suite("scan-synth tunnel-4k", .timed)
struct TunnelSceneTests {
    @Test("SSCC check digits are GS1's")
    func ssccCheckDigits() {
        // From the parcels scene's list, each checked by zint when rendered.
        for sscc in ["340123450000070010", "340123450000070027", "340123450000070065"] {
            #expect(Scenarios.ssccWithCheckDigit((Int(sscc) ?? 0) / 10 * 10) == sscc)
        }
    }

    @Test(
        "3840x2160, about 40 codes in view: GS1-128 SSCCs, EAN-13s and DataMatrix plates",
        arguments: [7, 8] as [UInt64])
    func holdsTheTunnelMix(seed: UInt64) throws {
        let scene = Scenarios.tunnel4K(frames: 30, seed: seed)
        #expect(scene.width == 3840 && scene.height == 2160)
        let renderer = try SceneRenderer(scene: scene)
        let codes = renderer.expectedCodes().filter { !$0.partial }
        let kinds = Set(codes.map(\.symbology))
        #expect(kinds == [.code128, .ean13, .dataMatrix], "\(kinds)")
        #expect(
            codes.filter { $0.symbology == .code128 }.allSatisfy { $0.value.hasPrefix("00") && $0.value.count == 20 })
        // Codes wholly in view at the middle frame.
        let middle = codes.filter { $0.framesInView.contains(15) }.count
        #expect((30...60).contains(middle), "\(middle) codes in view")
    }
}
