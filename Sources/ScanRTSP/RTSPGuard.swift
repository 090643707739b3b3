internal import CTLSClient
import Foundation
import ScanAgentConfig
import ScanCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What an RTSP camera connection may do (docs/security.md, "RTSP cameras").
public struct RTSPGuardPolicy: Sendable, Equatable {
    /// Answer a Basic challenge on plain RTSP, where the password travels readable
    /// (`source.allowBasicAuth`). Over rtsps it is always answered: the connection is verified.
    public var allowBasicAuth = false
    /// The PEM file an rtsps camera's certificate chain is verified against (`source.tls.ca`);
    /// nil: the system's store.
    public var tlsCA: String?

    public init(allowBasicAuth: Bool = false, tlsCA: String? = nil) {
        self.allowBasicAuth = allowBasicAuth
        self.tlsCA = tlsCA
    }
}

/// Stands between libavformat's RTSP client and the camera, since libavformat can be told
/// neither to stay on the camera's host, nor to refuse Basic authentication, nor to verify an
/// rtsps certificate. libavformat connects to a loopback port of the guard's (taking a
/// connection only from this process); the guard connects to the camera itself — TCP, or TLS
/// verified against `source.tls.ca` for rtsps — and passes bytes both ways, reading the camera's
/// messages through `RTSPReplyFilter`. A refusal ends the connection, and `refusal` says why.
final class RTSPGuard: @unchecked Sendable {
    // @unchecked: the sockets belong to the relay thread once it starts; `refusal` and `stopped`
    // are synchronised.
    let localPort: Int
    private let listener: Int32
    private let refusalText = Mutex<String?>(nil)
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Why the guard ended the connection, when it did.
    var refusal: String? { refusalText.withLock { $0 } }

    init(address: RTSPAddress, policy: RTSPGuardPolicy, timeoutSeconds: Double) throws(RTSPError) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else {
            throw RTSPError(action: "connecting", camera: address.redacted, message: "no socket for the RTSP guard")
        }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        local.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &local) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(listener, address, length) == 0 && listen(listener, 4) == 0
                    && getsockname(listener, address, &length) == 0
            }
        }
        guard bound else {
            Glibc.close(listener)
            throw RTSPError(
                action: "connecting", camera: address.redacted, message: "the RTSP guard cannot listen on loopback")
        }
        self.listener = listener
        self.localPort = Int(UInt16(bigEndian: local.sin_port))
        let relay = Relay(address: address, policy: policy, timeoutSeconds: timeoutSeconds)
        Thread.detachNewThread { [self] in
            defer { finished.signal() }
            relay.run(listener: listener, stopped: { self.stopped.load(ordering: .relaxed) }) { reason in
                refusalText.withLock { $0 = reason }
            }
        }
    }

    /// Ends the relay (closing both connections) and waits for its thread.
    func close() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        finished.wait()
        Glibc.close(listener)
    }

    deinit { close() }
}

/// The relay thread's work: one connection from this process, one to the camera.
private struct Relay {
    let address: RTSPAddress
    let policy: RTSPGuardPolicy
    let timeoutSeconds: Double

    typealias Refusal = RTSPReplyFilter.Refusal

    /// Relays until either side closes or `stopped`; a refusal is handed to `refuse` before the
    /// connections close, so that whoever sees them close can read it.
    func run(listener: Int32, stopped: () -> Bool, refuse: (String) -> Void) {
        var client: Int32 = -1
        var camera: Int32 = -1
        var tls: OpaquePointer?
        defer {
            if let tls { scantrack_tls_close(tls) }
            if camera >= 0 { Glibc.close(camera) }
            if client >= 0 { Glibc.close(client) }
        }
        do throws(Refusal) {
            guard let accepted = acceptOwn(listener, stopped: stopped) else { return }
            client = accepted
            camera = try connectCamera()
            if address.scheme == "rtsps" {
                var error = [CChar](repeating: 0, count: 512)
                tls = scantrack_tls_connect(camera, address.bareHost, policy.tlsCA, &error, error.count)
                guard tls != nil else {
                    throw Refusal(
                        reason:
                            "rtsps \(address.redacted): \(TerminalText.escaped(Self.text(error))): refused"
                    )
                }
            }
            try relay(client: client, camera: camera, tls: tls, stopped: stopped)
        } catch {
            refuse(error.reason)
        }
    }

    private func relay(client: Int32, camera: Int32, tls: OpaquePointer?, stopped: () -> Bool) throws(Refusal) {
        var filter = RTSPReplyFilter(allowBasicAuth: policy.allowBasicAuth || tls != nil)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while !stopped() {
            var fds = [
                pollfd(fd: client, events: Int16(POLLIN), revents: 0),
                pollfd(fd: camera, events: Int16(POLLIN), revents: 0),
            ]
            let waiting = tls.map { scantrack_tls_pending($0) > 0 } ?? false
            if !waiting && poll(&fds, 2, 100) <= 0 { continue }
            if fds[0].revents != 0 {
                let got = recv(client, &buffer, buffer.count, 0)
                guard got > 0, send(camera: camera, tls: tls, buffer, got) else { return }
            }
            if waiting || fds[1].revents != 0 {
                let got =
                    tls.map { scantrack_tls_read($0, &buffer, Int32(buffer.count)) }
                    ?? Int32(recv(camera, &buffer, buffer.count, 0))
                guard got > 0 else { return }
                let passed = try filter.feed(buffer[0..<Int(got)])
                guard passed.isEmpty || sendAll(client, passed, passed.count) else { return }
            }
        }
    }

    /// A C string written into `buffer` (NUL-terminated within it).
    static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func send(camera: Int32, tls: OpaquePointer?, _ bytes: [UInt8], _ count: Int) -> Bool {
        if let tls { return scantrack_tls_write(tls, bytes, Int32(count)) == Int32(count) }
        return sendAll(camera, bytes, count)
    }

    private func sendAll(_ socket: Int32, _ bytes: [UInt8], _ count: Int) -> Bool {
        var done = 0
        while done < count {
            let wrote = bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return -1 }
                return Glibc.send(socket, base + done, count - done, Int32(MSG_NOSIGNAL))
            }
            guard wrote > 0 else { return false }
            done += wrote
        }
        return true
    }

    /// The first connection from a socket of this process (another local user's is closed):
    /// nil when stopped or nothing came in time.
    private func acceptOwn(_ listener: Int32, stopped: () -> Bool) -> Int32? {
        let deadline = ContinuousClock.now + .milliseconds(Int64(timeoutSeconds * 1000))
        while !stopped() && ContinuousClock.now < deadline {
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 1, 100) > 0 else { continue }
            var peer = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let accepted = withUnsafeMutablePointer(to: &peer) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listener, $0, &length) }
            }
            guard accepted >= 0 else { continue }
            if Self.isOwnSocket(port: UInt16(bigEndian: peer.sin_port), except: accepted) { return accepted }
            Glibc.close(accepted)
        }
        return nil
    }

    /// True when one of this process's sockets is bound to loopback `port`.
    static func isOwnSocket(port: UInt16, except: Int32) -> Bool {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return false }
        for entry in entries {
            guard let fd = Int32(entry), fd != except else { continue }
            var local = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let named = withUnsafeMutablePointer(to: &local) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) == 0 }
            }
            if named && local.sin_family == sa_family_t(AF_INET) && UInt16(bigEndian: local.sin_port) == port
                && local.sin_addr.s_addr == in_addr_t(0x7f00_0001).bigEndian
            {
                return true
            }
        }
        return false
    }

    /// A TCP connection to the camera's host and port, with send and receive timeouts.
    private func connectCamera() throws(Refusal) -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(address.bareHost, "\(address.port)", &hints, &found)
        guard status == 0, let first = found else {
            throw Refusal(
                reason:
                    "cannot resolve \(TerminalText.escaped(address.bareHost)): \(String(cString: gai_strerror(status)))"
            )
        }
        defer { freeaddrinfo(found) }
        var entry: UnsafeMutablePointer<addrinfo>? = first
        var reason = "no address"
        while let current = entry {
            entry = current.pointee.ai_next
            let fd = socket(current.pointee.ai_family, current.pointee.ai_socktype, current.pointee.ai_protocol)
            guard fd >= 0 else { continue }
            var timeout = timeval(
                tv_sec: Int(timeoutSeconds), tv_usec: Int((timeoutSeconds - timeoutSeconds.rounded(.down)) * 1e6))
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            if connect(fd, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0 { return fd }
            reason = String(cString: strerror(errno))
            Glibc.close(fd)
        }
        throw Refusal(reason: "cannot connect to \(address.redacted): \(reason)")
    }
}
