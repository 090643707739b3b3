import ScanCore

/// What an agent sets on its camera at start and after every reconnect (`source.controls`,
/// docs/cameras.md). nil leaves the camera's own setting. A conveyor needs exposure and gain set
/// and held: a code moving 2 m/s stays sharp only at about 100 µs.
public struct CameraControls: Sendable, Equatable {
    /// Exposure time in microseconds; auto exposure is switched off unless `exposureAuto`.
    public var exposureMicroseconds: Double?
    public var exposureAuto = false
    /// Analogue gain in dB.
    public var gainDecibels: Double?
    public var frameRate: Double?
    /// Lens focus in the camera's own units (V4L2 `focus_absolute`, GenICam `FocusPos`); auto
    /// focus is switched off unless `focusAuto`.
    public var focus: Double?
    public var focusAuto = false
    /// A GenICam pixel format name (`Mono8`).
    public var pixelFormat: String?
    /// The sensor region read out, in pixels.
    public var region: Region?
    public var binning: (horizontal: Int, vertical: Int)?
    public var trigger: Trigger?
    /// Other GenICam features by name, set as given (numbers, booleans, enumeration names).
    public var features: [(name: String, value: JSONValue)] = []
    /// A value outside the camera's range is clamped into it with a warning, instead of refused.
    public var clampOutOfRange = false
    /// Dangerous features (`isDangerous`) the config may set all the same, by name.
    public var allowDangerousFeatures: [String] = []

    public struct Region: Sendable, Equatable {
        public var x: Int
        public var y: Int
        public var width: Int
        public var height: Int
        public init(x: Int, y: Int, width: Int, height: Int) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }
    }

    public enum Trigger: Sendable, Equatable {
        /// Frames at the frame rate.
        case freeRun
        /// A frame per edge on a hardware line (`Line1`), rising or falling.
        case line(String, rising: Bool)
        /// A frame per software trigger (the agent's command).
        case software
    }

    public init() {}

    public var isEmpty: Bool { self == CameraControls() }

    /// A `set-controls` change over these controls: what to set on the streaming camera now (the
    /// changed exposure, gain, frame rate and focus; a region needs the stream restarted), and
    /// these controls with the change, applied at every later (re)connect.
    public func changed(by change: CameraControls) -> (now: CameraControls, merged: CameraControls) {
        var merged = self
        merged.exposureMicroseconds = change.exposureMicroseconds ?? merged.exposureMicroseconds
        merged.gainDecibels = change.gainDecibels ?? merged.gainDecibels
        merged.frameRate = change.frameRate ?? merged.frameRate
        merged.focus = change.focus ?? merged.focus
        merged.region = change.region ?? merged.region
        merged.clampOutOfRange = change.clampOutOfRange || merged.clampOutOfRange
        // Features in the order given: one named again takes its new value in its old place.
        for feature in change.features {
            if let index = merged.features.firstIndex(where: { $0.name == feature.name }) {
                merged.features[index] = feature
            } else {
                merged.features.append(feature)
            }
        }
        var now = CameraControls()
        now.features = change.features
        now.exposureMicroseconds = change.exposureMicroseconds
        now.gainDecibels = change.gainDecibels
        now.frameRate = change.frameRate
        now.focus = change.focus
        now.exposureAuto = exposureAuto
        now.focusAuto = focusAuto
        now.clampOutOfRange = merged.clampOutOfRange
        return (now, merged)
    }

    public static func == (a: CameraControls, b: CameraControls) -> Bool {
        a.exposureMicroseconds == b.exposureMicroseconds && a.exposureAuto == b.exposureAuto
            && a.gainDecibels == b.gainDecibels && a.frameRate == b.frameRate && a.focus == b.focus
            && a.focusAuto == b.focusAuto && a.pixelFormat == b.pixelFormat
            && a.region == b.region && a.binning?.horizontal == b.binning?.horizontal
            && a.binning?.vertical == b.binning?.vertical && a.trigger == b.trigger
            && a.features.elementsEqual(b.features) { $0.name == $1.name && $0.value == $1.value }
            && a.clampOutOfRange == b.clampOutOfRange && a.allowDangerousFeatures == b.allowDangerousFeatures
    }

    static let keys = [
        "exposureMicroseconds", "exposureAuto", "gainDecibels", "frameRate", "focus", "focusAuto", "pixelFormat",
        "region", "binning", "trigger", "features", "clampOutOfRange", "allowDangerousFeatures",
    ]

    /// Features that reset or reflash the camera, read or write its files, or change what it keeps
    /// across power cycles (its persistent network settings, its default user set, its name):
    /// a config may set one only when `allowDangerousFeatures` names it.
    public static func isDangerous(_ feature: String) -> Bool {
        let name = feature.lowercased()
        let exact = [
            "devicereset", "devicefactoryreset", "usersetsave", "usersetdefault",
            "usersetdefaultselector", "deviceuserid", "devicefeaturepersistencestart",
            "devicefeaturepersistenceend", "deviceregistersstreamingstart", "deviceregistersstreamingend",
        ]
        let prefixes = [
            "devicefirmware", "deviceupdate", "file", "gevpersistent", "gevcurrentipconfiguration",
            "gevipconfiguration", "gevcurrentdefaultgateway", "gevcurrentsubnetmask",
            "gevcurrentipaddress", "gevmacaddress",
        ]
        return exact.contains(name) || prefixes.contains { name.hasPrefix($0) }
    }

    /// Reads `source.controls`, every problem by path.
    static func parse(_ value: JSONValue?, at path: String, reader: inout ConfigReader) -> CameraControls? {
        guard let members = reader.object(value, at: path, allowed: keys) else { return nil }
        var controls = CameraControls()
        controls.exposureMicroseconds = reader.double(
            members["exposureMicroseconds"], at: path + ".exposureMicroseconds", range: 1...10_000_000)
        controls.exposureAuto = reader.bool(members["exposureAuto"], at: path + ".exposureAuto") ?? false
        controls.gainDecibels = reader.double(members["gainDecibels"], at: path + ".gainDecibels", range: -20...60)
        controls.frameRate = reader.double(members["frameRate"], at: path + ".frameRate", range: 0.1...1000)
        controls.focus = reader.double(members["focus"], at: path + ".focus", range: 0...1_000_000)
        controls.focusAuto = reader.bool(members["focusAuto"], at: path + ".focusAuto") ?? false
        controls.pixelFormat = reader.string(members["pixelFormat"], at: path + ".pixelFormat")
        controls.clampOutOfRange = reader.bool(members["clampOutOfRange"], at: path + ".clampOutOfRange") ?? false
        if let region = reader.object(members["region"], at: path + ".region", allowed: ["x", "y", "width", "height"]) {
            let x = reader.int(region["x"], at: path + ".region.x", range: 0...65_535) ?? 0
            let y = reader.int(region["y"], at: path + ".region.y", range: 0...65_535) ?? 0
            let width = reader.int(region["width"], at: path + ".region.width", range: 1...65_535)
            let height = reader.int(region["height"], at: path + ".region.height", range: 1...65_535)
            if let width, let height {
                controls.region = Region(x: x, y: y, width: width, height: height)
            } else {
                reader.fail(path + ".region", "needs width and height (pixels; x and y default to 0)")
            }
        }
        if let binning = reader.object(
            members["binning"], at: path + ".binning", allowed: ["horizontal", "vertical"])
        {
            controls.binning = (
                reader.int(binning["horizontal"], at: path + ".binning.horizontal", range: 1...16) ?? 1,
                reader.int(binning["vertical"], at: path + ".binning.vertical", range: 1...16) ?? 1
            )
        }
        if let trigger = members["trigger"] {
            switch trigger {
            case .string("freeRun"): controls.trigger = .freeRun
            case .string("software"): controls.trigger = .software
            case .object:
                if let line = reader.object(trigger, at: path + ".trigger", allowed: ["line", "edge"]),
                    let name = reader.string(line["line"], at: path + ".trigger.line")
                {
                    let edge = reader.choice(line["edge"], at: path + ".trigger.edge", allowed: ["rising", "falling"])
                    controls.trigger = .line(name, rising: (edge ?? "rising") == "rising")
                }
            default:
                reader.fail(
                    path + ".trigger",
                    "\"freeRun\", \"software\" or {\"line\": \"Line1\", \"edge\": \"rising\"|\"falling\"}")
            }
        }
        controls.allowDangerousFeatures =
            (reader.array(members["allowDangerousFeatures"], at: path + ".allowDangerousFeatures") ?? []).enumerated()
            .compactMap { index, element in
                reader.string(element, at: path + ".allowDangerousFeatures[\(index)]")
            }
        let allowed = Set(controls.allowDangerousFeatures)
        if let features = members["features"] {
            if case .object(let list) = features {
                for (name, value) in list {
                    if isDangerous(name) && !allowed.contains(name) {
                        reader.fail(
                            path + ".features." + name,
                            "resets or reflashes the camera, touches its files or what it keeps across power cycles: refused unless \(path).allowDangerousFeatures names it"
                        )
                        continue
                    }
                    switch value {
                    case .number, .bool, .string: controls.features.append((name, value))
                    default: reader.fail(path + ".features." + name, "a number, boolean or enumeration name")
                    }
                }
            } else {
                reader.fail(path + ".features", "expected an object of GenICam feature names and values")
            }
        }
        return controls
    }
}

/// One control as a camera holds it: its name (GenICam's, or the V4L2 driver's), value and range.
public struct ControlReading: Sendable, Equatable {
    public var name: String
    public var value: String
    public var range: String?
    public init(name: String, value: String, range: String? = nil) {
        self.name = name
        self.value = value
        self.range = range
    }
}
