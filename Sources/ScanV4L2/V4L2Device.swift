import CV4L2

#if canImport(Glibc)
    import Glibc
#endif

/// Owns one file descriptor opened through libv4l2 (which converts exotic pixel formats
/// for us). Closed exactly once, in `deinit`.
public final class V4L2Device {
    public let path: String
    let fd: Int32

    /// What the driver says about itself.
    public struct Capabilities: Sendable, Equatable {
        public var driver: String
        public var card: String
        public var canCapture: Bool
        public var canStream: Bool
        public var canRead: Bool
    }

    public init(path: String) throws(V4L2Error) {
        let fd = scantrack_v4l2_open(path, O_RDWR | O_NONBLOCK)
        guard fd >= 0 else {
            throw V4L2Error(code: .cannotOpen, device: path, operation: "cannot open", errno: Glibc.errno)
        }
        self.path = path
        self.fd = fd
    }

    deinit {
        _ = scantrack_v4l2_close(fd)
    }

    public func capabilities() throws(V4L2Error) -> Capabilities {
        var cap = v4l2_capability()
        try call("VIDIOC_QUERYCAP") { scantrack_v4l2_querycap(fd, &cap) }
        let caps = cap.capabilities & 0x8000_0000 != 0 ? cap.device_caps : cap.capabilities
        return Capabilities(
            driver: Self.string(from: cap.driver), card: Self.string(from: cap.card),
            canCapture: caps & scantrack_v4l2_cap_video_capture() != 0,
            canStream: caps & scantrack_v4l2_cap_streaming() != 0,
            canRead: caps & scantrack_v4l2_cap_readwrite() != 0)
    }

    /// Runs one ioctl wrapper, retrying on EINTR, and turns failure into an error naming the device.
    func call(_ operation: String, _ body: () -> Int32) throws(V4L2Error) {
        while true {
            if body() >= 0 { return }
            let error = Glibc.errno
            if error == EINTR { continue }
            throw V4L2Error(code: .ioctlFailed, device: path, operation: operation, errno: error)
        }
    }

    static func string<T>(from tuple: T) -> String {
        withUnsafeBytes(of: tuple) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}
