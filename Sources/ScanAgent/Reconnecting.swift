import Foundation
import Logging
import ScanAgentRuntime
import ScanCore
import ScanServices
import Synchronization
import ScanAgentConfig
import ScanEvents

/// The loop a camera source runs until the agent stops: open the camera, stream from it until it
/// fails, open it again. While it is missing or failing the state is `reconnecting` (the
/// heartbeat's gap), each new error is logged once and the next try waits with a backoff
/// (RetryPolicy.backoff: 0.25 s doubling to 2 s, with jitter); every connection after the first counts as a reconnect
/// and is logged ("camera back").
struct Reconnecting<Connection> {
    let state: SourceState
    let counters: SourceCounters
    let logger: Logger

    /// `stream` returns why the stream ended (nil: a stop or a planned restart).
    func run(stop: StopToken, open: () throws -> Connection, stream: (Connection, _ number: Int) -> String?) {
        var retry = RetryLog("camera unavailable; retrying with backoff", logger: logger)
        var connections = 0
        while !stop.isStopped {
            let connection: Connection
            do {
                connection = try open()
                retry.succeeded("camera opened again")
            } catch {
                if stop.isStopped { break }  // the open was cut short by the shutdown: nothing to report
                state.set(.reconnecting)
                counters.error.withLock { $0 = "\(error)" }
                retry.failedAndWait(error, stop: stop)
                continue
            }
            connections += 1
            if connections > 1 {
                counters.reconnects.withLock { $0 += 1 }
                logger.info("camera back", metadata: ["reconnects": "\(connections - 1)"])
            }
            state.set(.streaming)
            counters.error.withLock { $0 = nil }
            let ended = stream(connection, connections)
            state.set(.reconnecting)
            counters.error.withLock { $0 = ended }
        }
    }
}

/// What a camera source counts for the heartbeat, over every connection.
final class SourceCounters: Sendable {
    /// Frames that arrived incomplete or damaged, never decoded.
    let incomplete = Mutex(0)
    let reconnects = Mutex(0)
    /// The controls the camera took, as last read back.
    let controls = Mutex<[AgentStatus.SourceControl]>([])
    /// Why the camera is not streaming now.
    let error = Mutex<String?>(nil)

    var health: SourceHealth {
        SourceHealth(
            incompleteFrames: incomplete.withLock { $0 }, reconnects: reconnects.withLock { $0 },
            controls: controls.withLock { $0 }, error: error.withLock { $0 })
    }
}

/// What the decoding thread asks of the camera, which only the capture thread touches.
enum CameraRequest: Sendable {
    /// `set-controls`.
    case controls(CameraControls)
    /// `trigger`: fire the software trigger.
    case trigger

    var verb: String {
        switch self {
        case .controls: "set-controls"
        case .trigger: "trigger"
        }
    }
}

/// One request at a time from the decoding thread to the capture thread, with a deadline. The
/// capture thread answers at once, or later (`answerLater`): a new region takes effect only once
/// the stream restarted with it, and the answer gives the values the camera took then.
final class ControlsMailbox: @unchecked Sendable {
    // @unchecked: every field is touched under `condition`.
    private let condition = NSCondition()
    private var request: CameraRequest?
    private var outcome: Result<[AgentStatus.SourceControl], CommandError>?
    /// The capture thread took the request and answers it later.
    private var deferred = false

    /// Posts `request` and waits (at most `seconds`) for the capture thread's answer.
    func ask(_ request: CameraRequest, seconds: Double = 3) -> Result<[AgentStatus.SourceControl], CommandError> {
        condition.lock()
        defer { condition.unlock() }
        self.request = request
        outcome = nil
        deferred = false
        let deadline = Date().addingTimeInterval(seconds)
        while outcome == nil, condition.wait(until: deadline) {}
        self.request = nil
        deferred = false
        return outcome
            ?? .failure(CommandError(verb: request.verb, message: "the camera is not streaming (reconnecting?)"))
    }

    /// The capture thread: a waiting request, answered by `answer` (nil: it is taken, and
    /// answered later by `answerLater`).
    func serve(_ answer: (CameraRequest) -> Result<[AgentStatus.SourceControl], CommandError>?) {
        condition.lock()
        defer { condition.unlock() }
        guard let controls = request, outcome == nil, !deferred else { return }
        guard let answered = answer(controls) else {
            deferred = true
            return
        }
        outcome = answered
        condition.broadcast()
    }

    /// The answer to the request `serve` took without answering; nothing when none waits (it was
    /// answered, or its asker stopped waiting).
    func answerLater(_ answer: Result<[AgentStatus.SourceControl], CommandError>) {
        condition.lock()
        defer { condition.unlock() }
        guard deferred, request != nil, outcome == nil else { return }
        deferred = false
        outcome = answer
        condition.broadcast()
    }
}

/// The controls a camera source applies at every (re)open — the config's, with what
/// `set-controls` changed — and the one way it reports what the camera took: a warning per value
/// clamped or adjusted, the values in the heartbeat (`counters`).
final class CameraControlState: Sendable {
    private let current: Mutex<CameraControls>
    let counters: SourceCounters
    let logger: Logger

    init(_ controls: CameraControls, counters: SourceCounters, logger: Logger) {
        current = Mutex(controls)
        self.counters = counters
        self.logger = logger
    }

    var controls: CameraControls { current.withLock { $0 } }

    /// Reports what the camera took; `log` writes the values too (at open: a change is logged
    /// by the command's own line).
    @discardableResult
    func report(_ taken: [ControlReading], warnings: [String], log: Bool) -> [AgentStatus.SourceControl] {
        for warning in warnings { logger.warning("control adjusted", metadata: ["control": "\(warning)"]) }
        let reported = taken.map { AgentStatus.SourceControl(name: $0.name, value: $0.value) }
        counters.controls.withLock { $0 = reported }
        if log && !taken.isEmpty {
            logger.info(
                "camera controls",
                metadata: Dictionary(
                    uniqueKeysWithValues: taken.map { ($0.name, Logger.MetadataValue.string($0.value)) }))
        }
        return reported
    }

    /// A `set-controls` change that takes effect at the next open (a region: the stream restarts
    /// with it): the merged controls become the ones applied, nothing is applied now.
    func stage(_ change: CameraControls) {
        let merged = controls.changed(by: change).merged
        current.withLock { $0 = merged }
    }

    /// A `set-controls` change on the capture thread: `apply` sets what changes now on the open
    /// camera; once it took them, the merged controls are the ones applied at every later open.
    func change(
        by change: CameraControls, apply: (CameraControls) throws -> (taken: [ControlReading], warnings: [String])
    ) -> Result<[AgentStatus.SourceControl], CommandError> {
        let (now, merged) = controls.changed(by: change)
        do {
            let (taken, warnings) = try apply(now)
            current.withLock { $0 = merged }
            return .success(report(taken, warnings: warnings, log: false))
        } catch {
            return .failure(CommandError(verb: "set-controls", message: "\(error)"))
        }
    }
}
