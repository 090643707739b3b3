import ScanCore
import ScanEvents
import ScanNATS
import ScanReconciliation

/// The bus's logins and what each may do, read from a logins file (docs/security.md, "The NATS
/// authorization, generated"): the input of `scanadmin nats config` with the topology.
public struct NATSLogins: Sendable, Equatable {
    public enum Role: String, Sendable, CaseIterable {
        /// One scan-agent: its own subjects, its commands, its lane's belt speed, and the lane's
        /// decisions only when it is the lane's single decider.
        case camera
        /// scan-aggregator: its streams and durables, results, dead letters, the decisions of the
        /// lanes the topology gives a `decision`.
        case aggregator
        /// A WMS of one site: its site's orders in, its site's results out through its own
        /// pre-made consumers.
        case wms
        /// An I/O gateway (diverter PLC, stack light, dimensioner, scale) for lanes of one site.
        case gateway
        /// A PLC or sensor that triggers cameras: `cmd.<site>.<camera>.trigger`, nothing else.
        case trigger
        /// The dashboard's live pages (`scanadmin serve`) for cameras of one site: leases
        /// (`cmd.<site>.<camera>.preview`) and the pictures they bring, nothing else.
        case viewer
        /// scanadmin: every subject (rules, commands, tail, the consumers this file names).
        case admin
    }

    public struct Login: Sendable, Equatable {
        public var user: String
        public var role: Role
        /// The login's site (every role but aggregator and admin).
        public var site: String?
        /// camera: its camera; trigger: the cameras it may trigger; viewer: the cameras it may
        /// watch (every camera of its site when the file names none).
        public var cameras: [String] = []
        /// gateway: its lanes (all the site's lanes when the file names none).
        public var lanes: [String] = []
        /// camera: whether it sends its lane's decisions (nil: when it is the lane's only camera
        /// and the topology gives the lane no `decision`).
        public var decides: Bool?
        /// aggregator: its durable consumer (`scan-aggregator run --durable`).
        public var durable = "aggregator"
        /// The environment variable nats-server reads the password from.
        public var passwordVariable: String

        public init(user: String, role: Role, site: String? = nil, passwordVariable: String? = nil) {
            self.user = user
            self.role = role
            self.site = site
            self.passwordVariable = passwordVariable ?? Self.passwordVariable(user: user)
        }

        /// `cam-01` → `CAM_01_PASSWORD`.
        public static func passwordVariable(user: String) -> String {
            NATSLogins.upperName(user) + "_PASSWORD"
        }

        /// Where the program behind this login takes its replies: `_INBOX.<site>.<camera>` for a
        /// camera (scan-agent's default), `_INBOX.<user>` for the others (ScanTrack's programs
        /// default to it when given a user; other clients set it, as every NATS client can).
        public var inboxPrefix: String {
            if role == .camera, let site, let camera = cameras.first { return "_INBOX.\(site).\(camera)" }
            return "_INBOX.\(user)"
        }
    }

    public var logins: [Login]

    public init(logins: [Login]) { self.logins = logins }

    /// Reads a logins file and checks it against the topology, listing every problem by JSON path.
    public static func parse(_ bytes: [UInt8], file: String, topology: Topology) throws(ConfigErrors) -> NATSLogins {
        let document = try ConfigReader.document(bytes, file: file)
        var reader = ConfigReader()
        let root = reader.object(document, at: "$", allowed: ["version", "logins"])
        if let version = reader.int(root?["version"], at: "version", range: 1...1000), version != 1 {
            reader.fail("version", "version \(version) is not supported (1)")
        }
        if root != nil && root?["logins"] == nil { reader.fail("logins", "required: a list of logins") }
        var logins: [Login] = []
        for (index, element) in (reader.array(root?["logins"], at: "logins") ?? []).enumerated() {
            if let login = parseLogin(&reader, element, at: "logins[\(index)]", topology: topology) {
                if logins.contains(where: { $0.user == login.user }) {
                    reader.fail("logins[\(index)].user", "user '\(login.user)' appears twice")
                } else if let other = logins.first(where: { blockName($0.user) == blockName(login.user) }) {
                    reader.fail(
                        "logins[\(index)].user",
                        "user '\(login.user)' differs from '\(other.user)' only in case, '-' or '_'")
                }
                if logins.contains(where: { $0.passwordVariable == login.passwordVariable }) {
                    reader.fail(
                        "logins[\(index)].passwordVariable",
                        "\(login.passwordVariable) is another login's password variable")
                }
                if login.role == .camera,
                    logins.contains(where: {
                        $0.role == .camera && $0.site == login.site && $0.cameras == login.cameras
                    })
                {
                    reader.fail("logins[\(index)].camera", "camera '\(login.cameras[0])' has a login already")
                }
                logins.append(login)
            }
        }
        let parsed = NATSLogins(logins: logins)
        for (site, lane, deciders) in parsed.decidersByLane(topology) where deciders.count > 1 {
            reader.fail(
                "logins",
                "lane '\(lane)' of site '\(site)' has \(deciders.count) deciders (\(deciders.joined(separator: ", "))): one at most"
            )
        }
        if !reader.issues.isEmpty { throw ConfigErrors(file: file, issues: reader.issues) }
        return parsed
    }

    private static func parseLogin(
        _ reader: inout ConfigReader, _ element: JSONValue, at path: String, topology: Topology
    )
        -> Login?
    {
        let keys = ["user", "role", "site", "camera", "cameras", "lanes", "decides", "durable", "passwordVariable"]
        guard let members = reader.object(element, at: path, allowed: keys) else { return nil }
        guard
            let user = required(&reader, members["user"], at: path + ".user").flatMap({
                reader.token($0, at: path + ".user")
            }),
            let roleName = required(&reader, members["role"], at: path + ".role").flatMap({
                reader.choice($0, at: path + ".role", allowed: Role.allCases.map(\.rawValue))
            }),
            let role = Role(rawValue: roleName)
        else { return nil }
        var login = Login(user: user, role: role)
        if let variable = reader.string(members["passwordVariable"], at: path + ".passwordVariable") {
            if variable.first.map({ $0.isASCII && ($0.isUppercase || $0 == "_") }) == true,
                variable.allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber || $0 == "_") })
            {
                login.passwordVariable = variable
            } else {
                reader.fail(
                    path + ".passwordVariable", "'\(variable)' is not an environment variable name (A-Z, 0-9, _)")
            }
        }
        // Which keys each role takes; any other is refused so that a scope is never silently dropped.
        let takes: [Role: Set<String>] = [
            .camera: ["site", "camera", "decides"], .aggregator: ["durable"], .wms: ["site"],
            .gateway: ["site", "lanes"],
            .trigger: ["site", "cameras"], .viewer: ["site", "cameras"], .admin: [],
        ]
        for key in members.keys.sorted()
        where !["user", "role", "passwordVariable"].contains(key) && takes[role]?.contains(key) != true {
            reader.fail(path + "." + key, "a \(role.rawValue) login takes no '\(key)'")
        }
        var place: Topology.Site?
        if role != .aggregator && role != .admin {
            if let site = required(&reader, members["site"], at: path + ".site").flatMap({
                reader.token($0, at: path + ".site")
            }) {
                login.site = site
                place = topology.site(site)
                if place == nil { reader.fail(path + ".site", "site '\(site)' is not in the topology") }
            }
        }
        func camera(_ value: JSONValue, at cameraPath: String) -> String? {
            guard let id = reader.token(value, at: cameraPath), let place else { return nil }
            let known =
                place.lanes.contains { $0.cameras.contains { $0.id == id } }
                || place.stations.contains { $0.cameras.contains(id) }
            if !known { reader.fail(cameraPath, "camera '\(id)' is on no lane or station of site '\(place.id)'") }
            return id
        }
        switch role {
        case .camera:
            if let value = required(&reader, members["camera"], at: path + ".camera"),
                let id = camera(value, at: path + ".camera")
            {
                login.cameras = [id]
            }
            login.decides = reader.bool(members["decides"], at: path + ".decides")
            if login.decides == true, let site = login.site, let id = login.cameras.first {
                if let lane = topology.lane(site: site, camera: id) {
                    if lane.decision != nil {
                        reader.fail(
                            path + ".decides",
                            "lane '\(lane.id)' is decided by the aggregator (its topology has a decision)")
                    }
                } else if place != nil {
                    reader.fail(path + ".decides", "camera '\(id)' is on no lane: there is nothing to decide")
                }
            }
        case .trigger:
            let list = reader.array(members["cameras"], at: path + ".cameras") ?? []
            if list.isEmpty { reader.fail(path + ".cameras", "required: the cameras it triggers") }
            login.cameras = list.enumerated().compactMap { camera($1, at: "\(path).cameras[\($0)]") }
        case .viewer:
            if let list = reader.array(members["cameras"], at: path + ".cameras") {
                login.cameras = list.enumerated().compactMap { camera($1, at: "\(path).cameras[\($0)]") }
            } else if let place {
                let cameras = place.lanes.flatMap { $0.cameras.map(\.id) } + place.stations.flatMap(\.cameras)
                login.cameras = cameras.reduce(into: []) { seen, id in if !seen.contains(id) { seen.append(id) } }
            }
        case .gateway:
            if let list = reader.array(members["lanes"], at: path + ".lanes") {
                for (index, value) in list.enumerated() {
                    guard let lane = reader.token(value, at: "\(path).lanes[\(index)]"), let place else { continue }
                    if !place.lanes.contains(where: { $0.id == lane }) {
                        reader.fail("\(path).lanes[\(index)]", "lane '\(lane)' is not a lane of site '\(place.id)'")
                    }
                    login.lanes.append(lane)
                }
            } else {
                login.lanes = place?.lanes.map(\.id) ?? []
            }
        case .aggregator:
            if let durable = reader.token(members["durable"], at: path + ".durable") { login.durable = durable }
        case .wms, .admin:
            break
        }
        return login
    }

    private static func required(_ reader: inout ConfigReader, _ value: JSONValue?, at path: String) -> JSONValue? {
        if value == nil { reader.fail(path, "required") }
        return value
    }

    /// The name of a login's permission block in the server's config: `cam-01` → `PERMISSIONS_CAM_01`.
    static func blockName(_ user: String) -> String {
        "PERMISSIONS_" + upperName(user)
    }

    /// A user in upper case with every other character `_`: `cam-01` → `CAM_01` (the password
    /// variable and the permission block are both named from it).
    static func upperName(_ user: String) -> String {
        String(user.uppercased().map { $0.isLetter || $0.isNumber ? $0 : "_" })
    }

    /// Whether a camera login sends its lane's decisions: said so, or by default the only camera
    /// of a lane the aggregator does not decide.
    public func decides(_ login: Login, topology: Topology) -> Bool {
        guard login.role == .camera, let site = login.site, let camera = login.cameras.first,
            let lane = topology.lane(site: site, camera: camera), lane.decision == nil
        else { return false }
        return login.decides ?? (lane.cameras.count == 1)
    }

    /// Every lane with the logins that may publish its decisions.
    func decidersByLane(_ topology: Topology) -> [(site: String, lane: String, deciders: [String])] {
        topology.sites.flatMap { site in
            site.lanes.map { lane in
                var deciders = logins.filter { login in
                    login.site == site.id
                        && login.cameras.first.map { id in lane.cameras.contains { $0.id == id } } == true
                        && decides(login, topology: topology)
                }.map(\.user)
                if lane.decision != nil {
                    deciders += logins.filter { $0.role == .aggregator }.map(\.user).prefix(1).map { _ in
                        "the aggregator"
                    }
                }
                return (site.id, lane.id, deciders)
            }
        }
    }
}

/// A login's rights on the bus: the subjects it may publish (JetStream API and acknowledgements
/// included) and subscribe to. nil `publish` and `subscribe`: every subject (admin).
public struct NATSPermissions: Sendable, Equatable {
    public var publish: [String]
    public var subscribe: [String]
    /// Whether it may answer a request sent to it (a camera answers its commands).
    public var allowResponses = false
}

/// A durable consumer made for a login by `scanadmin nats consumers` (a WMS reads and
/// acknowledges only these; it may create none).
public struct PremadeConsumer: Sendable, Equatable {
    public var stream: String
    public var durable: String
    public var filter: String
}

/// Turns the logins and the topology into nats-server's authorization (docs/security.md).
public struct NATSAuthorization: Sendable {
    public var logins: NATSLogins
    public var topology: Topology
    public var subjects: ContractSubjects
    /// Each camera's own stream's limit (the aggregator's `--camera-stream-mib`), counted in the
    /// account's disk cap.
    public var cameraStreamBytes: Int64 = ContractSubjects.cameraStreamBytes
    /// The images bucket's limit (the aggregator's --images-max-gib).
    public var imagesBytes: Int64 = ContractSubjects.imagesStreamBytes

    public init(logins: NATSLogins, topology: Topology, subjects: ContractSubjects = ContractSubjects()) {
        self.logins = logins
        self.topology = topology
        self.subjects = subjects
    }

    private var p: String { subjects.prefix }

    /// The consumers a login reads, made beforehand by an admin: for a WMS one a family of the
    /// results stream (`<user>-item`, `-pack`, `-parcelpass`, `-orderack`), each filtered to its
    /// site (a filter must lie within the stream's subjects, so one per family).
    public func consumers(of login: NATSLogins.Login) -> [PremadeConsumer] {
        guard login.role == .wms, let site = login.site else { return [] }
        return SubjectFamily.resultsStream.map { family in
            PremadeConsumer(
                stream: subjects.resultsStream, durable: "\(login.user)-\(family.rawValue)",
                filter: family == .orderack ? "\(p).v1.orderack.\(site)" : "\(p).v1.\(family.rawValue).\(site).>")
        }
    }

    /// The stream of each camera and each lane of the topology (`ContractSubjects.senderStreamSpecs`).
    var senderStreams: [String] {
        let specs = try? subjects.senderStreamSpecs(cameras: topology.cameraSenders, lanes: topology.laneSenders)
        return specs?.map(\.name) ?? []
    }

    /// Every pre-made consumer of the file.
    public var consumers: [PremadeConsumer] { logins.logins.flatMap(consumers(of:)) }

    /// Reading and acknowledging one durable consumer, nothing else of it.
    private func consuming(_ stream: String, _ durable: String) -> [String] {
        [
            "$JS.API.CONSUMER.INFO.\(stream).\(durable)", "$JS.API.CONSUMER.MSG.NEXT.\(stream).\(durable)",
            "$JS.ACK.\(stream).\(durable).>",
        ]
    }

    /// A login's rights; nil for admin (every subject).
    public func permissions(of login: NATSLogins.Login) -> NATSPermissions? {
        let site = login.site ?? ""
        let inbox = login.inboxPrefix + ".>"
        switch login.role {
        case .admin:
            return nil
        case .camera:
            let camera = login.cameras.first ?? ""
            let lane = topology.lane(site: site, camera: camera)
            let rules = "KV_" + subjects.rulesBucket
            var publish = (SubjectFamily.agent + SubjectFamily.agentOnRequest).map {
                "\(p).v1.\($0.rawValue).\(site).\(camera)"
            }
            if let lane, logins.decides(login, topology: topology) {
                publish.append("\(p).v1.decision.\(site).\(lane.id)")
            }
            // Its own pictures' chunks in the images bucket; the aggregator names them (ImageObject).
            publish.append("\(ImageObject.chunkPrefix).\(site).\(camera).>")
            publish +=
                (try? subjects.cameraStream(site: site, camera: camera)).map { ["$JS.API.STREAM.INFO.\($0)"] } ?? []
            publish += [
                "$JS.API.INFO", "$JS.API.STREAM.INFO.\(subjects.agentStream)", "$JS.API.STREAM.INFO.\(rules)",
                "$JS.API.DIRECT.GET.\(rules).>", "$JS.API.STREAM.MSG.GET.\(rules)",
            ]
            var subscribe = ["\(p).v1.cmd.\(site).\(camera).>", inbox]
            if let lane { subscribe.append("\(p).v1.belt.\(site).\(lane.id)") }
            return NATSPermissions(publish: publish, subscribe: subscribe, allowResponses: true)
        case .aggregator:
            var publish = SubjectFamily.resultsStream.map { "\(p).v1.\($0.rawValue).>" } + ["\(p).v1.deadletter.>"]
            for place in topology.sites {
                for lane in place.lanes where lane.decision != nil {
                    publish.append("\(p).v1.decision.\(place.id).\(lane.id)")
                }
            }
            publish.append("$JS.API.INFO")
            // The images bucket's object descriptions, written once the sender's event is checked.
            publish.append("\(ImageObject.metaPrefix).>")
            // Its own streams: the contract's, the images bucket's and one for each camera and lane
            // of the topology.
            let senders = senderStreams
            let streams =
                [
                    subjects.agentStream, subjects.resultsStream, subjects.ordersStream, subjects.deadLetterStream,
                    ImageObject.stream,
                ]
                + senders
            for stream in streams {
                publish += ["INFO", "CREATE", "UPDATE"].map { "$JS.API.STREAM.\($0).\(stream)" }
            }
            let durables =
                [(subjects.agentStream, login.durable), (subjects.ordersStream, login.durable + "-orders")]
                + senders.map { ($0, login.durable) }
            for (stream, durable) in durables {
                publish += [
                    "$JS.API.CONSUMER.CREATE.\(stream).\(durable)", "$JS.API.CONSUMER.CREATE.\(stream).\(durable).>",
                    "$JS.API.CONSUMER.DURABLE.CREATE.\(stream).\(durable)",
                ]
                publish += consuming(stream, durable)
            }
            return NATSPermissions(publish: publish, subscribe: ["\(p).v1.status.>", inbox])
        case .wms:
            var publish = ["\(p).v1.order.\(site)", "$JS.API.INFO", "$JS.API.STREAM.INFO.\(subjects.resultsStream)"]
            var subscribe =
                SubjectFamily.results.map { "\(p).v1.\($0.rawValue).\(site).>" } + ["\(p).v1.orderack.\(site)"]
            for consumer in consumers(of: login) { publish += consuming(consumer.stream, consumer.durable) }
            subscribe.append(inbox)
            return NATSPermissions(publish: publish, subscribe: subscribe)
        case .gateway:
            var publish: [String] = []
            var subscribe: [String] = []
            for laneId in login.lanes {
                publish += ["\(p).v1.belt.\(site).\(laneId)", "\(p).v1.measure.\(site).\(laneId)"]
                subscribe.append("\(p).v1.decision.\(site).\(laneId)")
                let cameras = topology.lane(site: site, id: laneId)?.cameras.map(\.id) ?? []
                subscribe += cameras.map { "\(p).v1.reading.\(site).\($0)" }
            }
            return NATSPermissions(publish: publish, subscribe: subscribe + [inbox])
        case .trigger:
            return NATSPermissions(
                publish: login.cameras.map { "\(p).v1.cmd.\(site).\($0).trigger" }, subscribe: [inbox])
        case .viewer:
            // The images bucket is read by direct get (its pictures, the dashboard's /images/…).
            return NATSPermissions(
                publish: login.cameras.map { "\(p).v1.cmd.\(site).\($0).preview" } + [
                    "$JS.API.DIRECT.GET.\(ImageObject.stream)", "$JS.API.DIRECT.GET.\(ImageObject.stream).>",
                ],
                subscribe: login.cameras.map { "\(p).v1.preview.\(site).\($0)" } + [inbox])
        }
    }

    /// nats-server's configuration: the server's settings, one permission block a login and the
    /// account that holds them all with its JetStream limits. `generatedBy` is the command line,
    /// written in the header.
    public func serverConfig(generatedBy: String) -> String {
        // The contract's streams (8 GiB with room to spare), the images bucket and every sender's own
        // stream at its limit, as JetStream reserves them.
        let cameras = Int64(topology.cameraSenders.count)
        let lanes = Int64(topology.laneSenders.count)
        let disk = (8 << 30) + imagesBytes + cameras * cameraStreamBytes + lanes * ContractSubjects.laneStreamBytes
        // Consumers: 64 for the contract's streams (the aggregator's, the WMS's pre-made ones, the
        // tools'), and two durables on each sender's own stream.
        let consumerLimit = 64 + 2 * (cameras + lanes)
        var text = """
            # Generated by
            #   \(generatedBy)
            # Edit the logins file or the topology and generate it again, never this file
            # (docs/security.md, "Least privilege on the bus, generated").
            # Each login may publish and subscribe to its own subjects only; passwords come from the
            # environment variables named below, never from this file, and so does JetStream's store
            # directory (NATS_STORE_DIR). After a change, `nats-server --signal reload=PID` (or SIGHUP)
            # applies it to connected clients; keep the store directory in this file, since nats-server
            # refuses to reload a config when -sd was given on its command line.
            #   NATS_STORE_DIR=/data nats-server -c nats-server.conf
            port: 4222
            # The store's limit is what the account below is promised, not nats-server's default (75 %
            # of the disk free when it starts), so the streams and the images bucket fit however full
            # the disk happens to be at a start; the disk must hold it (docs/security.md, "Limits").
            jetstream { store_dir: $NATS_STORE_DIR, max_file_store: \(disk) }
            # The largest message: a no-read with its picture (at most 2 MiB) and its headers. JetStream's
            # streams set their own limits below it (docs/security.md, "Limits").
            max_payload: 3MB
            max_connections: 1000

            """
        var users: [String] = []
        for login in logins.logins {
            let describe = describe(login)
            guard let permissions = permissions(of: login) else {
                users.append("      # \(login.user): \(describe)")
                users.append("      {user: \"\(login.user)\", password: $\(login.passwordVariable)}")
                continue
            }
            let block = NATSLogins.blockName(login.user)
            text += "\n# \(login.user): \(describe)\n\(block) = {\n"
            text += "  publish = { allow = [\n\(Self.list(permissions.publish))\n  ] }\n"
            text += "  subscribe = { allow = [\n\(Self.list(permissions.subscribe))\n  ] }\n"
            if permissions.allowResponses { text += "  allow_responses = true\n" }
            text += "}\n"
            users.append(
                "      {user: \"\(login.user)\", password: $\(login.passwordVariable), permissions: $\(block)}")
        }
        text += """

            # Every login is in one account, whose JetStream use is capped: no login but the aggregator
            # and admin may create a stream, and nothing in the account can fill the disk past these
            # (the contract's streams, the images bucket, and \(cameras) cameras' and \(lanes) lanes' own
            # streams at their limits).
            accounts {
              SCANTRACK {
                jetstream {
                  max_file: \(disk)
                  max_mem: 256MB
                  max_streams: \(16 + cameras + lanes)
                  max_consumers: \(consumerLimit)
                }
                users = [

            """
        text += users.joined(separator: "\n") + "\n    ]\n  }\n}\n"
        return text
    }

    /// Subjects three to a line, quoted (every subject is made of checked tokens).
    private static func list(_ subjects: [String]) -> String {
        stride(from: 0, to: subjects.count, by: 3).map { start in
            "    " + subjects[start..<min(start + 3, subjects.count)].map { "\"\($0)\"" }.joined(separator: ", ")
        }.joined(separator: ",\n")
    }

    private func describe(_ login: NATSLogins.Login) -> String {
        let site = login.site ?? ""
        switch login.role {
        case .camera:
            let decides = logins.decides(login, topology: topology) ? ", sends its lane's decisions" : ""
            return "camera \(site)/\(login.cameras.first ?? "")\(decides); replies under \(login.inboxPrefix)"
        case .aggregator:
            return "scan-aggregator, durable '\(login.durable)'; replies under \(login.inboxPrefix)"
        case .wms:
            return
                "the WMS of site \(site): its pre-made consumers \(consumers(of: login).map(\.durable).joined(separator: ", ")); replies under \(login.inboxPrefix)"
        case .gateway:
            return "I/O gateway of site \(site), lanes \(login.lanes.joined(separator: ", ")) (core NATS only)"
        case .trigger:
            return "triggers \(login.cameras.map { "\(site)/\($0)" }.joined(separator: ", "))"
        case .viewer:
            return
                "live view (scanadmin serve) of \(login.cameras.map { "\(site)/\($0)" }.joined(separator: ", ")); replies under \(login.inboxPrefix)"
        case .admin:
            return "admin (scanadmin): every subject"
        }
    }
}
