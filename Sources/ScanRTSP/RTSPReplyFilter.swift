import ScanCore

/// Reads what an RTSP camera sends on its control connection and passes it on, message by
/// message, refusing what would give the camera's password or the stream to someone else:
///
/// - a redirect (any 3xx answer): libavformat follows it to any host and keeps answering the new
///   host's challenges with the configured credentials; an RTSP camera is read at `source.url`'s
///   host and port only;
/// - a `Basic` challenge on plain RTSP, unless allowed: answering it sends the password readable
///   to whoever answers on the camera's address. Challenges of other schemes (Digest) stay, and a
///   camera offering both is answered with Digest.
///
/// RTP interleaved in the connection (`$`, channel, 16-bit length, data) passes as it is. Pure:
/// bytes in, bytes out.
struct RTSPReplyFilter {
    struct Refusal: Error, Equatable, CustomStringConvertible {
        var reason: String
        var description: String { reason }
    }

    /// The longest header block taken, and the longest body (an SDP is a few KiB).
    static let maxHeaderBytes = 64 * 1024
    static let maxBodyBytes = 1 << 20

    let allowBasicAuth: Bool
    private var buffer: [UInt8] = []

    init(allowBasicAuth: Bool) { self.allowBasicAuth = allowBasicAuth }

    /// What to pass on of `bytes` (and of what was held back waiting for the rest of a message).
    mutating func feed(_ bytes: some Collection<UInt8>) throws(Refusal) -> [UInt8] {
        buffer.append(contentsOf: bytes)
        var out: [UInt8] = []
        var start = 0
        defer { buffer.removeFirst(start) }
        while start < buffer.count {
            if buffer[start] == UInt8(ascii: "$") {
                guard buffer.count - start >= 4 else { break }
                let length = Int(buffer[start + 2]) << 8 | Int(buffer[start + 3])
                guard buffer.count - start >= 4 + length else { break }
                out.append(contentsOf: buffer[start..<start + 4 + length])
                start += 4 + length
                continue
            }
            guard let headerEnd = Self.headerEnd(buffer, from: start) else {
                guard buffer.count - start <= Self.maxHeaderBytes else {
                    throw Refusal(reason: "the camera sent an RTSP header over \(Self.maxHeaderBytes) bytes")
                }
                break
            }
            let lines = String(decoding: buffer[start..<headerEnd], as: UTF8.self)
                .split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
            let fields = lines.dropFirst().map(Self.field)
            let bodyLength = try Self.contentLength(fields)
            guard buffer.count - headerEnd - 4 >= bodyLength else { break }
            let kept = try check(status: lines.first ?? "", fields: fields, lines: Array(lines.dropFirst()))
            out.append(contentsOf: Array(([lines.first ?? ""] + kept).joined(separator: "\r\n").utf8))
            out.append(contentsOf: Array("\r\n\r\n".utf8))
            out.append(contentsOf: buffer[headerEnd + 4..<headerEnd + 4 + bodyLength])
            start = headerEnd + 4 + bodyLength
        }
        return out
    }

    /// The header lines to pass on of one message, or the refusal it calls for.
    private func check(status: String, fields: [(name: String, value: String)], lines: [String]) throws(Refusal)
        -> [String]
    {
        let parts = status.split(separator: " ", maxSplits: 2)
        let code = parts.count >= 2 && parts[0].hasPrefix("RTSP/") ? Int(parts[1]) : nil
        if let code, (300..<400).contains(code) {
            let location = fields.first { $0.name == "location" }?.value ?? "(no Location)"
            throw Refusal(
                reason:
                    "the camera answered \(code) to send the agent to \(TerminalText.escaped(location)): refused, an RTSP camera is read only at source.url's host and port (set source.url to the stream's own address)"
            )
        }
        guard !allowBasicAuth else { return lines }
        var kept: [String] = []
        var removed = 0
        for (line, field) in zip(lines, fields) {
            if field.name == "www-authenticate" && field.value.lowercased().hasPrefix("basic") {
                removed += 1
            } else {
                kept.append(line)
            }
        }
        let challenges = fields.filter { $0.name == "www-authenticate" }.count
        if code == 401 && removed > 0 && removed == challenges {
            throw Refusal(
                reason:
                    "the camera asks for Basic authentication, which sends the password readable over plain RTSP: refused (use a camera account with Digest, rtsps://, or set source.allowBasicAuth on a network you trust)"
            )
        }
        return kept
    }

    private static func field(_ line: String) -> (name: String, value: String) {
        guard let colon = line.firstIndex(of: ":") else { return (line.lowercased(), "") }
        return (
            line[..<colon].trimmed(of: " \t").lowercased(),
            line[line.index(after: colon)...].trimmed(of: " \t")
        )
    }

    private static func contentLength(_ fields: [(name: String, value: String)]) throws(Refusal) -> Int {
        guard let text = fields.first(where: { $0.name == "content-length" })?.value else { return 0 }
        guard let length = Int(text), (0...maxBodyBytes).contains(length) else {
            throw Refusal(
                reason: "the camera sent a Content-Length of \(TerminalText.escaped(text)) (at most \(maxBodyBytes))")
        }
        return length
    }

    /// The index of the `\r\n\r\n` ending the header block that starts at `start`.
    private static func headerEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        let limit = min(bytes.count, start + maxHeaderBytes + 4)
        guard limit - start >= 4 else { return nil }
        var index = start
        while index + 3 < limit {
            if bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
                return index
            }
            index += 1
        }
        return nil
    }
}

extension String {
    fileprivate func trimmed(of set: String) -> String {
        let characters = Set(set)
        var text = Substring(self)
        while let first = text.first, characters.contains(first) { text = text.dropFirst() }
        while let last = text.last, characters.contains(last) { text = text.dropLast() }
        return String(text)
    }
}

extension Substring {
    fileprivate func trimmed(of set: String) -> String { String(self).trimmed(of: set) }
}
