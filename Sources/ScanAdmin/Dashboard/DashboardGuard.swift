import Foundation
import Hummingbird
import ScanMetrics

/// What every dashboard response passes through: the Host header checked against the names the
/// dashboard is reached by (so a page on another site cannot reach it through DNS rebinding), a
/// token or password when it is configured (it must be when the dashboard listens beyond
/// loopback), and headers that keep a browser from running anything the dashboard did not send.
struct DashboardGuard<Context: RequestContext>: RouterMiddleware {
    /// Host names (lower case, without port) a request may name.
    let allowedHosts: Set<String>
    /// The credential a request must carry (HTTP Basic with any user name and this as the
    /// password, or `Authorization: Bearer …`); nil: none asked.
    let token: String?

    /// Host names always allowed: those of loopback.
    static var loopbackNames: Set<String> { ["localhost", "127.0.0.1", "::1"] }

    static var contentSecurityPolicy: String {
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; object-src 'none'; "
            + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let host = Self.hostName(request.head.authority ?? "")
        guard allowedHosts.contains(host) else {
            return Self.secured(Self.text(.misdirectedRequest, "This dashboard is not served under that host name.\n"))
        }
        if let token, !Self.authorized(request.headers[.authorization], token: token) {
            var refused = Self.text(.unauthorized, "Sign in with the dashboard's password.\n")
            refused.headers[.wwwAuthenticate] = "Basic realm=\"ScanTrack dashboard\", charset=\"UTF-8\""
            return Self.secured(refused)
        }
        return Self.secured(try await next(request, context))
    }

    /// `example.com:8080` → `example.com`; `[::1]:8080` → `::1`; lower case.
    static func hostName(_ authority: String) -> String { HostHeader.name(authority) }

    /// Basic (any user, the token as password) or Bearer; compared in constant time.
    static func authorized(_ header: String?, token: String) -> Bool {
        guard let header else { return false }
        var offered: String?
        if header.lowercased().hasPrefix("bearer ") {
            offered = String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        } else if header.lowercased().hasPrefix("basic "),
            let decoded = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
            let pair = String(data: decoded, encoding: .utf8), let colon = pair.firstIndex(of: ":")
        {
            offered = String(pair[pair.index(after: colon)...])
        }
        guard let offered else { return false }
        return constantTimeEqual(Array(offered.utf8), Array(token.utf8))
    }

    /// The dashboard's headers; a page that set its own policies (the coding desk's forms) keeps them.
    static func secured(_ response: Response) -> Response {
        var response = response
        if response.headers[.contentSecurityPolicy] == nil {
            response.headers[.contentSecurityPolicy] = contentSecurityPolicy
        }
        response.headers[.xContentTypeOptions] = "nosniff"
        if let name = HTTPFields.Element.Name("Referrer-Policy"), response.headers[name] == nil {
            response.headers[name] = "no-referrer"
        }
        if let name = HTTPFields.Element.Name("X-Frame-Options") { response.headers[name] = "DENY" }
        return response
    }

    static func text(_ status: HTTPResponse.Status, _ body: String) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}

/// Whether two secrets are equal, in time that depends on their lengths only (a password's
/// derived key, a token, a form token).
func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    var difference = a.count ^ b.count
    for index in 0..<max(a.count, b.count) {
        difference |= Int((index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0))
    }
    return difference == 0
}

/// A page whose queries failed (the database went away) is a 503 naming the failure; the
/// dashboard's live parts keep their last figures and say they are not updated.
func unavailableOnFailure(_ body: () async throws -> Response) async -> Response {
    do {
        return try await body()
    } catch {
        return DashboardGuard<BasicRequestContext>.text(.serviceUnavailable, "database: \(error)\n")
    }
}
