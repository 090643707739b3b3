import Foundation
import ScanAgentConfig
import ScanCore
import ScanNATS
import Synchronization

/// The dashboard's half of the live view (`/cameras/<site>/<camera>/live`): while a page asks for
/// a camera's picture, a lease on the agent (`preview`, core NATS request) renewed every
/// `renewEvery`, and a subscription to its previews keeping the latest. A camera no page has asked
/// for in `idle` is let go: its lease runs out and the agent stops drawing. The NATS work runs on
/// a thread of its own; requests only read and mark what it keeps.
final class LiveViews: Sendable {
    /// A camera to watch, its site and id already checked as subject tokens.
    struct Camera: Hashable, Sendable {
        var site: String
        var id: String

        /// nil when either is not a subject token (a dot, a wildcard, a space, a control).
        init?(site: String, id: String) {
            guard (try? SubjectToken(site, field: "site")) != nil, (try? SubjectToken(id, field: "camera")) != nil
            else { return nil }
            self.site = site
            self.id = id
        }
    }

    /// The latest preview of a camera: its picture, and the rest of the agent's message written
    /// again from its parsed form (nothing the camera sent reaches the page unparsed).
    struct Picture: Sendable {
        var jpeg: [UInt8]
        var fields: [(String, JSONValue)]
        var received: Date

        var frame: Int? { fields.first { $0.0 == "frame" }?.1.intValue }
    }

    /// What a page is told of one camera.
    struct View: Sendable {
        var picture: Picture?
        /// Why there is no picture (NATS not reachable, no agent answering, the agent's refusal).
        var problem: String?
    }

    private struct State {
        var wanted: [Camera: Date] = [:]
        /// The latest pictures of each camera, newest last (`recentPictures`): a page asks for the
        /// picture of the frame whose marks it has, which may no longer be the newest.
        var pictures: [Camera: [Picture]] = [:]
        var problems: [Camera: String] = [:]
        var connectionProblem: String?
        var running = false
    }

    /// Pictures kept a camera: a second's worth at the highest rate.
    static let recentPictures = 10
    /// At most this many cameras are watched at once (each is a subscription and a picture kept).
    static let cameraLimit = 16
    /// The largest picture kept (the agent refuses larger ones; a camera is not trusted).
    static let pictureLimit = 2 << 20

    let subjects: ContractSubjects
    let lease: PreviewLease
    let renewEvery: Duration
    let idle: Duration
    private let connect: @Sendable () throws -> NATSConnection
    private let state = Mutex(State())

    init(
        subjects: ContractSubjects, lease: PreviewLease = PreviewLease(), renewEvery: Duration = .seconds(2),
        idle: Duration = .seconds(10), connect: @escaping @Sendable () throws -> NATSConnection
    ) {
        self.subjects = subjects
        self.lease = lease
        self.renewEvery = renewEvery
        self.idle = idle
        self.connect = connect
    }

    /// A page asks for `camera`: watched from now on (until `idle` passes without asking), and what
    /// there is so far. nil: too many cameras are watched already.
    func watch(_ camera: Camera, now: Date = Date()) -> View? {
        let start = state.withLock { state -> Bool? in
            if state.wanted[camera] == nil && state.wanted.count >= Self.cameraLimit { return nil }
            state.wanted[camera] = now
            defer { state.running = true }
            return !state.running
        }
        guard let start else { return nil }
        if start {
            let thread = Thread { [self] in self.serve() }
            thread.name = "live-views"
            thread.start()
        }
        return state.withLock { state in
            View(picture: state.pictures[camera]?.last, problem: state.problems[camera] ?? state.connectionProblem)
        }
    }

    /// The picture of `frame` when it is still kept (nil: the newest), of a watched camera.
    func jpeg(_ camera: Camera, frame: Int?) -> [UInt8]? {
        state.withLock { state in
            guard state.wanted[camera] != nil, let kept = state.pictures[camera] else { return nil }
            guard let frame else { return kept.last?.jpeg }
            return kept.last { $0.frame == frame }?.jpeg
        }
    }

    /// The NATS side: subscriptions, leases, the latest pictures; runs while any camera is watched.
    private func serve() {
        var connection: NATSConnection?
        var subscriptions: [Camera: NATSSubscription] = [:]
        var leased: [Camera: ContinuousClock.Instant] = [:]
        let clock = ContinuousClock()
        while true {
            let now = Date()
            let wanted = state.withLock { state -> [Camera] in
                for (camera, asked) in state.wanted where now.timeIntervalSince(asked) > idle.seconds {
                    state.wanted[camera] = nil
                    state.pictures[camera] = nil
                    state.problems[camera] = nil
                }
                if state.wanted.isEmpty { state.running = false }
                return Array(state.wanted.keys)
            }
            for camera in subscriptions.keys where !wanted.contains(camera) {
                subscriptions[camera] = nil
                leased[camera] = nil
            }
            if wanted.isEmpty { return }
            if connection == nil {
                do {
                    connection = try connect()
                    state.withLock { $0.connectionProblem = nil }
                } catch {
                    state.withLock { $0.connectionProblem = "the bus is not reachable: \(error)" }
                    Thread.sleep(forTimeInterval: 1)
                    continue
                }
            }
            guard let connection else { continue }
            for camera in wanted {
                if subscriptions[camera] == nil {
                    subscriptions[camera] = try? connection.subscribe(
                        subject: subjects.agent(.preview, site: camera.site, camera: camera.id))
                }
                if let subscription = subscriptions[camera] { take(subscription, for: camera) }
                if leased[camera].map({ clock.now - $0 >= renewEvery }) ?? true {
                    leased[camera] = clock.now
                    renew(camera, on: connection)
                }
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// The newest preview waiting on the subscription, checked and kept.
    private func take(_ subscription: NATSSubscription, for camera: Camera) {
        var newest: NATSMessage?
        while let message = try? subscription.next(timeoutMilliseconds: 1) { newest = message }
        guard let newest else { return }
        keep(Self.picture(newest.bytes), for: camera)
    }

    /// A preview taken off the bus: kept among the camera's recent pictures, or its problem noted.
    func keep(_ picture: Result<Picture, Problem>, for camera: Camera) {
        state.withLock { state in
            switch picture {
            case .success(let picture):
                state.pictures[camera, default: []].append(picture)
                if let count = state.pictures[camera]?.count, count > Self.recentPictures {
                    state.pictures[camera]?.removeFirst(count - Self.recentPictures)
                }
                state.problems[camera] = nil
            case .failure(let problem):
                state.problems[camera] = problem.text
            }
        }
    }

    struct Problem: Error {
        var text: String
    }

    /// A preview message as the agent sends it: a JSON object with a JPEG in `jpeg` (base64).
    static func picture(_ bytes: [UInt8], received: Date = Date()) -> Result<Picture, Problem> {
        guard bytes.count <= pictureLimit * 2, case .object(let members)? = try? JSONValue.parse(bytes, maxDepth: 8)
        else { return .failure(Problem(text: "the camera sent a preview that is not a JSON object")) }
        guard let text = members.first(where: { $0.0 == "jpeg" })?.1.stringValue, let jpeg = Base64.decode(text),
            jpeg.count <= pictureLimit, jpeg.starts(with: [0xFF, 0xD8, 0xFF])
        else { return .failure(Problem(text: "the camera sent a preview without a JPEG picture")) }
        return .success(Picture(jpeg: jpeg, fields: members.filter { $0.0 != "jpeg" }, received: received))
    }

    /// One lease request; what the agent answers (or that none does) is kept for the page.
    private func renew(_ camera: Camera, on connection: NATSConnection) {
        var body = JSONWriter()
        body.field("seconds", lease.seconds)
        body.field("maxWidth", lease.maxWidth)
        body.field("rate", lease.rate)
        let problem: String?
        do {
            let subject = try subjects.command(site: camera.site, camera: camera.id, verb: "preview")
            let reply = try connection.request(subject: subject, bytes: body.finished(), timeoutMilliseconds: 1000)
            let parsed = try? JSONValue.parse(reply.bytes)
            problem =
                parsed?["ok"] == .bool(true)
                ? nil
                : "the agent refused: \(parsed?["error"]?.stringValue ?? "(not JSON, \(reply.bytes.count) bytes)")"
        } catch {
            problem = "no agent answers for camera \(camera.id) of site \(camera.site): \(error)"
        }
        state.withLock { $0.problems[camera] = problem }
    }
}
