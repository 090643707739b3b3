internal import CAravis
import ScanAgentConfig
import ScanCore

/// One GenICam camera (GigE Vision or USB3 Vision) through Aravis: owns its `ArvCamera`, which is
/// released once. Blocking: use it from one thread (the capture thread, or a command).
public final class GenICamCamera {
    let handle: OpaquePointer
    /// The id it was opened with (or the only camera found's), for errors and logs.
    public let name: String

    /// Opens the camera Aravis knows as `id` (`VENDOR-SERIAL`, a serial, a user id or an IP
    /// address); nil: the only one found, and an error naming them when several answer.
    public init(id: String?) throws(GenICamError) {
        let chosen: String
        if let id { chosen = id } else { chosen = try GenICamLimits.onlyCamera(GenICamDevices.list()).id }
        name = chosen
        let made = try GenICamError.check("arv_camera_new", chosen) { error in arv_camera_new(chosen, error) }
        guard let made else {
            throw GenICamError(function: "arv_camera_new", input: name, message: "no such camera")
        }
        handle = OpaquePointer(made)
    }

    deinit { scantrack_arv_unref(UnsafeMutableRawPointer(handle)) }

    var camera: UnsafeMutablePointer<ArvCamera> { UnsafeMutablePointer(handle) }

    public var vendor: String {
        (try? text("arv_camera_get_vendor_name") { arv_camera_get_vendor_name(camera, $0) }) ?? ""
    }
    public var model: String {
        (try? text("arv_camera_get_model_name") { arv_camera_get_model_name(camera, $0) }) ?? ""
    }
    public var serial: String {
        (try? text("arv_camera_get_device_serial_number") { arv_camera_get_device_serial_number(camera, $0) }) ?? ""
    }

    /// Refuses a camera that reports another vendor, model or serial than `expected` names: the
    /// id or address it was opened by is whatever answered discovery, so a device answering in
    /// the real camera's place is caught here. What the camera sent is shown escaped.
    public func check(_ expected: ExpectedCamera) throws(GenICamError) {
        let wrong = expected.mismatches(vendor: vendor, model: model, serial: serial)
        guard !wrong.isEmpty else { return }
        let said = wrong.map { name, wanted, reported in
            "\(name) \"\(TerminalText.escaped(reported))\" (source.expect.\(name): \"\(TerminalText.escaped(wanted))\")"
        }
        throw GenICamError(
            function: "source.expect", input: name,
            message: "the camera opened reports \(said.joined(separator: ", ")): refused as not the configured camera")
    }

    private func text(
        _ function: String, _ body: (UnsafeMutablePointer<UnsafeMutablePointer<GError>?>) -> UnsafePointer<CChar>?
    ) throws(GenICamError) -> String {
        try GenICamError.check(function, name, body).map { String(cString: $0) } ?? ""
    }

    // MARK: features

    public func isAvailable(_ feature: String) -> Bool {
        let available = try? GenICamError.check("arv_camera_is_feature_available", feature) { error -> gboolean in
            arv_camera_is_feature_available(camera, feature, error)
        }
        return (available ?? 0) != 0
    }

    public func float(_ feature: String) throws(GenICamError) -> Double {
        try GenICamError.check("arv_camera_get_float", "\(name) \(feature)") {
            arv_camera_get_float(camera, feature, $0)
        }
    }

    public func floatBounds(_ feature: String) throws(GenICamError) -> ClosedRange<Double> {
        var low = 0.0
        var high = 0.0
        try GenICamError.check("arv_camera_get_float_bounds", "\(name) \(feature)") {
            arv_camera_get_float_bounds(camera, feature, &low, &high, $0)
        }
        return low...max(low, high)
    }

    public func setFloat(_ feature: String, _ value: Double) throws(GenICamError) {
        try GenICamError.check("arv_camera_set_float", "\(name) \(feature)=\(value)") {
            arv_camera_set_float(camera, feature, value, $0)
        }
    }

    public func integer(_ feature: String) throws(GenICamError) -> Int64 {
        Int64(
            try GenICamError.check("arv_camera_get_integer", "\(name) \(feature)") {
                arv_camera_get_integer(camera, feature, $0)
            })
    }

    public func integerBounds(_ feature: String) throws(GenICamError) -> ClosedRange<Int64> {
        var low: gint64 = 0
        var high: gint64 = 0
        try GenICamError.check("arv_camera_get_integer_bounds", "\(name) \(feature)") {
            arv_camera_get_integer_bounds(camera, feature, &low, &high, $0)
        }
        return Int64(low)...Int64(max(low, high))
    }

    public func setInteger(_ feature: String, _ value: Int64) throws(GenICamError) {
        try GenICamError.check("arv_camera_set_integer", "\(name) \(feature)=\(value)") {
            arv_camera_set_integer(camera, feature, gint64(value), $0)
        }
    }

    public func string(_ feature: String) throws(GenICamError) -> String {
        try text("arv_camera_get_string \(feature)") { arv_camera_get_string(camera, feature, $0) }
    }

    public func setString(_ feature: String, _ value: String) throws(GenICamError) {
        try GenICamError.check("arv_camera_set_string", "\(name) \(feature)=\(value)") {
            arv_camera_set_string(camera, feature, value, $0)
        }
    }

    public func execute(_ command: String) throws(GenICamError) {
        try GenICamError.check("arv_camera_execute_command", "\(name) \(command)") {
            arv_camera_execute_command(camera, command, $0)
        }
    }

    /// Bytes of one frame as the camera is set now.
    public func payload() throws(GenICamError) -> Int {
        Int(try GenICamError.check("arv_camera_get_payload", name) { arv_camera_get_payload(camera, $0) })
    }
}

extension GenICamCamera {
    func arvSetBoolean(
        _ feature: String, _ value: Bool, _ error: UnsafeMutablePointer<UnsafeMutablePointer<GError>?>
    ) {
        arv_camera_set_boolean(camera, feature, value ? 1 : 0, error)
    }
}
