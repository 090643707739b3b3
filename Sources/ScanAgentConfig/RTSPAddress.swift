import Foundation
/// An RTSP camera's address as the agent config gives it (`source.url`): `rtsp://` or `rtsps://`,
/// a host, an optional port and path, optionally `user:password@`. Checked where it enters, since
/// the URL goes to libavformat: no other scheme (a config cannot make the agent read a local file
/// or fetch over HTTP), no whitespace or control characters. `redacted` is what logs, heartbeats
/// and errors show: the password never.
public struct RTSPAddress: Sendable, Equatable, CustomStringConvertible {
    public struct Invalid: Error, Equatable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    /// The URL as given (with its credentials, if any).
    public let url: String
    public let scheme: String
    public let host: String
    public let user: String?
    let hasPassword: Bool
    /// Everything after the host: `:port/path?query`.
    let rest: String
    /// The port, as given or the scheme's own (554 for rtsp, 322 for rtsps).
    public let port: Int
    /// `user[:password]` as written (percent-encoded), when the URL has one.
    let userInfo: String?
    /// Everything after the authority: `/path?query`.
    let pathAndQuery: String

    public init(_ url: String) throws(Invalid) {
        guard url.utf8.count <= 2048 else { throw Invalid(reason: "longer than 2048 bytes") }
        guard url.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7f }) else {
            throw Invalid(reason: "contains whitespace, control or non-ASCII characters (percent-encode them)")
        }
        guard let schemeEnd = url.range(of: "://") else {
            throw Invalid(reason: "not a URL: use rtsp://host[:port]/path")
        }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "rtsp" || scheme == "rtsps" else {
            throw Invalid(reason: "scheme \(scheme): only rtsp:// and rtsps:// are taken")
        }
        let afterScheme = url[schemeEnd.upperBound...]
        let authorityEnd = afterScheme.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? afterScheme.endIndex
        let authority = afterScheme[..<authorityEnd]
        var hostPart = authority
        var user: String?
        var hasPassword = false
        var userInfoText: String?
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            userInfoText = String(userInfo)
            hostPart = authority[authority.index(after: at)...]
            let name = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            user = String(name[0])
            hasPassword = name.count == 2
        }
        let hostEnd: Substring.Index
        if hostPart.hasPrefix("[") {
            guard let close = hostPart.firstIndex(of: "]") else { throw Invalid(reason: "unclosed [ in the host") }
            hostEnd = hostPart.index(after: close)
        } else {
            hostEnd = hostPart.firstIndex(of: ":") ?? hostPart.endIndex
        }
        let host = String(hostPart[..<hostEnd])
        guard !host.isEmpty else { throw Invalid(reason: "no host: use rtsp://host[:port]/path") }
        let port = hostPart[hostEnd...].dropFirst()
        var portNumber = scheme == "rtsps" ? 322 : 554
        if hostPart[hostEnd...].hasPrefix(":") {
            guard let number = Int(port), (1...65535).contains(number) else {
                throw Invalid(reason: "port \(port) is not a number from 1 to 65535")
            }
            portNumber = number
        }
        self.port = portNumber
        self.userInfo = userInfoText
        self.pathAndQuery = String(afterScheme[authorityEnd...])
        self.url = url
        self.scheme = scheme
        self.host = host
        self.user = user
        self.hasPassword = hasPassword
        self.rest = String(hostPart[hostEnd...]) + String(afterScheme[authorityEnd...])
    }

    /// The URL with `user` and `password` (percent-encoded) in place of any it had.
    public func withCredentials(user: String, password: String) -> String {
        "\(scheme)://\(Self.percentEncoded(user)):\(Self.percentEncoded(password))@\(host)\(rest)"
    }

    /// The same stream through a plain RTSP relay on this machine's loopback `port` (see
    /// `RTSPGuard`), with the same credentials.
    public func relayed(toLocalPort port: Int) -> String {
        "rtsp://\(userInfo.map { "\($0)@" } ?? "")127.0.0.1:\(port)\(pathAndQuery)"
    }

    /// The host without IPv6 brackets, as a socket address or TLS name takes it.
    public var bareHost: String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }

    /// The URL without its password: `rtsp://user:***@host/path`.
    public var redacted: String {
        let userInfo = user.map { "\($0)\(hasPassword ? ":***" : "")@" } ?? ""
        return "\(scheme)://\(userInfo)\(host)\(rest)"
    }

    public var description: String { redacted }

    /// RFC 3986 userinfo: unreserved characters as they are, every other byte as %XX.
    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            let scalar = Unicode.Scalar(byte)
            if (byte < 0x80 && (scalar.properties.isAlphabetic || ("0"..."9").contains(Character(scalar))))
                || "-._~".unicodeScalars.contains(scalar)
            {
                out.unicodeScalars.append(scalar)
            } else {
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
