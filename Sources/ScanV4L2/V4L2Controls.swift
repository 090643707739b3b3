import CV4L2
import ScanCore
import ScanAgentConfig

#if canImport(Glibc)
    import Glibc
#endif

/// One V4L2 control as the driver describes it (`VIDIOC_QUERYCTRL`).
public struct V4L2Control: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case integer, boolean, menu, other
    }

    public var id: UInt32
    /// The driver's name (`Exposure Time, Absolute`); the config matches it loosely (see `key`).
    public var name: String
    public var kind: Kind
    public var minimum: Int64
    public var maximum: Int64
    public var step: Int64
    /// Menu items by value (`Aperture Priority Mode`).
    public var menu: [(value: Int64, name: String)]
    /// The control cannot be set now (`inactive`: another control, such as auto, overrides it).
    public var readOnly: Bool

    public init(
        id: UInt32, name: String, kind: Kind, minimum: Int64, maximum: Int64, step: Int64 = 1,
        menu: [(value: Int64, name: String)] = [], readOnly: Bool = false
    ) {
        self.id = id
        self.name = name
        self.kind = kind
        self.minimum = minimum
        self.maximum = maximum
        self.step = step
        self.menu = menu
        self.readOnly = readOnly
    }

    public static func == (a: V4L2Control, b: V4L2Control) -> Bool {
        a.id == b.id && a.name == b.name && a.kind == b.kind && a.minimum == b.minimum && a.maximum == b.maximum
            && a.step == b.step && a.readOnly == b.readOnly
            && a.menu.elementsEqual(b.menu) { $0.value == $1.value && $0.name == $1.name }
    }

    /// The name as the config may write it: lower case letters and digits only
    /// (`exposure_time_absolute`, `ExposureTimeAbsolute` and the driver's `Exposure Time, Absolute`
    /// are one control).
    public static func key(_ name: String) -> String {
        String(name.lowercased().unicodeScalars.filter { ($0 >= "a" && $0 <= "z") || ($0 >= "0" && $0 <= "9") })
    }

    var range: String {
        switch kind {
        case .menu: menu.map { "\($0.value) \($0.name)" }.joined(separator: ", ")
        case .boolean: "0…1"
        default: "\(minimum)…\(maximum)"
        }
    }
}

/// What the controls need of a device: a seam so that the mapping from the agent's keys is
/// tested without a camera (ScanV4L2Tests), and `V4L2Device` does it with ioctls.
public protocol V4L2ControlDevice: AnyObject {
    var path: String { get }
    func controls() throws(V4L2Error) -> [V4L2Control]
    func value(of id: UInt32) throws(V4L2Error) -> Int64
    func set(_ id: UInt32, to value: Int64) throws(V4L2Error)
    /// Frames per second the driver runs at, nil when it cannot say.
    func frameRate() -> Double?
    /// Asks for `fps`; returns what the driver took; throws when it cannot set a rate at all.
    func setFrameRate(_ fps: Double) throws(V4L2Error) -> Double
}

/// The agent's `source.controls` on a V4L2 camera (`VIDIOC_QUERYCTRL`, `S_CTRL`, `S_PARM`):
/// exposure in µs (the driver's `exposure_time_absolute`, in 100 µs steps) with auto exposure off
/// unless asked, the frame rate, focus (auto focus off unless asked), and any driver control by
/// name in `features`. V4L2 gain has no unit (not dB): it goes in `features` by its driver name.
public enum V4L2Controls {
    public static var exposureAuto: UInt32 { scantrack_v4l2_cid_exposure_auto() }
    public static var exposureAbsolute: UInt32 { scantrack_v4l2_cid_exposure_absolute() }
    public static var exposureAutoPriority: UInt32 { scantrack_v4l2_cid_exposure_auto_priority() }
    public static var autogain: UInt32 { scantrack_v4l2_cid_autogain() }
    public static var focusAuto: UInt32 { scantrack_v4l2_cid_focus_auto() }
    public static var focusAbsolute: UInt32 { scantrack_v4l2_cid_focus_absolute() }

    /// Every control with its value and range, and the frame rate.
    public static func readings(_ device: some V4L2ControlDevice) -> [ControlReading] {
        var readings: [ControlReading] = []
        for control in (try? device.controls()) ?? [] {
            let value = (try? device.value(of: control.id)).map { value -> String in
                guard control.kind == .menu, let item = control.menu.first(where: { $0.value == value }) else {
                    return "\(value)"
                }
                return "\(value) (\(item.name))"
            }
            readings.append(ControlReading(name: control.name, value: value ?? "?", range: control.range))
        }
        if let fps = device.frameRate() {
            readings.append(ControlReading(name: "FrameRate", value: JSONWriter.format(fps, decimals: 3)))
        }
        return readings
    }

    /// Sets `controls` and returns what the camera took. A value outside the camera's range is an
    /// error naming the key, the camera and the range, or is clamped (`clampOutOfRange`) with a
    /// warning; a key V4L2 has no control for is an error saying what to use instead.
    public static func apply(_ controls: CameraControls, to device: some V4L2ControlDevice) throws(V4L2Error) -> (
        taken: [ControlReading], warnings: [String]
    ) {
        let available = try device.controls()
        var warnings: [String] = []
        var taken: [ControlReading] = []
        func refuse(_ key: String, _ message: String) -> V4L2Error {
            V4L2Error(code: .controlRefused, device: device.path, operation: "source.controls.\(key)", reason: message)
        }
        func control(_ id: UInt32) -> V4L2Control? { available.first { $0.id == id && !$0.readOnly } }
        /// `value` within `control`'s range (or clamped, or refused), in the driver's units.
        func bounded(_ key: String, _ control: V4L2Control, _ value: Int64, shown: (Int64) -> String) throws(V4L2Error)
            -> Int64
        {
            guard value < control.minimum || value > control.maximum else { return value }
            let text =
                "\(shown(value)) is outside \(device.path)'s \(control.name) range "
                + "\(shown(control.minimum))…\(shown(control.maximum))"
            guard controls.clampOutOfRange else { throw refuse(key, text) }
            let clamped = min(max(value, control.minimum), control.maximum)
            warnings.append("source.controls.\(key): " + text + "; set to \(shown(clamped))")
            return clamped
        }
        func set(_ control: V4L2Control, _ value: Int64, as name: String? = nil, shown: (Int64) -> String = { "\($0)" })
            throws(V4L2Error)
        {
            try device.set(control.id, to: value)
            let read = (try? device.value(of: control.id)) ?? value
            taken.append(ControlReading(name: name ?? control.name, value: shown(read)))
        }

        // What V4L2 has no standard control for, said plainly rather than ignored.
        if controls.gainDecibels != nil {
            throw refuse(
                "gainDecibels",
                "V4L2 gain has no unit in dB; set the driver's gain by name in source.controls.features (scan-agent cameras \(device.path) --controls shows it and its range)"
            )
        }
        if controls.pixelFormat != nil {
            throw refuse("pixelFormat", "a V4L2 camera's pixel format is chosen by the agent (GREY, YUYV or YUV420)")
        }
        if controls.region != nil || controls.binning != nil {
            throw refuse(
                controls.region != nil ? "region" : "binning",
                "V4L2 cameras take a frame size (source.width, source.height), not a sensor region or binning")
        }
        switch controls.trigger {
        case nil, .freeRun?: break
        case .software?, .line?: throw refuse("trigger", "V4L2 cameras run free; there is no trigger to set")
        }

        // Exposure: manual unless asked; the rate held (no longer exposures in the dark).
        if let auto = control(exposureAuto) {
            let manual = Int64(scantrack_v4l2_exposure_manual())
            let automatic =
                auto.menu.contains { $0.value == Int64(scantrack_v4l2_exposure_aperture_priority()) }
                ? Int64(scantrack_v4l2_exposure_aperture_priority()) : 0
            try set(auto, controls.exposureAuto ? automatic : manual)
        }
        if let priority = control(exposureAutoPriority), !controls.exposureAuto { try set(priority, 0) }
        if let microseconds = controls.exposureMicroseconds {
            guard let absolute = control(exposureAbsolute) else {
                throw refuse("exposureMicroseconds", "\(device.path) has no exposure_time_absolute control")
            }
            // The driver counts in 100 µs.
            let units = try bounded("exposureMicroseconds", absolute, Int64((microseconds / 100).rounded())) {
                "\($0 * 100)"
            }
            try set(absolute, units, as: "ExposureTime") { "\($0 * 100)" }
        }
        if let gain = control(autogain), !controls.exposureAuto { try set(gain, 0) }
        if let focusAuto = control(focusAuto), controls.focus != nil || controls.focusAuto {
            try set(focusAuto, controls.focusAuto ? 1 : 0)
        }
        if let focus = controls.focus {
            guard let absolute = control(focusAbsolute) else {
                throw refuse("focus", "\(device.path) has no focus_absolute control (a fixed-focus lens?)")
            }
            try set(absolute, try bounded("focus", absolute, Int64(focus.rounded())) { "\($0)" })
        }
        for (name, value) in controls.features {
            guard let target = available.first(where: { V4L2Control.key($0.name) == V4L2Control.key(name) }) else {
                let names = available.map(\.name).joined(separator: ", ")
                throw refuse("features.\(name)", "\(device.path) has no such control; it has: \(names)")
            }
            let number: Int64
            switch value {
            case .number(let n) where n.rounded() == n && abs(n) < 9e15: number = Int64(n)
            case .bool(let flag): number = flag ? 1 : 0
            case .string(let text):
                guard let item = target.menu.first(where: { V4L2Control.key($0.name) == V4L2Control.key(text) }) else {
                    throw refuse("features.\(name)", "'\(text)' is not one of \(target.name)'s items: \(target.range)")
                }
                number = item.value
            default: throw refuse("features.\(name)", "a whole number, a boolean or a menu item's name")
            }
            if target.readOnly {
                throw refuse("features.\(name)", "\(target.name) is read-only or inactive now (is its auto mode on?)")
            }
            try set(target, try bounded("features.\(name)", target, number) { "\($0)" })
        }
        if let rate = controls.frameRate {
            let granted = try device.setFrameRate(rate)
            if abs(granted - rate) > 0.01 * rate {
                warnings.append(
                    "source.controls.frameRate: \(device.path) runs at \(JSONWriter.format(granted, decimals: 3)) frames/s, not \(JSONWriter.format(rate, decimals: 3)) (the nearest it offers)"
                )
            }
            taken.append(ControlReading(name: "FrameRate", value: JSONWriter.format(granted, decimals: 3)))
        }
        return (taken, warnings)
    }
}

extension V4L2Device: V4L2ControlDevice {
    public func controls() throws(V4L2Error) -> [V4L2Control] {
        var found: [V4L2Control] = []
        var query = v4l2_queryctrl()
        query.id = scantrack_v4l2_ctrl_flag_next()
        while scantrack_v4l2_queryctrl(fd, &query) == 0 {
            defer { query.id |= scantrack_v4l2_ctrl_flag_next() }
            if query.flags & scantrack_v4l2_ctrl_flag_disabled() != 0 { continue }
            let kind: V4L2Control.Kind
            switch query.type {
            case scantrack_v4l2_ctrl_type_integer(): kind = .integer
            case scantrack_v4l2_ctrl_type_boolean(): kind = .boolean
            case scantrack_v4l2_ctrl_type_menu(), scantrack_v4l2_ctrl_type_integer_menu(): kind = .menu
            default: continue  // classes, buttons, strings, 64-bit and compound controls
            }
            var menu: [(value: Int64, name: String)] = []
            if kind == .menu && query.minimum <= query.maximum && query.maximum - query.minimum < 256 {
                for index in query.minimum...query.maximum {
                    var item = v4l2_querymenu()
                    item.id = query.id
                    item.index = UInt32(index)
                    guard scantrack_v4l2_querymenu(fd, &item) == 0 else { continue }
                    let name =
                        query.type == scantrack_v4l2_ctrl_type_integer_menu()
                        ? "\(item.value)" : Self.string(from: item.name)
                    menu.append((Int64(index), name))
                }
            }
            found.append(
                V4L2Control(
                    id: query.id, name: Self.string(from: query.name), kind: kind, minimum: Int64(query.minimum),
                    maximum: Int64(query.maximum), step: Int64(query.step), menu: menu,
                    readOnly: query.flags & (scantrack_v4l2_ctrl_flag_read_only() | scantrack_v4l2_ctrl_flag_inactive())
                        != 0))
        }
        return found
    }

    public func value(of id: UInt32) throws(V4L2Error) -> Int64 {
        var control = v4l2_control(id: id, value: 0)
        try call("VIDIOC_G_CTRL") { scantrack_v4l2_g_ctrl(fd, &control) }
        return Int64(control.value)
    }

    public func set(_ id: UInt32, to value: Int64) throws(V4L2Error) {
        var control = v4l2_control(id: id, value: Int32(clamping: value))
        try call("VIDIOC_S_CTRL") { scantrack_v4l2_s_ctrl(fd, &control) }
    }

    public func frameRate() -> Double? {
        var parm = v4l2_streamparm()
        parm.type = scantrack_v4l2_buf_type_capture()
        guard scantrack_v4l2_g_parm(fd, &parm) == 0 else { return nil }
        let frame = parm.parm.capture.timeperframe
        return frame.numerator > 0 ? Double(frame.denominator) / Double(frame.numerator) : nil
    }

    public func setFrameRate(_ fps: Double) throws(V4L2Error) -> Double {
        var parm = v4l2_streamparm()
        parm.type = scantrack_v4l2_buf_type_capture()
        try call("VIDIOC_G_PARM") { scantrack_v4l2_g_parm(fd, &parm) }
        guard parm.parm.capture.capability & scantrack_v4l2_cap_timeperframe() != 0 else {
            throw V4L2Error(
                code: .controlRefused, device: path, operation: "source.controls.frameRate",
                reason: "the driver cannot set a frame rate")
        }
        parm.parm.capture.timeperframe = v4l2_fract(numerator: 1000, denominator: UInt32((fps * 1000).rounded()))
        try call("VIDIOC_S_PARM") { scantrack_v4l2_s_parm(fd, &parm) }
        return frameRate() ?? fps
    }
}
