import Logging
import ScanCore
import ScanServices
import ServiceLifecycle
import ScanRules

/// The agent's parts, as plugged together by `scan-agent run` (real adapters) or a test (fakes).
public struct AgentParts: Sendable {
    public var source: any FrameSource
    public var sink: any DurableSink
    public var bus: any EventBus
    public var commands: any CommandFeed
    public var rules: any RulesFeed
    public var clock: any AgentClock
    /// Where a good published ruleset is cached (beside the spool); nil: not cached.
    public var ruleCache: RuleCache?
    /// The lane's belt speed (`decision.beltFromBus`); nil: not listened to.
    public var belt: (any BeltFeed)?
    /// Encodes `snapshot` pictures; nil: the agent answers that it makes none.
    public var previews: (any PreviewEncoder)?
    /// Encodes the pictures `images.keep` keeps in the images bucket; nil: none kept.
    public var imageEncoder: (any ImageEncoder)?

    public init(
        source: any FrameSource, sink: any DurableSink, bus: any EventBus, commands: any CommandFeed,
        rules: any RulesFeed,
        clock: any AgentClock, ruleCache: RuleCache?
    ) {
        self.source = source
        self.sink = sink
        self.bus = bus
        self.commands = commands
        self.rules = rules
        self.clock = clock
        self.ruleCache = ruleCache
    }
}

/// One agent as services for one `ServiceGroup`. Listed in start order; the group stops them in
/// reverse: capture first (no new frames), then decoding (ends the open tracks and the session,
/// their events into the spool, a last heartbeat), then rules and commands, and the publisher
/// last, so that it drains what decoding wrote at the end. At the end of a clip, decoding ends
/// on its own and shuts the group down in the same order.
public final class AgentServices: Sendable {
    public let loop: AgentLoop
    public let queue: FrameQueue
    public let delivery: DeliveryState
    public let parts: AgentParts
    public let rulesOrigin: String
    let drain: Duration
    let logger: Logger

    /// `decoder` and `images` are used by the decoding thread only.
    public init(
        settings: AgentLoop.Settings, ruleset: Ruleset, parts: AgentParts, decoder: any FrameDecoding,
        images: (any NoReadImages)? = nil, checkpoint: ClipCheckpoint?, drain: Duration, logger: Logger
    ) {
        let queue = FrameQueue(capacity: settings.config.source.queueFrames, blocking: parts.source.blocking)
        let delivery = DeliveryState()
        self.queue = queue
        self.delivery = delivery
        self.parts = parts
        self.drain = drain
        self.logger = logger
        let subjects = ContractSubjects(prefix: settings.config.nats.prefix)
        self.rulesOrigin = "\(subjects.rulesBucket)/\(ContractSubjects.rulesKey)"
        self.loop = AgentLoop(
            settings: settings, ruleset: ruleset, source: parts.source, queue: queue, decoder: decoder,
            sink: parts.sink,
            bus: parts.bus, delivery: delivery, clock: parts.clock, checkpoint: checkpoint, images: images,
            previews: parts.previews, imageEncoder: parts.imageEncoder, logger: logger)
    }

    /// The services, in start order, with what ending on their own means.
    public var services: [ServiceGroupConfiguration.ServiceConfiguration] {
        let (loop, queue, source) = (self.loop, self.queue, parts.source)
        let publisher = SpoolPublisher(
            sink: parts.sink, bus: parts.bus, delivery: delivery, clock: parts.clock, drain: drain, logger: logger,
            metrics: loop.metrics, decisions: loop.decisionSubject, subjects: loop.publishedSubjects,
            subjectPrefixes: loop.publishedPrefixes,
            afterDrain: { [loop] in loop.close() })
        let commands = CommandListener(
            feed: parts.commands, inbox: loop.inbox, camera: loop.config.camera, clock: parts.clock, logger: logger)
        let rules = RulesWatcher(
            feed: parts.rules, inbox: loop.inbox, board: loop.board, cache: parts.ruleCache, origin: rulesOrigin,
            clock: parts.clock, logger: logger)
        var listeners: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: ThreadService("publisher", body: publisher.run), serviceName: "publisher"),
            .init(service: ThreadService("commands", body: commands.run), serviceName: "commands"),
            .init(service: ThreadService("rules", body: rules.run), serviceName: "rules"),
        ]
        if let feed = parts.belt, loop.config.decision.enabled, loop.config.decision.beltFromBus {
            let belt = BeltListener(
                feed: feed, inbox: loop.inbox, camera: loop.config.camera, clock: parts.clock, logger: logger)
            listeners.append(.init(service: ThreadService("belt", body: belt.run), serviceName: "belt"))
        }
        return listeners + [
            // The end of the stream ends decoding, and decoding's end shuts the agent down.
            .init(
                service: ThreadService("decoding", body: loop.run),
                successTerminationBehavior: .gracefullyShutdownGroup,
                serviceName: "decoding"),
            .init(
                service: ThreadService("capture") { stop in
                    stop.whenStopped { queue.stopProducing() }
                    source.capture(into: queue, stop: stop)
                },
                successTerminationBehavior: .ignore, serviceName: "capture"),
        ]
    }

    /// A group of these services; a program's stops on SIGTERM and SIGINT, a test's on no signal.
    public func group(stopsOnSignals: Bool) -> ServiceGroup {
        programGroup(services, stopsOnSignals: stopsOnSignals, logger: logger)
    }
}
