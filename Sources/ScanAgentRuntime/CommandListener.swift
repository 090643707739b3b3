import Logging
import ScanCore
import ScanServices
import ScanAgentConfig
import ScanEvents
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
        listen(for: "commands", stop: stop, clock: clock, logger: logger, next: feed.next) { incoming in
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

/// A listening service's loop: takes what `next` gives (nil: nothing within its wait) until
/// `stop`; while `next` fails (no server yet, a subscription denied) it retries with the
/// shared backoff and logs once per outage what it cannot listen for.
func listen<Item>(
    for what: String, stop: StopToken, clock: any AgentClock, logger: Logger,
    next: (Duration) throws -> Item?, handle: (Item) -> Void
) {
    var retry = RetryLog("cannot listen for \(what) yet; retrying", logger: logger)
    while !stop.isStopped {
        let item: Item?
        do {
            item = try next(.milliseconds(250))
            retry.succeeded("listening for \(what)")
        } catch {
            retry.failedAndWait(error, stop: stop, sleeper: clock)
            continue
        }
        if let item { handle(item) }
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
                metadata: ["revision": .stringConvertible(revision), LogKey.error: "\(error.description)"])
            board.update { $0.rulesError = "revision \(revision): \(error.description)" }
        }
    }
}

/// The belt service's loop (`decision.beltFromBus`): each reading on the lane's belt subject is
/// checked and posted to the decoding thread with the time it arrived; one that breaks the
/// contract or names another site or lane is dropped, with a warning at most once a minute.
public struct BeltListener: Sendable {
    let feed: any BeltFeed
    let inbox: Inbox
    let camera: CameraIdentity
    let clock: any AgentClock
    let logger: Logger

    public init(feed: any BeltFeed, inbox: Inbox, camera: CameraIdentity, clock: any AgentClock, logger: Logger) {
        self.feed = feed
        self.inbox = inbox
        self.camera = camera
        self.clock = clock
        self.logger = logger
    }

    public func run(stop: StopToken) {
        var warned: Duration?
        var dropped = 0
        listen(for: "the belt speed", stop: stop, clock: clock, logger: logger, next: feed.nextReading) { bytes in
            do throws(DeadLetter) {
                let reading = try BeltReading.parse(bytes)
                guard reading.site == camera.site, reading.lane == camera.lane else {
                    throw DeadLetter(.subjectMismatch, "names site '\(reading.site)' and lane '\(reading.lane)'")
                }
                inbox.post(belt: reading, arrived: clock.now)
            } catch {
                dropped += 1
                if warned.map({ clock.elapsed - $0 >= .seconds(60) }) ?? true {
                    warned = clock.elapsed
                    logger.warning(
                        "belt reading dropped",
                        metadata: [LogKey.error: "\(error.detail)", "dropped": .stringConvertible(dropped)])
                }
            }
        }
    }
}
