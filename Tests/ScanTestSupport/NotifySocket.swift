import Foundation

/// systemd's side of sd_notify for tests: a datagram socket at a path of its own, to give a
/// program as `NOTIFY_SOCKET`, and the messages it received.
public final class NotifySocket {
    public let path: String
    private let descriptor: Int32

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public init() throws {
        path = NSTemporaryDirectory() + TestEnvironment.uniqueName("notify") + ".sock"
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let name = Array(path.utf8)
        guard name.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw Failure(description: "path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in name.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw Failure(description: "bind \(path): \(errno)") }
    }

    deinit {
        close(descriptor)
        unlink(path)
    }

    /// The next message, or nil when none came within `seconds`.
    public func next(seconds: Double) -> String? {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(seconds * 1000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }

    /// Messages until one contains `line` (as a whole line) or `seconds` pass; all of them, in order.
    public func messages(until line: String, seconds: Double) -> [String] {
        var received: [String] = []
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline, let message = next(seconds: max(0.01, deadline.timeIntervalSinceNow)) {
            received.append(message)
            if message.split(separator: "\n").contains(Substring(line)) { break }
        }
        return received
    }
}
