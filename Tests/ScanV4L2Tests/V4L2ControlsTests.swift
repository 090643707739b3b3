import ScanCore
import ScanTestTiming
import Testing

@testable import ScanV4L2
import ScanAgentConfig

/// The mapping from the agent's `source.controls` onto V4L2 controls, on a fake device that holds
/// the controls a UVC webcam's driver describes (there is no V4L2 camera on the build machines:
/// the ioctls themselves are V4L2Device's).
@Suite("V4L2 camera controls", .timed)
struct V4L2ControlsTests {
    final class FakeUVC: V4L2ControlDevice {
        let path = "/dev/video9"
        var values: [UInt32: Int64] = [:]
        /// Every set, in order: (control name, value).
        var sets: [(String, Int64)] = []
        var rate = 30.0
        let offeredRates = [15.0, 30.0]
        let list: [V4L2Control] = [
            V4L2Control(
                id: V4L2Controls.exposureAuto, name: "Auto Exposure", kind: .menu, minimum: 0, maximum: 3,
                menu: [(1, "Manual Mode"), (3, "Aperture Priority Mode")]),
            V4L2Control(
                id: V4L2Controls.exposureAbsolute, name: "Exposure Time, Absolute", kind: .integer, minimum: 3,
                maximum: 2047),
            V4L2Control(
                id: V4L2Controls.exposureAutoPriority, name: "Exposure, Dynamic Framerate", kind: .boolean, minimum: 0,
                maximum: 1),
            V4L2Control(id: 0x0098_0913, name: "Gain", kind: .integer, minimum: 0, maximum: 255),
            V4L2Control(
                id: 0x0098_0918, name: "Power Line Frequency", kind: .menu, minimum: 0, maximum: 2,
                menu: [(0, "Disabled"), (1, "50 Hz"), (2, "60 Hz")]),
            V4L2Control(
                id: 0x0098_091a, name: "White Balance Temperature", kind: .integer, minimum: 2800, maximum: 6500,
                readOnly: true),
            V4L2Control(
                id: V4L2Controls.focusAuto, name: "Focus, Automatic Continuous", kind: .boolean, minimum: 0, maximum: 1),
            V4L2Control(
                id: V4L2Controls.focusAbsolute, name: "Focus, Absolute", kind: .integer, minimum: 0, maximum: 250),
        ]

        func controls() throws(V4L2Error) -> [V4L2Control] { list }
        func value(of id: UInt32) throws(V4L2Error) -> Int64 { values[id] ?? 0 }
        func set(_ id: UInt32, to value: Int64) throws(V4L2Error) {
            values[id] = value
            sets.append((list.first { $0.id == id }?.name ?? "?", value))
        }
        func frameRate() -> Double? { rate }
        func setFrameRate(_ fps: Double) throws(V4L2Error) -> Double {
            rate = offeredRates.min { abs($0 - fps) < abs($1 - fps) } ?? rate
            return rate
        }
    }

    @Test("exposure in µs goes to exposure_time_absolute in 100 µs steps, auto exposure and the dynamic frame rate off")
    func exposure() throws {
        let device = FakeUVC()
        var controls = CameraControls()
        controls.exposureMicroseconds = 500
        let (taken, warnings) = try V4L2Controls.apply(controls, to: device)
        #expect(warnings.isEmpty)
        #expect(device.values[V4L2Controls.exposureAuto] == 1, "manual")
        #expect(device.values[V4L2Controls.exposureAutoPriority] == 0)
        #expect(device.values[V4L2Controls.exposureAbsolute] == 5)
        #expect(taken.contains { $0.name == "ExposureTime" && $0.value == "500" }, "\(taken)")
        // Auto only when asked: aperture priority, the rate free to drop.
        var auto = CameraControls()
        auto.exposureAuto = true
        _ = try V4L2Controls.apply(auto, to: device)
        #expect(device.values[V4L2Controls.exposureAuto] == 3)
    }

    @Test(
        "a value outside the camera's range is refused naming the key, the camera and the range, or clamped when asked")
    func outOfRange() throws {
        let device = FakeUVC()
        var controls = CameraControls()
        controls.exposureMicroseconds = 100
        let refused = #expect(throws: V4L2Error.self) { try V4L2Controls.apply(controls, to: device) }
        #expect(
            refused?.description
                == "source.controls.exposureMicroseconds: 100 is outside /dev/video9's Exposure Time, Absolute range 300…204700",
            "\(String(describing: refused))")
        #expect(device.values[V4L2Controls.exposureAbsolute] == nil, "nothing set out of range")
        controls.clampOutOfRange = true
        let (taken, warnings) = try V4L2Controls.apply(controls, to: device)
        #expect(warnings.count == 1 && warnings[0].hasSuffix("set to 300"), "\(warnings)")
        #expect(taken.contains { $0.name == "ExposureTime" && $0.value == "300" })
        controls = CameraControls()
        controls.focus = 400
        let focus = #expect(throws: V4L2Error.self) { try V4L2Controls.apply(controls, to: device) }
        #expect(
            focus?.description.contains(
                "source.controls.focus: 400 is outside /dev/video9's Focus, Absolute range 0…250") == true)
    }

    @Test(
        "focus: auto focus off, then the absolute position; frame rate through S_PARM, the nearest the camera offers with a warning"
    )
    func focusAndRate() throws {
        let device = FakeUVC()
        var controls = CameraControls()
        controls.focus = 120
        controls.frameRate = 25
        let (taken, warnings) = try V4L2Controls.apply(controls, to: device)
        let order = device.sets.map(\.0)
        #expect(
            order.firstIndex(of: "Focus, Automatic Continuous")! < order.firstIndex(of: "Focus, Absolute")!, "\(order)")
        #expect(device.values[V4L2Controls.focusAuto] == 0 && device.values[V4L2Controls.focusAbsolute] == 120)
        #expect(taken.contains { $0.name == "FrameRate" && $0.value == "30" }, "\(taken)")
        #expect(warnings.count == 1 && warnings[0].contains("runs at 30 frames/s, not 25"), "\(warnings)")
    }

    @Test("driver controls by name in features, written loosely: numbers, booleans and menu items by name")
    func features() throws {
        let device = FakeUVC()
        var controls = CameraControls()
        controls.features = [("gain", .number(64)), ("power_line_frequency", .string("50 Hz"))]
        _ = try V4L2Controls.apply(controls, to: device)
        #expect(device.values[0x0098_0913] == 64 && device.values[0x0098_0918] == 1)

        let cases: [([(name: String, value: JSONValue)], String)] = [
            (
                [("Gian", .number(1))],
                "source.controls.features.Gian: /dev/video9 has no such control; it has: Auto Exposure"
            ),
            ([("Gain", .number(300))], "300 is outside /dev/video9's Gain range 0…255"),
            (
                [("PowerLineFrequency", .string("45 Hz"))],
                "'45 Hz' is not one of Power Line Frequency's items: 0 Disabled, 1 50 Hz, 2 60 Hz"
            ),
            ([("White Balance Temperature", .number(4000))], "read-only or inactive now"),
            ([("Gain", .number(1.5))], "a whole number, a boolean or a menu item's name"),
        ]
        for (features, message) in cases {
            controls.features = features
            let error = #expect(throws: V4L2Error.self) { try V4L2Controls.apply(controls, to: device) }
            #expect(error?.description.contains(message) == true, "\(String(describing: error))")
        }
    }

    @Test("what V4L2 has no control for is refused saying what to use instead")
    func refused() {
        var gain = CameraControls()
        gain.gainDecibels = 6
        var region = CameraControls()
        region.region = .init(x: 0, y: 0, width: 640, height: 200)
        var trigger = CameraControls()
        trigger.trigger = .software
        var format = CameraControls()
        format.pixelFormat = "Mono8"
        for (controls, message) in [
            (gain, "source.controls.gainDecibels: V4L2 gain has no unit in dB"), (region, "source.controls.region"),
            (trigger, "source.controls.trigger"), (format, "source.controls.pixelFormat"),
        ] {
            let error = #expect(throws: V4L2Error.self) { try V4L2Controls.apply(controls, to: FakeUVC()) }
            #expect(error?.description.hasPrefix(message) == true, "\(String(describing: error))")
        }
    }

    @Test("the readings list every control with its value and range, menu items named, and the frame rate")
    func readings() {
        let device = FakeUVC()
        device.values[V4L2Controls.exposureAuto] = 3
        device.values[V4L2Controls.exposureAbsolute] = 156
        let readings = V4L2Controls.readings(device)
        #expect(readings.count == device.list.count + 1)
        #expect(readings.contains { $0.name == "Auto Exposure" && $0.value == "3 (Aperture Priority Mode)" })
        #expect(readings.contains { $0.name == "Exposure Time, Absolute" && $0.value == "156" && $0.range == "3…2047" })
        #expect(readings.last == ControlReading(name: "FrameRate", value: "30"))
        #expect(V4L2Control.key("Exposure Time, Absolute") == V4L2Control.key("exposure_time_absolute"))
    }
}
