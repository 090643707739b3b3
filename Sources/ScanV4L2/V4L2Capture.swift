import CV4L2
import ScanCore

#if canImport(Glibc)
    import Glibc
#endif

/// What the agent asks of a camera; the driver may answer with something close.
public struct CaptureRequest: Sendable, Equatable {
    public var device: String
    public var width: Int
    public var height: Int
    public var fps: Int

    public init(device: String, width: Int, height: Int, fps: Int) {
        self.device = device
        self.width = width
        self.height = height
        self.fps = fps
    }
}

/// What was negotiated.
public struct CaptureFormat: Sendable, Equatable, CustomStringConvertible {
    public var pixelFormat: PixelFormat
    public var width: Int
    public var height: Int
    public var bytesPerLine: Int
    public var fps: Double
    /// `mmap` (streaming I/O) or `read`.
    public var io: String

    public var description: String {
        "\(width)×\(height) \(pixelFormat) at \(fps) fps over \(io)"
    }
}

/// One open camera, negotiated and streaming: memory-mapped buffers when the driver streams,
/// `read()` otherwise. Frames come out as luma. Not thread-safe: the capture thread owns it.
public final class V4L2Capture {
    public let device: V4L2Device
    public let format: CaptureFormat
    private var buffers: [(start: UnsafeMutableRawPointer, length: Int)] = []
    private var readBuffer: [UInt8] = []
    private var streaming = false

    /// Opens the device, picks a pixel format (`PixelFormat.preference`), sets size and frame
    /// rate, and starts capture. Every failure names the device and the step.
    public init(_ request: CaptureRequest, bufferCount: Int = 4) throws(V4L2Error) {
        let device = try V4L2Device(path: request.device)
        let caps = try device.capabilities()
        guard caps.canCapture else {
            throw V4L2Error(
                code: .notACaptureDevice, device: request.device, operation: "check",
                reason: "\(caps.card.isEmpty ? caps.driver : caps.card) cannot capture video")
        }
        guard caps.canStream || caps.canRead else {
            throw V4L2Error(
                code: .notACaptureDevice, device: request.device, operation: "check",
                reason: "offers neither streaming nor read I/O")
        }
        let offered = try Self.offeredFormats(device)
        guard let pixelFormat = PixelFormat.choose(offered: offered) else {
            throw V4L2Error(
                code: .formatUnsupported, device: request.device, operation: "choose a pixel format",
                reason: "offers \(offered.map(PixelFormat.fourCC).joined(separator: ", ")); need one of "
                    + PixelFormat.preference.map(\.description).joined(separator: ", "))
        }
        var fmt = v4l2_format()
        fmt.type = scantrack_v4l2_buf_type_capture()
        fmt.fmt.pix.width = UInt32(request.width)
        fmt.fmt.pix.height = UInt32(request.height)
        fmt.fmt.pix.pixelformat = pixelFormat.rawValue
        fmt.fmt.pix.field = scantrack_v4l2_field_any()
        try device.call("VIDIOC_S_FMT") { scantrack_v4l2_s_fmt(device.fd, &fmt) }
        guard let granted = PixelFormat(rawValue: fmt.fmt.pix.pixelformat) else {
            throw V4L2Error(
                code: .formatUnsupported, device: request.device, operation: "VIDIOC_S_FMT",
                reason: "asked for \(pixelFormat), the driver set \(PixelFormat.fourCC(fmt.fmt.pix.pixelformat))")
        }
        var parm = v4l2_streamparm()
        parm.type = scantrack_v4l2_buf_type_capture()
        parm.parm.capture.timeperframe = v4l2_fract(numerator: 1, denominator: UInt32(request.fps))
        // Not every driver can set a rate; the one it runs at is reported below.
        _ = scantrack_v4l2_s_parm(device.fd, &parm)
        let frame = parm.parm.capture.timeperframe
        let fps = frame.numerator > 0 ? Double(frame.denominator) / Double(frame.numerator) : Double(request.fps)
        self.device = device
        let useStreaming = caps.canStream
        self.format = CaptureFormat(
            pixelFormat: granted, width: Int(fmt.fmt.pix.width), height: Int(fmt.fmt.pix.height),
            bytesPerLine: Int(fmt.fmt.pix.bytesperline), fps: fps, io: useStreaming ? "mmap" : "read")
        if useStreaming {
            try startStreaming(bufferCount: bufferCount)
        } else {
            readBuffer = [UInt8](
                repeating: 0, count: max(Int(fmt.fmt.pix.sizeimage), format.bytesPerLine * format.height))
        }
    }

    deinit {
        if streaming { _ = scantrack_v4l2_streamoff(device.fd) }
        for buffer in buffers { _ = scantrack_v4l2_munmap(buffer.start, buffer.length) }
    }

    static func offeredFormats(_ device: V4L2Device) throws(V4L2Error) -> [UInt32] {
        var formats: [UInt32] = []
        for index in 0..<64 {
            var desc = v4l2_fmtdesc()
            desc.index = UInt32(index)
            desc.type = scantrack_v4l2_buf_type_capture()
            if scantrack_v4l2_enum_fmt(device.fd, &desc) < 0 {
                if errno == EINVAL { break }
                throw V4L2Error(code: .ioctlFailed, device: device.path, operation: "VIDIOC_ENUM_FMT", errno: errno)
            }
            formats.append(desc.pixelformat)
        }
        return formats
    }

    private func startStreaming(bufferCount: Int) throws(V4L2Error) {
        var request = v4l2_requestbuffers()
        request.count = UInt32(bufferCount)
        request.type = scantrack_v4l2_buf_type_capture()
        request.memory = scantrack_v4l2_memory_mmap()
        try device.call("VIDIOC_REQBUFS") { scantrack_v4l2_reqbufs(device.fd, &request) }
        guard request.count > 0 else {
            throw V4L2Error(
                code: .mapFailed, device: device.path, operation: "VIDIOC_REQBUFS",
                reason: "the driver granted no buffers")
        }
        for index in 0..<request.count {
            var buffer = v4l2_buffer()
            buffer.type = scantrack_v4l2_buf_type_capture()
            buffer.memory = scantrack_v4l2_memory_mmap()
            buffer.index = index
            try device.call("VIDIOC_QUERYBUF") { scantrack_v4l2_querybuf(device.fd, &buffer) }
            let length = Int(buffer.length)
            guard let start = scantrack_v4l2_mmap(device.fd, length, Int64(buffer.m.offset)), start != MAP_FAILED else {
                throw V4L2Error(code: .mapFailed, device: device.path, operation: "mmap", errno: errno)
            }
            buffers.append((start, length))
            try device.call("VIDIOC_QBUF") { scantrack_v4l2_qbuf(device.fd, &buffer) }
        }
        try device.call("VIDIOC_STREAMON") { scantrack_v4l2_streamon(device.fd) }
        streaming = true
    }

    /// Waits up to `timeoutMilliseconds` for the next frame and copies its luma into `image`
    /// (sized `format.width × format.height`). False on timeout; throws when the device fails or
    /// went away (the caller reconnects).
    public func nextFrame(into image: inout GrayImage, timeoutMilliseconds: Int32) throws(V4L2Error) -> Bool {
        var poller = pollfd(fd: device.fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, timeoutMilliseconds)
        if ready < 0 {
            if errno == EINTR { return false }
            throw V4L2Error(code: .readFailed, device: device.path, operation: "poll", errno: errno)
        }
        if ready == 0 { return false }
        if poller.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 && poller.revents & Int16(POLLIN) == 0 {
            throw V4L2Error(
                code: .readFailed, device: device.path, operation: "poll",
                reason: "the device reported an error or hung up")
        }
        if streaming {
            var buffer = v4l2_buffer()
            buffer.type = scantrack_v4l2_buf_type_capture()
            buffer.memory = scantrack_v4l2_memory_mmap()
            if scantrack_v4l2_dqbuf(device.fd, &buffer) < 0 {
                if errno == EAGAIN { return false }
                throw V4L2Error(code: .readFailed, device: device.path, operation: "VIDIOC_DQBUF", errno: errno)
            }
            let mapped = buffers[Int(buffer.index)]
            let used = min(Int(buffer.bytesused == 0 ? UInt32(mapped.length) : buffer.bytesused), mapped.length)
            let ok = format.pixelFormat.extractLuma(
                from: UnsafeRawBufferPointer(start: mapped.start, count: used), bytesPerLine: format.bytesPerLine,
                into: &image)
            try device.call("VIDIOC_QBUF") { scantrack_v4l2_qbuf(device.fd, &buffer) }
            return ok
        }
        let count = readBuffer.withUnsafeMutableBytes { raw in
            scantrack_v4l2_read(device.fd, raw.baseAddress, raw.count)
        }
        if count < 0 {
            if errno == EAGAIN || errno == EINTR { return false }
            throw V4L2Error(code: .readFailed, device: device.path, operation: "read", errno: errno)
        }
        return readBuffer.withUnsafeBytes { raw in
            format.pixelFormat.extractLuma(
                from: UnsafeRawBufferPointer(rebasing: raw.prefix(count)), bytesPerLine: format.bytesPerLine,
                into: &image)
        }
    }
}
