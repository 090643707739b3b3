import Logging
import ScanCore
import ScanServices
import ScanAgentConfig
import ScanRules

/// The command service's loop: parses each request, answers a bad one at once (naming what is
/// wrong), and posts a good one to the decoding thread, which applies it between two frames
/// and answers it.
public struct CommandListener: Sendable {
    let feed: any CommandFeed
    let inbox: Inbox
    let camera: CameraIdentity
    let clock: any AgentClock
    let logger: Logger

    public init(feed: any CommandFeed, inbox: Inbox, camera: CameraIdentity, clock: any AgentClock, logger: Logger) {
        self.feed = feed
        self.inbox = inbox
        self.camera = camera
        self.clock = clock
        self.logger = logger
    }

    public func run(stop: StopToken) {
        var retry = RetryLog("cannot listen for commands yet; retrying", logger: logger)
        while !stop.isStopped {
            let incoming: IncomingCommand?
            do {
                incoming = try feed.next(timeout: .milliseconds(250))
                retry.succeeded("listening for commands")
            } catch {
                retry.failedAndWait(error, stop: stop, sleeper: clock)
                continue
            }
            guard let incoming else { continue }
            switch AgentCommand.parse(verb: incoming.verb, body: incoming.body) {
            case .failure(let error):
                logger.warning(
                    "bad command", metadata: ["subject": "\(incoming.subject)", LogKey.error: "\(error.message)"])
                incoming.reply(error.reply(camera: camera))
            case .success(let command):
                inbox.post(command, reply: incoming.reply)
            }
        }
    }
}

/// The rules service's loop: polls the rules feed every `interval` (a watch would be an ordered
/// consumer to rebuild after every reconnect; one read at this rate costs nothing and cannot
/// fall behind). A new revision that parses is cached beside the spool and posted to the
/// decoding thread; one that does not is refused, the running ruleset stays, and the status
/// says why.
public struct RulesWatcher: Sendable {
    let feed: any RulesFeed
    let inbox: Inbox
    let board: StatusBoard
    let cache: RuleCache?
    let origin: String
    let clock: any AgentClock
    let interval: Duration
    let logger: Logger

    /// `origin` names the feed in errors (`<bucket>/<key>`).
    public init(
        feed: any RulesFeed, inbox: Inbox, board: StatusBoard, cache: RuleCache?, origin: String, clock: any AgentClock,
        interval: Duration = .seconds(2), logger: Logger
    ) {
        self.feed = feed
        self.inbox = inbox
        self.board = board
        self.cache = cache
        self.origin = origin
        self.clock = clock
        self.interval = interval
        self.logger = logger
    }

    public func run(stop: StopToken) {
        var seen: UInt64 = cache?.revision ?? 0
        // Paced by `interval` whatever happens: the policy only sets how often a failure is logged.
        var retry = RetryLog(
            "cannot read the rules bucket", logger: logger,
            policy: RetryPolicy(first: interval, limit: interval, jitter: 0, logEvery: 1_000))
        while !stop.isStopped {
            do {
                if let rules = try feed.current(), rules.revision != seen {
                    seen = rules.revision
                    apply(rules)
                }
                retry.succeeded("rules bucket readable again")
            } catch {
                retry.failed(error)
            }
            clock.sleep(for: interval, stop: stop)
        }
    }

    /// Checks one published ruleset and hands it over, or refuses it.
    public func apply(_ rules: PublishedRules) {
        let revision = String(rules.revision)
        do {
            let ruleset = try Ruleset.parse(rules.bytes, file: origin, revision: revision)
            cache?.save(rules.bytes, revision: rules.revision)
            inbox.post(ruleset: ruleset, source: "bucket")
            board.update { $0.rulesError = nil }
        } catch {
            // Keep running the last good ruleset, and say why the new one was refused.
            logger.error(
                "ruleset refused; keeping the running one",
                metadata: ["revision": "\(revision)", LogKey.error: "\(error.description)"])
            board.update { $0.rulesError = "revision \(revision): \(error.description)" }
        }
    }
}
