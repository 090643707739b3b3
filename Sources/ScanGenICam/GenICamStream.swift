internal import CAravis
import ScanCore

/// The frames of one `GenICamCamera`: a ring of buffers Aravis fills (GVSP over UDP for GigE
/// Vision), taken one at a time. A frame that arrived incomplete (GVSP packets lost, a timeout)
/// is counted and never handed out. Owns its `ArvStream`; stops acquisition when released.
public final class GenICamStream {
    private let camera: GenICamCamera
    private let stream: OpaquePointer
    /// Frames the camera delivered incomplete or failed (lost packets, missing data, timeouts).
    public private(set) var incomplete = 0
    /// Frames delivered in full.
    public private(set) var completed = 0

    /// A frame: its luma and the camera's own timestamp (nanoseconds, the camera's clock).
    public struct Frame {
        public var image: GrayImage
        public var cameraTimestamp: UInt64
        public var frameId: UInt64
    }

    public init(camera: GenICamCamera, buffers: Int = 8) throws(GenICamError) {
        self.camera = camera
        let made = try GenICamError.check("arv_camera_create_stream", camera.name) {
            arv_camera_create_stream(camera.camera, nil, nil, $0)
        }
        guard let made else {
            throw GenICamError(function: "arv_camera_create_stream", input: camera.name, message: "no stream")
        }
        stream = OpaquePointer(made)
        let size = try GenICamLimits.payload(try camera.payload(), camera: camera.name)
        for _ in 0..<buffers { arv_stream_push_buffer(streamPointer, arv_buffer_new_allocate(size)) }
        do {
            try GenICamError.check("arv_camera_start_acquisition", camera.name) {
                arv_camera_start_acquisition(camera.camera, $0)
            }
        } catch {
            scantrack_arv_unref(UnsafeMutableRawPointer(stream))
            throw error
        }
    }

    deinit {
        _ = try? GenICamError.check("arv_camera_stop_acquisition", camera.name) {
            arv_camera_stop_acquisition(camera.camera, $0)
        }
        scantrack_arv_unref(UnsafeMutableRawPointer(stream))
    }

    private var streamPointer: UnsafeMutablePointer<ArvStream> { UnsafeMutablePointer(stream) }

    /// The next complete frame within `timeoutMicroseconds`, or nil (none came, or the ones that
    /// came were incomplete: counted in `incomplete`). Mono8 frames only (`PixelFormat: Mono8`).
    public func next(timeoutMicroseconds: UInt64) throws(GenICamError) -> Frame? {
        guard let buffer = arv_stream_timeout_pop_buffer(streamPointer, guint64(timeoutMicroseconds)) else {
            return nil
        }
        defer { arv_stream_push_buffer(streamPointer, buffer) }
        guard arv_buffer_get_status(buffer) == ARV_BUFFER_STATUS_SUCCESS else {
            incomplete += 1
            return nil
        }
        let width = Int(arv_buffer_get_image_width(buffer))
        let height = Int(arv_buffer_get_image_height(buffer))
        let format = arv_buffer_get_image_pixel_format(buffer)
        guard format == scantrack_arv_mono8 else {
            throw GenICamError(
                function: "frame", input: camera.name,
                message: "pixel format 0x\(String(format, radix: 16)) (set PixelFormat to Mono8)")
        }
        // The sides come from the camera: checked before they are multiplied (a frame past the
        // caps is dropped and counted, never an overflow or a huge copy).
        var size = 0
        guard let count = GenICamLimits.pixels(width: width, height: height),
            let data = arv_buffer_get_image_data(buffer, &size), size >= count
        else {
            incomplete += 1
            return nil
        }
        let pixels = Array(UnsafeRawBufferPointer(start: data, count: count))
        completed += 1
        return Frame(
            image: GrayImage(width: width, height: height, pixels: pixels),
            cameraTimestamp: UInt64(arv_buffer_get_timestamp(buffer)), frameId: UInt64(arv_buffer_get_frame_id(buffer)))
    }
}
