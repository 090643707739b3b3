/// What a camera may make the agent allocate or multiply (docs/security.md, "Input"): a camera is
/// not trusted beyond its own subjects, and its payload size and frame sizes come from the camera.
public enum GenICamLimits {
    /// The largest frame taken: 8192² pixels, the same cap as RTSP's decoder.
    public static let maxPixels = 8_192 * 8_192
    /// The longest side (a line-scan camera's width may exceed 8192; a 16-bit register cannot).
    public static let maxSide = 65_535
    /// The largest payload a buffer is allocated for: a 16-bit frame of `maxPixels` and 1 MiB of
    /// chunk data. Eight such buffers are allocated a stream.
    public static let maxPayload = 2 * maxPixels + (1 << 20)

    /// The pixel count of a `width` × `height` frame, or nil when a side or the count is past the
    /// caps (never an overflow: the sides are checked before they are multiplied).
    public static func pixels(width: Int, height: Int) -> Int? {
        guard (1...maxSide).contains(width), (1...maxSide).contains(height) else { return nil }
        let count = width * height
        return count <= maxPixels ? count : nil
    }

    /// The payload size the camera announced, if within the cap.
    public static func payload(_ bytes: Int, camera: String) throws(GenICamError) -> Int {
        guard (1...maxPayload).contains(bytes) else {
            throw GenICamError(
                function: "arv_camera_get_payload", input: camera,
                message: "the camera announces a payload of \(bytes) bytes; at most \(maxPayload) are allocated")
        }
        return bytes
    }

    /// The camera to open when the config names none: the only one found. With several on the
    /// network, the first to answer discovery would be a matter of chance (or of whoever answers
    /// fastest), so `source.camera` is required.
    public static func onlyCamera(_ devices: [GenICamDevice]) throws(GenICamError) -> GenICamDevice {
        guard let only = devices.first else {
            throw GenICamError(function: "arv_update_device_list", input: "(any)", message: "no camera found")
        }
        guard devices.count == 1 else {
            let found = devices.map { "\($0.id) at \($0.address)" }.joined(separator: ", ")
            throw GenICamError(
                function: "arv_update_device_list", input: "(any)",
                message: "\(devices.count) cameras answer (\(found)): set source.camera to the one to use")
        }
        return only
    }
}
