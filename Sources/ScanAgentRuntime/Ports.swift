import Foundation
import ScanCore
import ScanServices
import ScanAgentConfig
import ScanEvents
import ScanPipeline
import ScanVision

// The seams between the agent's runtime and the world. The runtime (AgentLoop and the services
// in AgentServices) sees only these; ScanAgent plugs in V4L2, clips, zbar, the file spool and
// NATS, and ScanTesting plugs in fakes, so that pause/resume, rules swaps, session timers,
// spool draining and shutdown order are tested in-process with a manual clock.

/// Where frames come from: a camera or a recorded clip.
public protocol FrameSource: AnyObject, Sendable {
    /// What it is (`clip`: event times come from the frames, not the wall clock).
    var kind: SourceConfig.Kind { get }
    var state: SourceStatus { get }
    /// True when the queue should make the source wait rather than drop frames (a clip replayed
    /// as fast as decoding goes).
    var blocking: Bool { get }
    /// Runs on a thread of its own: puts frames into `queue` until `stop` or the end of the
    /// stream, and finishes the queue at the end of the stream (not on `stop`).
    func capture(into queue: FrameQueue, stop: StopToken)
    /// What the heartbeat says of the source beyond its state: frames it received incomplete,
    /// reconnects, the controls the camera took. Read from the heartbeat's thread.
    var health: SourceHealth { get }
    /// Applies new controls while streaming (the `set-controls` command); called from the
    /// decoding thread, it waits for the capture thread to apply them.
    func setControls(_ controls: CameraControls) -> Result<[AgentStatus.SourceControl], CommandError>
    /// Fires the camera's software trigger (the `trigger` command): one frame.
    func trigger() -> Result<Void, CommandError>
}

/// A source's counters and settings as the heartbeat reports them.
public struct SourceHealth: Sendable, Equatable {
    public var incompleteFrames = 0
    public var reconnects = 0
    public var controls: [AgentStatus.SourceControl] = []
    /// Why the camera is not streaming now (its last error); nil while it streams.
    public var error: String?
    public init(
        incompleteFrames: Int = 0, reconnects: Int = 0, controls: [AgentStatus.SourceControl] = [],
        error: String? = nil
    ) {
        self.incompleteFrames = incompleteFrames
        self.reconnects = reconnects
        self.controls = controls
        self.error = error
    }
}

extension FrameSource {
    /// Sources without counters of their own (clips, V4L2 for now, tests' fakes).
    public var health: SourceHealth { SourceHealth() }

    /// Applies `controls` to the camera while it streams and returns what it took, or why not.
    public func setControls(_ controls: CameraControls) -> Result<[AgentStatus.SourceControl], CommandError> {
        .failure(
            CommandError(verb: "set-controls", message: "the \(kind.rawValue) source takes no controls at run time"))
    }

    public func trigger() -> Result<Void, CommandError> {
        .failure(CommandError(verb: "trigger", message: "the \(kind.rawValue) source has no software trigger"))
    }
}

/// Encodes a preview picture (`snapshot`): JPEG in the agent. Called on the decoding thread,
/// only when someone asks for one.
public protocol PreviewEncoder: Sendable {
    func jpeg(_ image: RGBImage) throws -> [UInt8]
}

/// Turns one frame into detections. Used by the decoding thread only.
public protocol FrameDecoding: AnyObject {
    /// The frame's detections; `expected`: the live tracks and where the tracker predicts them.
    func decode(_ frame: GrayImage, expected: [DecodePlanner.TrackedCode]) throws -> [Detection]
    /// The code-like regions the last `decode` found, decoded or not (no-reads); nil when it
    /// did not look.
    var located: LocatedRegions? { get }
    /// What decoding cost since the last call (the heartbeat's window); starts a new window.
    func takeWindow() -> DecodingWindow
    /// What decoding cost over the whole run, in a line (the agent's last log line).
    var summary: String { get }
}

/// Keeps no-read pictures: encodes each as PNG and writes it where an operator finds it.
public protocol NoReadImages: AnyObject {
    /// The PNG bytes of `picture`, and the file name it was kept under (nil when writing failed).
    func keep(_ picture: GrayImage, name: String) throws -> (png: [UInt8], file: String?)
}

/// Decoding cost over one heartbeat window.
public struct DecodingWindow: Sendable, Equatable {
    /// Seconds per decoded frame.
    public var latencies: [Double] = []
    /// Share of the frame each kind of region scanned.
    public var scanned: [AgentStatus.ScannedShare] = []
    public var mode: String = "guided"
    public var threads: Int = 1

    public init(
        latencies: [Double] = [], scanned: [AgentStatus.ScannedShare] = [], mode: String = "guided", threads: Int = 1
    ) {
        self.latencies = latencies
        self.scanned = scanned
        self.mode = mode
        self.threads = threads
    }
}

/// Durable events wait here, in order, until JetStream acknowledges them (the file `Spool`).
/// The decoding thread appends; the publisher reads, acknowledges and saves its cursor.
public protocol DurableSink: AnyObject, Sendable {
    /// Appends one event; false when the size limit made it the one dropped.
    @discardableResult func append(subject: String, eventId: String, payload: [UInt8]) -> Bool
    /// Events not yet acknowledged.
    var depth: Int { get }
    /// Bytes of events not yet acknowledged.
    var pendingBytes: Int { get }
    /// Events lost to the size limit since the start.
    var dropped: Int { get }
    /// Up to `limit` records from the cursor on, oldest first.
    func next(limit: Int) -> [SpoolRecord]
    /// Moves the cursor past `record`.
    func acknowledge(_ record: SpoolRecord)
    /// Makes the cursor durable.
    func saveCursor()
    /// Waits until something is pending or `duration` passed.
    func waitForRecords(for duration: Duration)
    /// Wakes a waiting reader (shutdown).
    func wake()
}

/// The agent's live publisher: JetStream for durable events (deduplicated by message id), core
/// NATS for the rest.
public protocol EventBus: AnyObject, Sendable {
    /// True while connected to a server.
    var isConnected: Bool { get }
    /// Where it publishes, without credentials (for logs).
    var address: String { get }
    /// Core NATS, no acknowledgement: track events and heartbeats.
    func publishCore(subject: String, bytes: [UInt8]) throws
    /// Creates or checks the stream the durable events go to.
    func prepareStream() throws
    /// Publishes one durable event and waits for the acknowledgement; true when the server
    /// had it already (a duplicate by message id). `trace`: sent as its `traceparent` header
    /// (nil: none, a picture's chunk).
    func publishDurable(subject: String, bytes: [UInt8], messageID: String, trace: TraceContext?) throws -> Bool
    /// Sends what is buffered (at shutdown), waiting at most `timeout`.
    func flush(timeout: Duration)
}

/// A request for the agent, with the way to answer it.
public struct IncomingCommand: Sendable {
    public var subject: String
    public var verb: String
    public var body: [UInt8]
    public var reply: @Sendable ([UInt8]) -> Void

    public init(subject: String, verb: String, body: [UInt8], reply: @escaping @Sendable ([UInt8]) -> Void) {
        self.subject = subject
        self.verb = verb
        self.body = body
        self.reply = reply
    }
}

/// Where commands come from (request/reply on the agent's command subjects).
public protocol CommandFeed: AnyObject, Sendable {
    /// The next command, or nil when none came within `timeout`; throws while the feed cannot
    /// listen (no server yet).
    func next(timeout: Duration) throws -> IncomingCommand?
}

/// Where the belt's speed comes from (`<prefix>.v1.belt.<site>.<lane>`, the camera's lane).
public protocol BeltFeed: AnyObject, Sendable {
    /// The next reading's bytes, or nil when none came within `timeout`; throws while the feed
    /// cannot listen (no server yet, or the subscription denied).
    func nextReading(timeout: Duration) throws -> [UInt8]?
}

/// One ruleset as published for the fleet.
public struct PublishedRules: Sendable, Equatable {
    public var bytes: [UInt8]
    public var revision: UInt64
    public init(bytes: [UInt8], revision: UInt64) {
        self.bytes = bytes
        self.revision = revision
    }
}

/// Where the fleet's ruleset comes from (the rules bucket).
public protocol RulesFeed: AnyObject, Sendable {
    /// The current ruleset, nil when none is published (or it was deleted); throws while the
    /// feed cannot be read.
    func current() throws -> PublishedRules?
}

/// Time as the agent's runtime sees it (`ServiceClock`, shared with the aggregator's runtime).
public typealias AgentClock = ServiceClock
