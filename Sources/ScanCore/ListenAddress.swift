/// `HOST:PORT` as the programs' `--listen` options and `metrics.listen` take it: an IPv6 host in
/// brackets (`[::1]:9464`), a port from 0 (any free one) to 65535.
public enum ListenAddress {
    public static func parse(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65535).contains(port)
        else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port)
    }
}
