import ArgumentParser
import Foundation
import Hummingbird
import Logging
import ScanAgentConfig
import ScanCore
import ScanMetrics
import ScanPostgres
import ScanReports
import ScanServices
import ServiceLifecycle

/// `scanadmin serve`: the read-only supervisor dashboard over HTTP.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract:
            "Read-only supervisor dashboard in a browser: each site and lane now, trends, no-reads, packs, cameras.",
        discussion: """
            Pages: / (per site: the current shift's item passes, read rate, rejects and packs, each lane, the \
            latest packs and every camera's state, refreshed in place every --refresh-seconds; below, each \
            lane's hourly item passes and read rate over the last --trend-shifts shifts), /lanes/SITE/LANE \
            (the lane's figures and recent no-reads with their pictures), /packs/SESSION (a pack's lines \
            against its order), /cameras/CAMERA (its last heartbeats). Figures come from the queries of \
            scanadmin report. Nothing on the page changes anything, and the database session is read-only, \
            but for the coding desk: with --operators-file, /coding lets a signed-in operator key the code of \
            a no-read from its picture (as scanadmin noreads resolve does; CSRF-protected forms, stored \
            through --desk-pg). \
            Listens on loopback unless --listen says otherwise; prints its address once it listens. Beyond \
            loopback it needs --auth-token-file (browsers ask for it: any user name, the file's first line as \
            password) and answers only requests naming a host of --allow-host (loopback names always). Every \
            page is sent with a Content-Security-Policy that runs no inline script, and every query has \
            --statement-timeout. \
            SIGTERM or SIGINT stops it. Exit codes: 0 stopped, 1 database or listening failure, 64 bad usage.
            """)

    @OptionGroup var connection: ConnectionOptions
    @Option(help: "HOST:PORT to listen on (port 0: any free port).") var listen = "127.0.0.1:8080"
    @Option(help: "Only this site.") var site: String?
    @Option(help: "Shift definitions, name=HH:MM-HH:MM,… (default: the config file's, else early/late/night).")
    var shifts: String?
    @Option(help: "Time zone (IANA) for every site, instead of each site's own.") var timeZone: String?
    @Option(help: "Seconds between live updates of the page.") var refreshSeconds: Double = 5
    @Option(help: "Seconds without a heartbeat after which a camera is shown silent.") var silentAfter: Double = 15
    @Option(help: "Shifts in each trend chart (the current one and those before it).") var trendShifts = 3
    @Option(
        help: ArgumentHelp(
            "A file whose first line is the dashboard's password (required beyond loopback).", valueName: "FILE"))
    var authTokenFile: String?
    @Option(
        help: ArgumentHelp(
            "A host name browsers use to reach the dashboard (repeatable; loopback names are always allowed).",
            valueName: "NAME"))
    var allowHost: [String] = []
    @Option(
        help: ArgumentHelp(
            "Operators who may sign in to the coding desk (/coding) and resolve no-reads (lines NAME:HASH, written by scanadmin operators set); without it there is no desk.",
            valueName: "FILE"))
    var operatorsFile: String?
    @Option(
        help: ArgumentHelp(
            "The database login the coding desk stores codings with (it needs scantrack_operator; default: the dashboard's).",
            valueName: "DSN"))
    var deskPg: String?
    @Option(help: "Days of no-reads the coding desk lists.") var deskDays = 2
    @Option(help: "Seconds a query may run before PostgreSQL cancels it.") var statementTimeout: Double = 10
    @Option(
        help: "Log lines: text, or json, one object a line for Loki or ELK (default: $SCANTRACK_LOG_FORMAT, else text)."
    )
    var logFormat: String?
    @Option(help: "Subject prefix of the agents the live pages watch.") var prefix = "scantrack"
    @Option(help: "Live pages' picture width in pixels (160 to 3840).") var liveWidth = 640
    @Option(help: "Live pages' pictures a second (1 to 10).") var liveRate = 4
    @Flag(
        inversion: .prefixedNo,
        help: "Live pages per camera at /cameras/SITE/CAMERA/live (NATS is reached at the first one asked for).")
    var liveView = true
    @Option(help: .hidden) var now: String?

    func validate() throws {
        do {
            _ = try LogChoice.resolve(level: nil, format: logFormat)
        } catch {
            throw ValidationError(error.description)
        }
        let (host, _) = try Self.address(listen)
        if !Self.isLoopback(host) && authTokenFile == nil
            && ProcessInfo.processInfo.environment[Self.tokenVariable] == nil
        {
            throw ValidationError(
                "--listen \(listen) is beyond loopback: pass --auth-token-file FILE (or set \(Self.tokenVariable)) so the dashboard asks for a password"
            )
        }
        if !(statementTimeout > 0 && statementTimeout <= 3600) {
            throw ValidationError("--statement-timeout must be more than 0 and at most 3600 seconds")
        }
        if !(refreshSeconds >= 0.2) { throw ValidationError("--refresh-seconds must be at least 0.2") }
        if !(1...30).contains(trendShifts) { throw ValidationError("--trend-shifts must be 1 to 30") }
        if !(1...90).contains(deskDays) { throw ValidationError("--desk-days must be 1 to 90") }
        if !AgentCommand.snapshotWidths.contains(liveWidth) {
            throw ValidationError("--live-width must be 160 to 3840 pixels")
        }
        if !PreviewLease.rates.contains(liveRate) { throw ValidationError("--live-rate must be 1 to 10 a second") }
        try checkSubjectFlags([], prefix: prefix)
        if let operatorsFile {
            do {
                _ = try OperatorAccounts.load(path: operatorsFile)
            } catch {
                throw ValidationError("--operators-file \(error)")
            }
        }
        if let now, Timestamp(rfc3339: now) == nil { throw ValidationError("--now '\(now)' is not an RFC 3339 time") }
    }

    static let tokenVariable = "SCANTRACK_DASHBOARD_TOKEN_FILE"

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// The password in `--auth-token-file` (or the file the environment names): its first line.
    func token() throws -> String? {
        guard let path = authTokenFile ?? ProcessInfo.processInfo.environment[Self.tokenVariable] else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("--auth-token-file \(path): cannot read the file")
        }
        let token = String(String(decoding: data, as: UTF8.self).split(separator: "\n").first ?? "")
            .trimmingCharacters(in: .whitespaces)
        guard token.count >= 12 else {
            throw ValidationError("--auth-token-file \(path): the password must be at least 12 characters")
        }
        return token
    }

    /// `HOST:PORT` (an IPv6 host in brackets).
    static func address(_ text: String) throws -> (host: String, port: Int) {
        guard let address = ListenAddress.parse(text) else {
            throw ValidationError("--listen '\(text)' is not HOST:PORT")
        }
        return address
    }

    func run() async throws {
        let (host, port) = try Self.address(listen)
        var settings = DashboardSettings(
            shiftSpec: try shifts ?? connection.fileSettings()["shifts"] ?? ShiftPlan.defaultSpec, timeZone: timeZone,
            site: site, refreshSeconds: refreshSeconds, silentAfter: silentAfter, trendShifts: trendShifts,
            fixedNow: now.flatMap(Timestamp.init(rfc3339:)).map {
                Date(timeIntervalSince1970: Double($0.milliseconds) / 1000)
            })
        settings.liveView = liveView
        settings.codingDesk = operatorsFile != nil
        // The schema and the shift settings are checked once, before listening.
        try withDatabase(connection, command: "serve") { database in
            _ = try DashboardViews(database: database, settings: settings)
        }
        let database = DashboardDatabase(
            dsn: try connection.postgresDSN(), passwordFile: connection.postgresPasswordFile,
            statementTimeoutMilliseconds: Int(statementTimeout * 1000))
        let logs = (try? LogChoice.resolve(level: nil, format: logFormat)) ?? LogChoice()
        ScanLogging.format = logs.format
        let logger = ScanLogging.logger("scanadmin.serve", level: logs.level)
        BuildInfo.record(program: "scanadmin")
        var hosts = DashboardGuard<BasicRequestContext>.loopbackNames.union(allowHost.map { $0.lowercased() })
        if !["0.0.0.0", "::"].contains(host) { hosts.insert(host.lowercased()) }
        var desk: CodingDesk?
        if let operatorsFile {
            desk = CodingDesk(
                accounts: try OperatorAccounts.load(path: operatorsFile), sessions: OperatorSessions(),
                reader: database,
                writer: DashboardDatabase(
                    dsn: try deskPg ?? connection.postgresDSN(), passwordFile: connection.postgresPasswordFile,
                    statementTimeoutMilliseconds: Int(statementTimeout * 1000), readOnly: false),
                days: deskDays)
        }
        let connection = self.connection
        let live =
            liveView
            ? LiveViews(
                subjects: ContractSubjects(prefix: prefix), lease: PreviewLease(maxWidth: liveWidth, rate: liveRate)
            ) { try connection.connectNATS() } : nil
        let images = liveView ? BucketImages { try connection.connectNATS() } : nil
        let router = Self.router(
            database: database, settings: settings,
            guard: DashboardGuard(allowedHosts: hosts, token: try token()), desk: desk, live: live, images: images)
        let listening = SetOnce()
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: "scanadmin"),
            onServerRunning: { channel in
                listening.set()
                let bound = channel.localAddress?.port ?? port
                let shown = host.contains(":") ? "[\(host)]" : host
                FileHandle.standardOutput.write(Data("dashboard: http://\(shown):\(bound)/\n".utf8))
            },
            logger: logger)
        do {
            // Under systemd (Type=notify): ready once it listens; the watchdog fed while the
            // server's tasks run (a starved or wedged process stops feeding it).
            let supervisor = SupervisorService(
                notifier: SystemdNotifier(environment: ProcessInfo.processInfo.environment), logger: logger
            ) { SupervisorReport(ready: listening.isSet, alive: true, status: "serving on \(listen)") }
            try await programGroup(
                [
                    .init(service: HangupService.nothingToReload(logger: logger), serviceName: "reload"),
                    .init(service: supervisor, serviceName: "systemd"),
                    .init(service: app),
                ], stopsOnSignals: true, logger: logger
            ).run()
        } catch {
            printError("scanadmin serve: cannot serve on \(listen): \(error)")
            throw ExitCode.failure
        }
    }

    /// Every route is a GET (and its HEAD): nothing the dashboard serves changes anything, but for
    /// the coding desk's POSTs (`desk`, with --operators-file). `guard` comes first: Hummingbird
    /// applies a middleware to the routes added after it.
    static func router(
        database: DashboardDatabase, settings: DashboardSettings, guard check: DashboardGuard<BasicRequestContext>,
        desk: CodingDesk? = nil, live: LiveViews? = nil, images: BucketImages? = nil
    ) -> Router<BasicRequestContext> {
        // HEAD on every route answers as its GET does, without the body (a load balancer's or
        // monitor's probe, `curl -I`).
        let router = Router(options: .autoGenerateHeadEndpoints)
        // Health, before the guard (it says nothing but whether the dashboard and its database work):
        // what `scanadmin health` and a container's HEALTHCHECK ask.
        router.get("/health/live") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain"],
                body: .init(byteBuffer: ByteBuffer(string: "live\n")))
        }
        router.get("/health/ready") { _, _ in
            do {
                _ = try await database.read { connection in try connection.query("SELECT 1") }
                return Response(
                    status: .ok, headers: [.contentType: "text/plain"],
                    body: .init(byteBuffer: ByteBuffer(string: "postgres ok\n")))
            } catch {
                return Response(
                    status: .serviceUnavailable, headers: [.contentType: "text/plain"],
                    body: .init(byteBuffer: ByteBuffer(string: "postgres failing\n")))
            }
        }
        // The process's figures and the build (`process_*`, `scantrack_build_info`): nothing of the
        // data either, so like health it is outside the guard, for Prometheus.
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: ScanMetrics.text())))
        }
        router.add(middleware: check)
        @Sendable func html(_ text: HTMLText?, _ what: String) -> Response {
            guard let text else {
                return page(
                    .notFound, HTML.page(title: "Not found", body: "<section><p>No \(what).</p></section>")
                )
            }
            return page(.ok, text)
        }
        router.get("/assets/dashboard.css") { _, _ in asset(HTML.style, type: "text/css; charset=utf-8") }
        router.get("/assets/dashboard.js") { _, _ in
            asset(HTML.script + "\n" + LiveViews.script, type: "text/javascript; charset=utf-8")
        }
        @Sendable func views<T: Sendable>(_ body: @escaping @Sendable (DashboardViews) throws -> T) async throws -> T {
            try await database.read { connection in try body(DashboardViews(database: connection, settings: settings)) }
        }
        router.get("/") { _, _ in
            await unavailableOnFailure {
                let (now, trends) = try await views { try ($0.now(), $0.trends()) }
                return page(
                    .ok,
                    HTML.page(
                        title: "Now", body: "<div id=\"now\">\(now)</div><div id=\"trends\">\(trends)</div>",
                        live: [
                            ("now", "/fragments/now", settings.refreshSeconds),
                            ("trends", "/fragments/trends", max(60, settings.refreshSeconds)),
                        ]))
            }
        }
        router.get("/fragments/now") { _, _ in
            await unavailableOnFailure { page(.ok, try await views { try $0.now() }) }
        }
        router.get("/fragments/trends") { _, _ in
            await unavailableOnFailure { page(.ok, try await views { try $0.trends() }) }
        }
        router.get("/lanes/:site/:lane") { _, context in
            let site = try Self.parameter(context, "site")
            let lane = try Self.parameter(context, "lane")
            return await unavailableOnFailure {
                html(try await views { try $0.lanePage(site: site, lane: lane) }, "site \(site)")
            }
        }
        router.get("/fragments/lanes/:site/:lane") { _, context in
            let site = try Self.parameter(context, "site")
            let lane = try Self.parameter(context, "lane")
            return await unavailableOnFailure {
                guard let text = try await views({ try $0.lane(site: site, lane: lane) }) else {
                    return page(.notFound, "No site \(site).")
                }
                return page(.ok, text)
            }
        }
        router.get("/packs/:session") { _, context in
            let session = try Self.parameter(context, "session")
            return await unavailableOnFailure {
                html(try await views { try $0.pack(sessionId: session) }, "pack \(session)")
            }
        }
        // `:id`: the live pages (`/cameras/SITE/CAMERA/live`) share this first segment, and the
        // router takes one parameter name a position.
        router.get("/cameras/:id") { _, context in
            let camera = try Self.parameter(context, "id")
            return await unavailableOnFailure { html(try await views { try $0.camera(camera) }, "camera \(camera)") }
        }
        router.get("/noreads/:id") { _, context in
            let id = try Self.parameter(context, "id")
            return await unavailableOnFailure {
                let image = try await database.read { try NoReadStore(connection: $0).image(id: id) }
                guard let image, !image.isEmpty else {
                    return page(.notFound, "No picture for no-read \(id).")
                }
                return Response(
                    status: .ok, headers: [.contentType: "image/png", .cacheControl: "max-age=86400"],
                    body: .init(byteBuffer: ByteBuffer(bytes: image)))
            }
        }
        desk?.add(to: router)
        live?.add(to: router)
        images?.add(to: router)
        return router
    }

    /// A path parameter, percent-decoded (links percent-encode ids, which may hold any character).
    static func parameter(_ context: BasicRequestContext, _ name: String) throws -> String {
        let raw = try context.parameters.require(name)
        return raw.removingPercentEncoding ?? raw
    }

    private static func page(_ status: HTTPResponse.Status, _ text: HTMLText) -> Response {
        Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: text.markup)))
    }

    private static func asset(_ text: String, type: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: type, .cacheControl: "max-age=300"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

}
