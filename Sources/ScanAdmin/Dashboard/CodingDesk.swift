import Foundation
import Hummingbird
import ScanCore
import ScanEvents
import ScanPostgres

/// The coding desk (`scanadmin serve --operators-file F`): a signed-in operator sees a lane's
/// unresolved no-reads with their pictures, newest first, and keys the code or marks `no-label` /
/// `not-a-parcel` — what `scanadmin noreads resolve` does, with the operator's name as `keyed_by`.
/// The only pages of `serve` that change anything, so every POST must carry the session cookie
/// (HttpOnly, SameSite=Strict), the session's form token, and an Origin (or Sec-Fetch-Site) of
/// this very host: a page on another site can neither send the cookie nor read the token.
struct CodingDesk: Sendable {
    let accounts: OperatorAccounts
    let sessions: OperatorSessions
    /// Reads (one read-only snapshot a request), and the connection that stores codings.
    let reader: DashboardDatabase
    let writer: DashboardDatabase
    /// How far back the desk lists no-reads.
    let days: Int

    static let cookie = "scantrack_desk"
    /// The desk's pages submit forms to themselves: the dashboard's policy with `form-action 'self'`.
    static var contentSecurityPolicy: String {
        DashboardGuard<BasicRequestContext>.contentSecurityPolicy.replacingOccurrences(
            of: "form-action 'none'", with: "form-action 'self'")
    }

    // MARK: routes

    func add(to router: Router<BasicRequestContext>) {
        router.get("/coding/sign-in") { request, _ in
            if session(request) != nil { return Self.redirect(to: "/coding") }
            return Self.page(.ok, signInPage(error: nil))
        }
        router.post("/coding/sign-in") { request, _ in
            guard Self.sameOrigin(request) else { return Self.forbidden("not sent by this desk's own page") }
            var request = request
            let form = Self.form(try await request.collectBody(upTo: 4_096))
            let name = form["name"] ?? ""
            guard OperatorAccounts.isName(name), sessions.mayTry(name) else {
                return Self.page(
                    .unauthorized,
                    signInPage(
                        error: OperatorAccounts.isName(name)
                            ? "Too many wrong passwords for \(name): try again in five minutes."
                            : "Name and password do not match."))
            }
            let password = form["password"] ?? ""
            let accounts = accounts
            let verified = await withCheckedContinuation { continuation in
                // PBKDF2 is slow by design: off the server's event loops.
                DispatchQueue.global().async {
                    continuation.resume(returning: accounts.verify(name: name, password: password))
                }
            }
            guard verified else {
                sessions.failed(name)
                return Self.page(.unauthorized, signInPage(error: "Name and password do not match."))
            }
            let session = sessions.start(name: name)
            var response = Self.redirect(to: "/coding")
            response.headers[.setCookie] =
                "\(Self.cookie)=\(session.id); Path=/coding; HttpOnly; SameSite=Strict; Max-Age=\(12 * 3600)"
            return response
        }
        router.post("/coding/sign-out") { request, _ in
            var request = request
            let form = Self.form(try await request.collectBody(upTo: 4_096))
            if let session = session(request), Self.sameOrigin(request), Self.tokenMatches(form, session) {
                sessions.end(session.id)
            }
            var response = Self.redirect(to: "/coding/sign-in")
            response.headers[.setCookie] = "\(Self.cookie)=; Path=/coding; HttpOnly; SameSite=Strict; Max-Age=0"
            return response
        }
        router.get("/coding") { request, _ in
            guard let session = session(request) else { return Self.redirect(to: "/coding/sign-in") }
            return await unavailableOnFailure { Self.page(.ok, try await lanesPage(session)) }
        }
        router.get("/coding/:site/:lane") { request, context in
            guard let session = session(request) else { return Self.redirect(to: "/coding/sign-in") }
            let site = try ServeCommand.parameter(context, "site")
            let lane = try ServeCommand.parameter(context, "lane")
            let notice = sessions.takeNotice(session.id)
            return await unavailableOnFailure {
                Self.page(.ok, try await lanePage(session, site: site, lane: lane, notice: notice, error: nil))
            }
        }
        router.post("/coding/:site/:lane") { request, context in
            let site = try ServeCommand.parameter(context, "site")
            let lane = try ServeCommand.parameter(context, "lane")
            guard let session = session(request) else { return Self.forbidden("sign in first") }
            guard Self.sameOrigin(request) else { return Self.forbidden("not sent by this desk's own page") }
            var request = request
            let form = Self.form(try await request.collectBody(upTo: 16_384))
            guard Self.tokenMatches(form, session) else {
                return Self.forbidden("the form's token is not this session's")
            }
            return await unavailableOnFailure {
                try await resolve(form, session: session, site: site, lane: lane)
            }
        }
    }

    /// Stores what the form says of one no-read; the lane's page again, with what happened.
    private func resolve(_ form: [String: String], session: OperatorSessions.Session, site: String, lane: String)
        async throws -> Response
    {
        let id = form["id"] ?? ""
        let camera = form["camera"] ?? ""
        func again(_ status: HTTPResponse.Status, _ message: String) async throws -> Response {
            Self.page(status, try await lanePage(session, site: site, lane: lane, notice: nil, error: (id, message)))
        }
        guard let outcome = NoReadResolution(rawValue: form["outcome"] ?? "") else {
            return try await again(.badRequest, "Choose keyed, no-label or not-a-parcel.")
        }
        var code: KeyedCode?
        if outcome == .keyed {
            let text = (form["code"] ?? "").trimmingCharacters(in: .whitespaces)
            guard !text.isEmpty else { return try await again(.unprocessableContent, "Key the code first.") }
            let symbology = form["symbology"].flatMap { $0.isEmpty ? nil : $0 }
            let year = Calendar(identifier: .gregorian).dateComponents(in: .gmt, from: Date()).year ?? 2026
            do {
                code = try KeyedCode.check(text, symbology: symbology, referenceYear: year)
            } catch {
                return try await again(.unprocessableContent, error.description)
            }
        }
        let resolution = NoReadCodingStore.Resolution(outcome: outcome, code: code, by: session.name)
        let result: Result<CodedEvent, NoReadCodingStore.ResolveError> = try await writer.use { connection in
            do {
                return .success(
                    try NoReadCodingStore(connection: connection).resolve(
                        id: id, camera: "\(site)/\(camera)", resolution))
            } catch let error as NoReadCodingStore.ResolveError {
                if case .database(let failure) = error { throw failure }
                return .failure(error)
            }
        }
        switch result {
        case .success(let coded):
            var said = coded.outcome.rawValue
            if let code = coded.code { said = "keyed \(code.symbology ?? "a code") '\(code.value)'" }
            sessions.setNotice(session.id, "Resolved \(coded.noReadId) (\(coded.camera)): \(said).")
            return Self.redirect(to: "/coding/\(HTML.segment(site))/\(HTML.segment(lane))")
        case .failure(let error):
            return try await again(.conflict, error.description)
        }
    }

    // MARK: pages

    private func signInPage(error: String?) -> HTMLText {
        var body: HTMLText = "<section data-scope=\"sign-in\"><h2>Coding desk: sign in</h2>"
        if let error { body += "<p class=\"alert\" data-figure=\"error\">\(error)</p>" }
        body += "<form method=\"post\" action=\"/coding/sign-in\" class=\"desk\">"
        body += "<label>Name <input name=\"name\" autocomplete=\"username\" required maxlength=\"64\"></label>"
        body += "<label>Password <input name=\"password\" type=\"password\" autocomplete=\"current-password\" "
        body += "required></label><button type=\"submit\">Sign in</button></form></section>"
        return HTML.page(title: "Coding desk", body: body)
    }

    private func frame(_ session: OperatorSessions.Session, title: String, _ body: HTMLText) -> HTMLText {
        var out: HTMLText = "<section class=\"desk-bar\"><span data-figure=\"operator\">\(session.name)</span> "
        out += "<a href=\"/coding\">lanes</a> <form method=\"post\" action=\"/coding/sign-out\" class=\"inline\">"
        out += "<input type=\"hidden\" name=\"token\" value=\"\(session.formToken)\">"
        out += "<button type=\"submit\">Sign out</button></form></section>"
        return HTML.page(title: title, body: out + body)
    }

    private func scope(site: String?, lane: String?) -> ReportStore.Scope {
        let now = Timestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
        return ReportStore.Scope(
            start: now.adding(milliseconds: -Int64(days) * 86_400_000), end: now.adding(milliseconds: 60_000),
            site: site, lane: lane, camera: nil, timeZone: "UTC")
    }

    private func lanesPage(_ session: OperatorSessions.Session) async throws -> HTMLText {
        let scope = scope(site: nil, lane: nil)
        let (topology, waiting) = try await reader.read { connection in
            (
                try SiteStore(connection: connection).topology(),
                try NoReadStore(connection: connection).list(scope, limit: 5_000, unresolvedOnly: true)
            )
        }
        var body: HTMLText = "<section data-scope=\"desk\"><h2>Unresolved no-reads, last \(days) day(s)</h2>"
        body += "<table><thead><tr><th>site</th><th>lane</th><th class=\"n\">unresolved</th></tr></thead><tbody>"
        for site in topology.sites {
            for lane in site.lanes {
                let count = waiting.filter { $0.site == site.id && $0.lane == lane.id }.count
                body += "<tr data-lane=\"\(site.id)/\(lane.id)\"><td>\(site.id)</td>"
                body += "<td><a href=\"/coding/\(HTML.segment(site.id))/\(HTML.segment(lane.id))\">\(lane.id)</a></td>"
                body += "<td class=\"n\" data-figure=\"\(site.id)/\(lane.id)\">\(count)</td></tr>"
            }
        }
        body += "</tbody></table></section>"
        return frame(session, title: "Coding desk", body)
    }

    private func lanePage(
        _ session: OperatorSessions.Session, site: String, lane: String, notice: String?,
        error: (id: String, message: String)?
    ) async throws -> HTMLText {
        let scope = scope(site: site, lane: lane)
        let noReads = try await reader.read { connection in
            try NoReadStore(connection: connection).list(scope, limit: 50, newestFirst: true, unresolvedOnly: true)
        }
        var body: HTMLText = "<section data-scope=\"desk:\(site)/\(lane)\"><h2>Lane \(lane) · site \(site)</h2>"
        if let notice { body += "<p class=\"notice\" data-figure=\"notice\">\(notice)</p>" }
        if let error, !noReads.contains(where: { $0.id == error.id }) {
            body += "<p class=\"alert\" data-figure=\"error\">\(error.id): \(error.message)</p>"
        }
        body += "<p class=\"muted\"><span data-figure=\"unresolved\">\(noReads.count)</span> unresolved, newest first. "
        body += "Key the code as printed (GS1 data in brackets: (00)…); it is checked as a scanner checks it.</p>"
        body += "<div class=\"noreads\">"
        let symbologies = ["GS1-128"] + Symbology.allCases.map(\.rawValue)
        for noRead in noReads {
            body += "<figure data-noread=\"\(noRead.id)\">" + DashboardViews.picture(noRead)
            body += "<figcaption>\(noRead.firstSeen) · \(noRead.camera) · \(noRead.family ?? "unknown")"
            if let reason = noRead.reason { body += " · \(reason)" }
            body += "</figcaption>"
            if let error, error.id == noRead.id {
                body += "<p class=\"alert\" data-figure=\"error\">\(error.message)</p>"
            }
            body +=
                "<form method=\"post\" action=\"/coding/\(HTML.segment(site))/\(HTML.segment(lane))\" class=\"desk\">"
            body += "<input type=\"hidden\" name=\"token\" value=\"\(session.formToken)\">"
            body += "<input type=\"hidden\" name=\"id\" value=\"\(noRead.id)\">"
            body += "<input type=\"hidden\" name=\"camera\" value=\"\(noRead.camera)\">"
            body += "<input name=\"code\" placeholder=\"code as printed\" maxlength=\"600\" autocomplete=\"off\">"
            body += "<select name=\"symbology\"><option value=\"\">symbology: from the code</option>"
            for name in symbologies { body += "<option value=\"\(name)\">\(name)</option>" }
            body += "</select><button name=\"outcome\" value=\"keyed\" type=\"submit\">Key code</button>"
            body += "<button name=\"outcome\" value=\"no-label\" type=\"submit\">No label</button>"
            body += "<button name=\"outcome\" value=\"not-a-parcel\" type=\"submit\">Not a parcel</button></form>"
            body += "</figure>"
        }
        body += "</div></section>"
        return frame(session, title: "Coding desk \(site)/\(lane)", body)
    }

    // MARK: requests

    private func session(_ request: Request) -> OperatorSessions.Session? {
        guard let id = request.cookies[Self.cookie]?.value, id.utf8.count == 64 else { return nil }
        return sessions.session(id)
    }

    /// The POST came from a page of this host: its Origin names this host and port (or, without an
    /// Origin, the browser says same-origin).
    static func sameOrigin(_ request: Request) -> Bool {
        let authority = (request.head.authority ?? "").lowercased()
        // A browser sends "null" where the referrer policy hides the origin: then its Sec-Fetch-Site
        // (which no page can set) decides.
        if let origin = request.headers[.origin]?.lowercased(), origin != "null" {
            return !authority.isEmpty && (origin == "http://" + authority || origin == "https://" + authority)
        }
        guard let name = HTTPFields.Element.Name("Sec-Fetch-Site") else { return false }
        return request.headers[name] == "same-origin"
    }

    static func tokenMatches(_ form: [String: String], _ session: OperatorSessions.Session) -> Bool {
        constantTimeEqual(Array((form["token"] ?? "").utf8), Array(session.formToken.utf8))
    }

    /// `application/x-www-form-urlencoded` fields (the last of a repeated name wins).
    static func form(_ buffer: ByteBuffer) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(buffer: buffer).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            fields[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return fields
    }

    static func page(_ status: HTTPResponse.Status, _ text: HTMLText) -> Response {
        var response = Response(
            status: status,
            headers: [
                .contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
                .contentSecurityPolicy: contentSecurityPolicy,
            ],
            body: .init(byteBuffer: ByteBuffer(string: text.markup)))
        // The desk's forms name their own origin to it (the dashboard's `no-referrer` would make
        // it "null"); nothing is sent to another site.
        if let name = HTTPFields.Element.Name("Referrer-Policy") { response.headers[name] = "same-origin" }
        return response
    }

    static func redirect(to path: String) -> Response {
        Response(status: .seeOther, headers: [.location: path, .cacheControl: "no-store"])
    }

    static func forbidden(_ why: String) -> Response {
        DashboardGuard<BasicRequestContext>.text(.forbidden, "Refused: \(why).\n")
    }

}
