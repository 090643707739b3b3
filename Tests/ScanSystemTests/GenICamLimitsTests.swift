import ScanTestTiming
import Testing

@testable import ScanGenICam

/// What a GenICam camera may make the agent allocate or multiply, and which camera is opened when
/// the config names none (docs/security.md, "Input").
@Suite("GenICam limits: payload, frame size, which camera", .timed)
struct GenICamLimitsTests {
    @Test(
        "a frame's sides are checked before they are multiplied: past 8192² pixels or a 16-bit side it is dropped, never an overflow"
    )
    func pixels() {
        #expect(GenICamLimits.pixels(width: 8_192, height: 8_192) == 67_108_864)
        #expect(GenICamLimits.pixels(width: 8_193, height: 8_192) == nil)
        #expect(GenICamLimits.pixels(width: 65_535, height: 1) == 65_535)
        #expect(GenICamLimits.pixels(width: 65_536, height: 1) == nil)
        #expect(GenICamLimits.pixels(width: 0, height: 720) == nil)
        // What a 32-bit width and height from a hostile camera would overflow in Int.
        let huge = Int(UInt32.max)
        #expect(GenICamLimits.pixels(width: huge, height: huge) == nil)
        #expect(GenICamLimits.pixels(width: huge, height: 2) == nil)
    }

    @Test("the payload a camera announces is allocated only within the cap, and a refusal names the size")
    func payload() throws {
        #expect(try GenICamLimits.payload(1_920 * 1_080, camera: "cam") == 1_920 * 1_080)
        #expect(try GenICamLimits.payload(GenICamLimits.maxPayload, camera: "cam") == GenICamLimits.maxPayload)
        for bytes in [0, -1, GenICamLimits.maxPayload + 1, Int(UInt32.max)] {
            let error = #expect(throws: GenICamError.self) { try GenICamLimits.payload(bytes, camera: "cam-9") }
            #expect("\(error.map { "\($0)" } ?? "")".contains("payload of \(bytes) bytes"))
        }
    }

    @Test("with no source.camera, the only camera found is opened; none, or several (named), is an error")
    func onlyCamera() throws {
        func device(_ id: String, _ address: String) -> GenICamDevice {
            GenICamDevice(
                id: id, vendor: "V", model: "M", serial: id, address: address, interface: "GigEVision")
        }
        #expect(try GenICamLimits.onlyCamera([device("V-1", "10.0.0.5")]).id == "V-1")
        let none = #expect(throws: GenICamError.self) { try GenICamLimits.onlyCamera([]) }
        #expect("\(none.map { "\($0)" } ?? "")".contains("no camera found"))
        let several = #expect(throws: GenICamError.self) {
            try GenICamLimits.onlyCamera([device("V-1", "10.0.0.5"), device("V-2", "10.0.0.6")])
        }
        let text = several.map { "\($0)" } ?? ""
        #expect(
            text.contains("V-1 at 10.0.0.5") && text.contains("V-2 at 10.0.0.6") && text.contains("set source.camera"))
    }
}
