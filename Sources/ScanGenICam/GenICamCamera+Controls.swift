internal import CAravis
import ScanCore
import ScanAgentConfig

extension GenICamCamera {
    /// The standard controls a conveyor camera is set up with, as the camera holds them now
    /// (those it does not have are left out).
    public func readings() -> [ControlReading] {
        var readings: [ControlReading] = []
        for control in StandardFloat.allCases {
            guard let value = try? standard(control), let range = try? standardBounds(control) else { continue }
            readings.append(
                ControlReading(
                    name: control.rawValue, value: Self.format(value),
                    range: "\(Self.format(range.lowerBound))…\(Self.format(range.upperBound))"))
        }
        for feature in ["Width", "Height", "OffsetX", "OffsetY", "BinningHorizontal", "BinningVertical", "FocusPos"]
        where isAvailable(feature) {
            guard let value = try? integer(feature) else { continue }
            let range = (try? integerBounds(feature)).map { "\($0.lowerBound)…\($0.upperBound)" }
            readings.append(ControlReading(name: feature, value: "\(value)", range: range))
        }
        for feature in ["PixelFormat", "ExposureAuto", "GainAuto", "TriggerMode", "TriggerSource", "TriggerActivation"]
        where isAvailable(feature) {
            if let value = try? string(feature) { readings.append(ControlReading(name: feature, value: value)) }
        }
        return readings
    }

    /// Sets `controls` (the config's `source.controls`) and returns what the camera took. A value
    /// outside the camera's range is an error naming the key, the camera and the range, or is
    /// clamped into it (`clampOutOfRange`) and reported in `warnings`.
    public func apply(_ controls: CameraControls) throws(GenICamError) -> (taken: [ControlReading], warnings: [String])
    {
        var warnings: [String] = []
        func bounded(_ key: String, _ control: StandardFloat, _ value: Double) throws(GenICamError) -> Double {
            let feature = control.rawValue
            let range = try standardBounds(control)
            guard !range.contains(value) else { return value }
            let clamped = min(max(value, range.lowerBound), range.upperBound)
            let text =
                "source.controls.\(key): \(Self.format(value)) is outside \(name)'s \(feature) range "
                + "\(Self.format(range.lowerBound))…\(Self.format(range.upperBound))"
            guard controls.clampOutOfRange else {
                throw GenICamError(function: "source.controls", input: key, message: text)
            }
            warnings.append(text + "; set to \(Self.format(clamped))")
            return clamped
        }
        if let format = controls.pixelFormat { try setString("PixelFormat", format) }
        if let binning = controls.binning {
            try setInteger("BinningHorizontal", Int64(binning.horizontal))
            try setInteger("BinningVertical", Int64(binning.vertical))
        }
        if let region = controls.region {
            for (key, feature, value) in [
                ("region.width", "Width", region.width), ("region.height", "Height", region.height),
                ("region.x", "OffsetX", region.x), ("region.y", "OffsetY", region.y),
            ] where isAvailable(feature) {
                let range = try integerBounds(feature)
                guard range.contains(Int64(value)) else {
                    throw GenICamError(
                        function: "source.controls", input: key,
                        message:
                            "\(value) is outside \(name)'s \(feature) range \(range.lowerBound)…\(range.upperBound)")
                }
                try setInteger(feature, Int64(value))
            }
        }
        if isAvailable("ExposureAuto") { try setString("ExposureAuto", controls.exposureAuto ? "Continuous" : "Off") }
        if let exposure = controls.exposureMicroseconds {
            try setStandard(.exposure, try bounded("exposureMicroseconds", .exposure, exposure))
        }
        if let gain = controls.gainDecibels {
            if isAvailable("GainAuto") { try setString("GainAuto", "Off") }
            try setStandard(.gain, try bounded("gainDecibels", .gain, gain))
        }
        if let rate = controls.frameRate {
            try setStandard(.frameRate, try bounded("frameRate", .frameRate, rate))
        }
        if isAvailable("FocusAuto") && (controls.focus != nil || controls.focusAuto) {
            try setString("FocusAuto", controls.focusAuto ? "Continuous" : "Off")
        }
        if let focus = controls.focus {
            guard isAvailable("FocusPos") else {
                throw GenICamError(
                    function: "source.controls", input: "focus",
                    message:
                        "source.controls.focus: \(name) has no FocusPos feature; a lens controller's own feature goes in source.controls.features"
                )
            }
            let range = try integerBounds("FocusPos")
            guard range.contains(Int64(focus)) || controls.clampOutOfRange else {
                throw GenICamError(
                    function: "source.controls", input: "focus",
                    message:
                        "source.controls.focus: \(Self.format(focus)) is outside \(name)'s FocusPos range \(range.lowerBound)…\(range.upperBound)"
                )
            }
            try setInteger("FocusPos", min(max(Int64(focus), range.lowerBound), range.upperBound))
        }
        switch controls.trigger {
        case nil: break
        case .freeRun?: try setString("TriggerMode", "Off")
        case .software?:
            try setString("TriggerSelector", "FrameStart")
            try setString("TriggerMode", "On")
            try setString("TriggerSource", "Software")
        case .line(let line, let rising)?:
            try setString("TriggerSelector", "FrameStart")
            try setString("TriggerMode", "On")
            try setString("TriggerSource", line)
            if isAvailable("TriggerActivation") {
                try setString("TriggerActivation", rising ? "RisingEdge" : "FallingEdge")
            }
        }
        for (feature, value) in controls.features {
            switch value {
            case .number(let number) where number.rounded() == number && abs(number) < 9e15:
                try setInteger(feature, Int64(number))
            case .number(let number): try setFloat(feature, number)
            case .bool(let flag):
                try GenICamError.check("arv_camera_set_boolean", "\(name) \(feature)") {
                    arvSetBoolean(feature, flag, $0)
                }
            case .string(let text): try setString(feature, text)
            default: break
            }
        }
        // The features set, as the camera holds them now (a light's line source, a strobe's
        // duration), after the standard controls.
        var taken = readings()
        for (feature, _) in controls.features where !taken.contains(where: { $0.name == feature }) {
            if let text = try? string(feature) {
                taken.append(ControlReading(name: feature, value: text))
            } else if let number = try? integer(feature) {
                taken.append(ControlReading(name: feature, value: "\(number)"))
            } else if let number = try? float(feature) {
                taken.append(ControlReading(name: feature, value: Self.format(number)))
            }
        }
        return (taken, warnings)
    }

    /// Whether `region` fits the sensor, checked before a `set-controls` restarts the stream with
    /// it (a region the camera refuses would otherwise keep it from opening again): an error
    /// naming the key and the sensor's size.
    public func checkRegion(_ region: CameraControls.Region) throws(GenICamError) {
        func limit(_ features: [String], _ fallback: String) throws(GenICamError) -> Int64 {
            for feature in features where isAvailable(feature) {
                if let value = try? integer(feature) { return value }
            }
            return try integerBounds(fallback).upperBound
        }
        let width = try limit(["SensorWidth", "WidthMax"], "Width")
        let height = try limit(["SensorHeight", "HeightMax"], "Height")
        let smallest = (try? integerBounds("Width").lowerBound) ?? 1
        let lowest = (try? integerBounds("Height").lowerBound) ?? 1
        for (key, start, size, sensor, minimum) in [
            ("region.width", region.x, region.width, width, smallest),
            ("region.height", region.y, region.height, height, lowest),
        ] where Int64(size) < minimum || Int64(start + size) > sensor {
            throw GenICamError(
                function: "source.controls", input: key,
                message:
                    "source.controls.\(key): \(size) from \(start) does not fit \(name)'s sensor (\(width)x\(height), at least \(smallest)x\(lowest))"
            )
        }
    }

    static func format(_ value: Double) -> String { JSONWriter.format(value, decimals: 3) }

    /// Exposure, gain and frame rate, which cameras name in more than one way (`ExposureTime` or
    /// `ExposureTimeAbs`, `Gain` or `GainRaw`, …): through Aravis's calls that know the variants,
    /// shown under the standard (SFNC) name.
    public enum StandardFloat: String, CaseIterable, Sendable {
        case exposure = "ExposureTime"
        case gain = "Gain"
        case frameRate = "AcquisitionFrameRate"
    }

    public func standard(_ control: StandardFloat) throws(GenICamError) -> Double {
        try GenICamError.check("get \(control.rawValue)", name) { error -> Double in
            switch control {
            case .exposure: arv_camera_get_exposure_time(camera, error)
            case .gain: arv_camera_get_gain(camera, error)
            case .frameRate: arv_camera_get_frame_rate(camera, error)
            }
        }
    }

    public func standardBounds(_ control: StandardFloat) throws(GenICamError) -> ClosedRange<Double> {
        var low = 0.0
        var high = 0.0
        try GenICamError.check("bounds of \(control.rawValue)", name) { error in
            switch control {
            case .exposure: arv_camera_get_exposure_time_bounds(camera, &low, &high, error)
            case .gain: arv_camera_get_gain_bounds(camera, &low, &high, error)
            case .frameRate: arv_camera_get_frame_rate_bounds(camera, &low, &high, error)
            }
        }
        return low...max(low, high)
    }

    public func setStandard(_ control: StandardFloat, _ value: Double) throws(GenICamError) {
        try GenICamError.check("set \(control.rawValue)", "\(name) \(value)") { error in
            switch control {
            case .exposure: arv_camera_set_exposure_time(camera, value, error)
            case .gain: arv_camera_set_gain(camera, value, error)
            case .frameRate: arv_camera_set_frame_rate(camera, value, error)
            }
        }
    }
}
