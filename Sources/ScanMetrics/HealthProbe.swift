import Foundation
import ScanCore

#if canImport(Glibc)
    import Glibc
#endif

/// The client side of `/health/live` and `/health/ready`: what a program's `health` command (a
/// container's HEALTHCHECK, a supervisor) asks of a running one. Plain HTTP/1.0 on a socket, so
/// that the slim images need no curl.
public enum HealthProbe {
    public struct Answer: Sendable, Equatable {
        /// The HTTP status (200 healthy, 503 not ready).
        public var status: Int
        public var body: String
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// GETs `path` from the program listening on `host`:`port` (a wildcard host, `0.0.0.0` or
    /// `::`, is asked on loopback), waiting at most `timeoutSeconds` for each step.
    public static func get(host: String, port: Int, path: String, timeoutSeconds: Int = 3) throws(Failure) -> Answer {
        let target = host == "0.0.0.0" || host.isEmpty ? "127.0.0.1" : host == "::" ? "::1" : host
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(target, String(port), &hints, &found) == 0, let address = found else {
            throw Failure(description: "cannot resolve \(target)")
        }
        defer { freeaddrinfo(found) }
        let socket = Glibc.socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
        guard socket >= 0 else { throw Failure(description: "no socket: \(String(cString: strerror(errno)))") }
        defer { close(socket) }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
            setsockopt(socket, SOL_SOCKET, option, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
        let shown = target.contains(":") ? "[\(target)]:\(port)" : "\(target):\(port)"
        guard connect(socket, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 else {
            throw Failure(description: "nothing answers on \(shown): \(String(cString: strerror(errno)))")
        }
        let request = Array("GET \(path) HTTP/1.0\r\nHost: \(shown)\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(socket, $0.baseAddress, $0.count, 0) }) == request.count else {
            throw Failure(description: "\(shown) did not take the request")
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while response.count < 1 << 20 {
            let read = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if read <= 0 { break }
            response += buffer[0..<read]
        }
        let text = String(decoding: response, as: UTF8.self)
        let statusLine = text.split(separator: "\r\n", maxSplits: 1).first ?? ""
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = Int(parts[1]) else {
            throw Failure(description: "\(shown) did not answer in HTTP")
        }
        let body = text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? ""
        return Answer(status: status, body: body)
    }

    /// A `health` command's work: asks `/health/ready` (or `/health/live`) of the program at
    /// `listen` (HOST:PORT) and prints what it says; 0 when healthy, 1 when not or nothing answers.
    public static func check(listen: String, live: Bool, program: String) -> Int32 {
        guard let (host, port) = ListenAddress.parse(listen) else {
            FileHandle.standardError.write(
                Data((TerminalText.escaped("\(program) health: '\(listen)' is not HOST:PORT") + "\n").utf8))
            return 1
        }
        do {
            let answer = try get(host: host, port: port, path: live ? "/health/live" : "/health/ready")
            let text = answer.body.hasSuffix("\n") || answer.body.isEmpty ? answer.body : answer.body + "\n"
            // Whatever answers on that address is shown, never obeyed by the terminal.
            FileHandle.standardOutput.write(Data(TerminalText.escapedLines(text).utf8))
            return answer.status == 200 ? 0 : 1
        } catch {
            FileHandle.standardError.write(Data((TerminalText.escapedLines("\(program) health: \(error)") + "\n").utf8))
            return 1
        }
    }
}
