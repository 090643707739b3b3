#if canImport(Glibc)
    import Glibc
#endif

/// A V4L2 call that failed, naming the device and the operation.
public struct V4L2Error: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case cannotOpen
        case notACaptureDevice
        case ioctlFailed
        case formatUnsupported
        case mapFailed
        case readFailed
        /// A control the config asks for that the camera refuses or does not have.
        case controlRefused
    }

    public var code: Code
    public var device: String
    public var operation: String
    public var errno: Int32
    public var reason: String

    public init(code: Code, device: String, operation: String, errno: Int32) {
        self.code = code
        self.device = device
        self.operation = operation
        self.errno = errno
        self.reason = errno == 0 ? "" : String(cString: strerror(errno))
    }

    public init(code: Code, device: String, operation: String, reason: String) {
        self.code = code
        self.device = device
        self.operation = operation
        self.errno = 0
        self.reason = reason
    }

    public var description: String {
        if code == .controlRefused { return "\(operation): \(reason)" }
        return reason.isEmpty ? "\(operation) \(device) failed" : "\(operation) \(device): \(reason)"
    }
}
