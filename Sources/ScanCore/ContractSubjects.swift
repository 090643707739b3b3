/// The contract's NATS names for one subject prefix (docs/integration.md, "Subjects"): subjects,
/// the JetStream streams that hold the durable ones, and the rules bucket.
///
/// Every subject built from data goes through the builders here, and each builder checks every
/// token it is given (`SubjectToken`): a value with a dot, wildcard, space, CR or LF never
/// becomes a subject, whatever let it in upstream.
/// The second token of every subject: what kind of message it carries.
public enum SubjectFamily: String, Sendable, CaseIterable {
    case sighting, session, track, noread, status, reading, parcel, decision, measure, belt, item, pack,
        parcelpass, coded, deadletter, cmd, order, orderack, preview

    /// What agents publish, on `<prefix>.v1.<family>.<site>.<camera>`.
    public static let agent: [SubjectFamily] = [.sighting, .session, .track, .noread, .status, .reading, .parcel]
    /// What an agent sends only while a viewer holds a lease (core NATS, in no stream): annotated
    /// pictures on `<prefix>.v1.preview.<site>.<camera>`.
    public static let agentOnRequest: [SubjectFamily] = [.preview]
    /// The agents' durable families (JetStream, the aggregator stores them).
    public static let durable: [SubjectFamily] = [.sighting, .session, .noread, .reading, .parcel]
    /// Divert decisions and a lane's dimensioner and scale readings, on
    /// `<prefix>.v1.<family>.<site>.<lane>`: in the agents' stream, sent by the agent of a
    /// one-camera lane (or the aggregator) and by the devices.
    public static let agentStreamOnly: [SubjectFamily] = [.decision, .measure]
    /// The aggregator's results for the WMS, on `<prefix>.v1.<family>.<site>.<lane or station>`.
    /// `coded`: a no-read a person resolved from its picture.
    public static let results: [SubjectFamily] = [.item, .pack, .parcelpass, .coded]
    /// Everything in the results stream: the results and the answers to orders
    /// (`<prefix>.v1.orderack.<site>`).
    public static let resultsStream: [SubjectFamily] = results + [.orderack]
}

public struct ContractSubjects: Sendable, Equatable {
    public var prefix: String

    public init(prefix: String = "scantrack") { self.prefix = prefix }

    /// `<prefix>.v1.` with the prefix checked.
    private func head(_ family: SubjectFamily) throws(SubjectTokenError) -> String {
        try SubjectToken.subject(prefix, field: "subject prefix")
        return "\(prefix).v1.\(family.rawValue)."
    }

    /// `<prefix>.v1.<family>.<site>.<camera>` for `sighting`, `session`, `noread`, `track` and `status`.
    public func agent(_ family: SubjectFamily, site: String, camera: String) throws(SubjectTokenError) -> String {
        try head(family) + SubjectToken(site, field: "site").text + "." + SubjectToken(camera, field: "camera").text
    }

    /// The pattern of one family's agent subjects, `<prefix>.v1.<family>.<site>.<camera>`, for
    /// documents and messages (the placeholders are not tokens).
    public func agentPattern(_ family: SubjectFamily) -> String { "\(prefix).v1.\(family.rawValue).{site}.{camera}" }

    /// What `scanadmin tail` subscribes to: `<prefix>.v1.<family>.<site>.<camera>`, each part
    /// left out (nil) a `*` wildcard.
    public func watch(family: String?, site: String?, camera: String?) throws(SubjectTokenError) -> String {
        try SubjectToken.subject(prefix, field: "subject prefix")
        let parts = [("family", family), ("site", site), ("camera", camera)]
        var subject = "\(prefix).v1"
        for (field, value) in parts {
            subject +=
                "." + (try value.map { v throws(SubjectTokenError) in try SubjectToken(v, field: field).text } ?? "*")
        }
        return subject
    }

    /// `<prefix>.v1.deadletter.<reason>`.
    public func deadLetter(_ reason: String) throws(SubjectTokenError) -> String {
        try head(.deadletter) + SubjectToken(reason, field: "dead-letter reason").text
    }

    /// The site and camera of an agent subject `<prefix>.v1.<family>.<site>.<camera>`; nil when the
    /// subject is not one of that family.
    public func sender(ofAgentSubject subject: String, family: SubjectFamily) -> (site: String, camera: String)? {
        let head = "\(prefix).v1.\(family.rawValue)."
        guard subject.hasPrefix(head) else { return nil }
        let tokens = subject.dropFirst(head.count).split(separator: ".", omittingEmptySubsequences: false)
        guard tokens.count == 2, !tokens[0].isEmpty, !tokens[1].isEmpty else { return nil }
        return (String(tokens[0]), String(tokens[1]))
    }

    /// Where one agent listens for commands: `<prefix>.v1.cmd.<site>.<camera>.>`.
    public func commands(site: String, camera: String) throws(SubjectTokenError) -> String {
        try head(.cmd) + SubjectToken(site, field: "site").text + "." + SubjectToken(camera, field: "camera").text
            + ".>"
    }

    /// The subject a command is sent to; `verb` may hold a dot (`session.start`).
    public func command(site: String, camera: String, verb: String) throws(SubjectTokenError) -> String {
        try head(.cmd) + SubjectToken(site, field: "site").text + "." + SubjectToken(camera, field: "camera").text
            + "." + SubjectToken.subject(verb, field: "command verb")
    }

    /// The verb of a command subject, or nil when the subject is not a command for this camera.
    public func verb(ofCommandSubject subject: String, site: String, camera: String) -> String? {
        let head = "\(prefix).v1.\(SubjectFamily.cmd.rawValue).\(site).\(camera)."
        guard subject.hasPrefix(head), subject.count > head.count else { return nil }
        return String(subject.dropFirst(head.count))
    }

    private var streamStem: String { String(prefix.uppercased().map { $0 == "." ? "_" : $0 }) }

    /// The stream of sightings, session events and no-reads (agents write, the aggregator reads).
    public var agentStream: String { streamStem + "_AGENT" }
    public var agentStreamSubjects: [String] {
        (SubjectFamily.durable + SubjectFamily.agentStreamOnly).map { "\(prefix).v1.\($0.rawValue).>" }
    }
    /// What the agents' stream takes once senders have streams of their own (`senderStreams`):
    /// a subject no login may publish on, so it takes nothing new and what it held is still read.
    public var retiredAgentStreamSubject: String { "\(prefix).v1.unrouted" }

    /// One camera's stream (docs/security.md, "One sender cannot starve the others"): its
    /// durable families, `<STEM>_CAM_<length of site>_<site>_<camera>` (the length keeps two
    /// (site, camera) pairs from naming one stream when an id holds `_`).
    public func cameraStream(site: String, camera: String) throws(SubjectTokenError) -> String {
        try senderStream("CAM", site: site, id: camera, field: "camera")
    }
    public func cameraStreamSubjects(site: String, camera: String) throws(SubjectTokenError) -> [String] {
        var subjects: [String] = []
        for family in SubjectFamily.durable { subjects.append(try agent(family, site: site, camera: camera)) }
        return subjects
    }
    /// One lane's stream: its decisions and its devices' readings, named like a camera's.
    public func laneStream(site: String, lane: String) throws(SubjectTokenError) -> String {
        try senderStream("LANE", site: site, id: lane, field: "lane")
    }
    private func senderStream(_ kind: String, site: String, id: String, field: String) throws(SubjectTokenError)
        -> String
    {
        let site = try SubjectToken(site, field: "site").text
        let id = try SubjectToken(id, field: field).text
        return "\(streamStem)_\(kind)_\(site.utf8.count)_\(site)_\(id)"
    }
    public func laneStreamSubjects(site: String, lane: String) throws(SubjectTokenError) -> [String] {
        [try decision(site: site, lane: lane), try measure(site: site, lane: lane)]
    }
    public var deadLetterStream: String { streamStem + "_DEADLETTER" }
    /// The aggregator's results for the WMS: item passes and pack records.
    public var resultsStream: String { streamStem + "_RESULTS" }
    public var resultsStreamSubjects: [String] {
        SubjectFamily.resultsStream.map { "\(prefix).v1.\($0.rawValue).>" }
    }
    /// Orders from the WMS, `<prefix>.v1.order.<site>` (the aggregator reads them).
    public var ordersStream: String { streamStem + "_ORDERS" }
    public var ordersStreamSubjects: [String] { ["\(prefix).v1.\(SubjectFamily.order.rawValue).>"] }
    public func order(site: String) throws(SubjectTokenError) -> String {
        try head(.order) + SubjectToken(site, field: "site").text
    }
    public func orderAck(site: String) throws(SubjectTokenError) -> String {
        try head(.orderack) + SubjectToken(site, field: "site").text
    }
    /// The site of an order subject `<prefix>.v1.order.<site>`; nil when the subject is not one.
    public func site(ofOrderSubject subject: String) -> String? {
        let head = "\(prefix).v1.\(SubjectFamily.order.rawValue)."
        guard subject.hasPrefix(head) else { return nil }
        let site = String(subject.dropFirst(head.count))
        return SubjectToken.isValid(site) ? site : nil
    }
    public func item(site: String, lane: String) throws(SubjectTokenError) -> String {
        try head(.item) + SubjectToken(site, field: "site").text + "." + SubjectToken(lane, field: "lane").text
    }
    /// `<prefix>.v1.belt.<site>.<lane>`: the belt speed a lane's PLC publishes (core NATS).
    public func belt(site: String, lane: String) throws(SubjectTokenError) -> String {
        try head(.belt) + SubjectToken(site, field: "site").text + "." + SubjectToken(lane, field: "lane").text
    }
    public func decision(site: String, lane: String) throws(SubjectTokenError) -> String {
        try head(.decision) + SubjectToken(site, field: "site").text + "." + SubjectToken(lane, field: "lane").text
    }
    /// `<prefix>.v1.measure.<site>.<lane>`: what a lane's dimensioner or scale measured.
    public func measure(site: String, lane: String) throws(SubjectTokenError) -> String {
        try head(.measure) + SubjectToken(site, field: "site").text + "." + SubjectToken(lane, field: "lane").text
    }
    public func parcelPass(site: String, lane: String) throws(SubjectTokenError) -> String {
        try head(.parcelpass) + SubjectToken(site, field: "site").text + "." + SubjectToken(lane, field: "lane").text
    }
    /// `<prefix>.v1.coded.<site>.<lane>`: a no-read of the lane resolved by a person.
    public func coded(site: String, lane: String) throws(SubjectTokenError) -> String {
        try head(.coded) + SubjectToken(site, field: "site").text + "." + SubjectToken(lane, field: "lane").text
    }
    public func pack(site: String, station: String) throws(SubjectTokenError) -> String {
        try head(.pack) + SubjectToken(site, field: "site").text + "." + SubjectToken(station, field: "station").text
    }
    public var deadLetterSubjects: [String] { ["\(prefix).v1.\(SubjectFamily.deadletter.rawValue).>"] }

    /// The key-value bucket `scanadmin rules` writes and agents read; one key holds the ruleset.
    public var rulesBucket: String { streamStem + "_RULES" }
    public static let rulesKey = "ruleset"

    /// How long JetStream remembers a `Nats-Msg-Id`: an agent that restarts within this window and
    /// sends an event again (its spool's last unconfirmed batch, a resumed clip) stores it once.
    public static let duplicateWindowSeconds: Int64 = 3600
}
