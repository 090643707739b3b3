import Foundation
import ScanCore
import ScanNATS
import ScanTestSupport
import Testing
import ScanEvents

/// What the camera tests (GigE Vision, RTSP) share: the test's own bus, the sightings an agent
/// published, its heartbeats, the replay of the clip it was shown, stopping a process.
enum CameraHarness {
    typealias H = AgentRunHarness

    /// A subject prefix of the test's own on the bus, its JetStream (the caller deletes the
    /// agents' stream), and a subscription to cam-01's heartbeats.
    static func bus(_ natsURL: String) throws -> (prefix: String, jetStream: JetStream, heartbeats: NATSSubscription) {
        let prefix = TestEnvironment.uniqueName("st")
        let connection = try NATSConnection(url: natsURL)
        let heartbeats = try connection.subscribe(subject: "\(prefix).v1.status.dc1.cam-01")
        try connection.flush()
        return (prefix, try connection.jetStream(), heartbeats)
    }

    /// The values of the sightings in the agents' stream under `prefix`, sorted, and their event ids.
    static func sightings(_ jetStream: JetStream, prefix: String) throws -> (values: [String], ids: [String]) {
        let events = try H.streamEvents(jetStream, prefix: prefix).filter {
            $0.event["type"]?.stringValue == "sighting"
        }
        return (
            events.compactMap { $0.event["value"]?.stringValue }.sorted(),
            events.compactMap { $0.event["eventId"]?.stringValue }
        )
    }

    /// Every heartbeat waiting on `subscription`, parsed.
    static func heartbeats(_ subscription: NATSSubscription) throws -> [AgentStatus] {
        var statuses: [AgentStatus] = []
        while let message = try subscription.next(timeoutMilliseconds: 100) {
            statuses.append(try StatusEvent.parse(try JSONValue.parse(message.bytes)).status)
        }
        return statuses
    }

    /// Heartbeats read from `subscription` (added to `statuses`) until one counts at least `frames`
    /// frames in, whole or incomplete, or `seconds` pass: a wait on what the camera delivered, not on
    /// the clock (a loaded machine starts the agent and opens the camera late). True once reached.
    @discardableResult
    static func waitForFrames(
        _ subscription: NATSSubscription, atLeast frames: Int, into statuses: inout [AgentStatus],
        seconds: Double = 120
    ) throws -> Bool {
        var collected = statuses
        defer { statuses = collected }
        return try H.eventually(seconds: seconds) {
            collected += try heartbeats(subscription)
            return collected.contains { $0.framesIn + $0.sourceIncompleteFrames >= frames }
        }
    }

    /// Collects heartbeats until one says the source is in `state` (`reconnecting`, `streaming`, …)
    /// or `seconds` pass.
    static func waitForState(
        _ subscription: NATSSubscription, _ state: String, into statuses: inout [AgentStatus], seconds: Double = 120
    ) throws -> Bool {
        var collected = statuses
        defer { statuses = collected }
        let start = collected.count
        return try H.eventually(seconds: seconds) {
            collected += try heartbeats(subscription)
            return collected[start...].contains { $0.sourceState == state }
        }
    }

    /// The replay's sighting values of `clip`, sorted.
    static func replayValues(_ clip: String) throws -> [String] {
        try H.offline(clip).sightings.map { String($0.split(separator: "@")[0]) }.sorted()
    }

    /// SIGTERM, then SIGKILL if it has not ended within the bound.
    static func stop(_ process: Process) {
        process.terminate()
        if !Polling.until(seconds: 120, { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
