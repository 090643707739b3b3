import Metrics
import ScanCore
import ScanEvents

/// The agent's metrics (swift-metrics; Prometheus names in docs/metrics.md), labelled with the
/// camera and site. Counters advance at each heartbeat (frames) or as events are made
/// (sightings, no-reads); without a metrics backend bootstrapped they cost nothing.
public struct AgentMetrics: Sendable {
    let framesReceived: Counter
    let framesDecoded: Counter
    let framesDropped: Counter
    let incompleteFrames: Counter
    let reconnects: Counter
    /// 1 while the camera streams, 0 while it is starting, reconnecting or ended.
    let sourceStreaming: Gauge
    let decode: Timer
    let accepted: Counter
    let rejected: Counter
    let noReads: Counter
    /// Pictures kept in the images bucket, and their bytes of JPEG.
    let imagesKept: Counter
    let imageBytes: Counter
    let liveTracks: Gauge
    let spoolEvents: Gauge
    let spoolBytes: Gauge
    let spoolDropped: Counter
    let natsConnected: Gauge
    /// `scantrack_agent_nats_link{state}`: 1 for the state now, 0 for the others.
    let natsLink: [(state: String, gauge: Gauge)]
    let paused: Gauge
    let publish: Timer
    /// From the capture of the frame an event was made on (its `time`) to JetStream's acknowledgement.
    let captureToPublish: Timer
    let labels: [(String, String)]

    public init(camera: CameraIdentity) {
        let labels = [("site", camera.site), ("camera", camera.id)]
        self.labels = labels
        framesReceived = Counter(label: "scantrack_agent_frames_received_total", dimensions: labels)
        framesDecoded = Counter(label: "scantrack_agent_frames_decoded_total", dimensions: labels)
        framesDropped = Counter(label: "scantrack_agent_frames_dropped_total", dimensions: labels)
        incompleteFrames = Counter(label: "scantrack_agent_source_incomplete_frames_total", dimensions: labels)
        reconnects = Counter(label: "scantrack_agent_source_reconnects_total", dimensions: labels)
        sourceStreaming = Gauge(label: "scantrack_agent_source_streaming", dimensions: labels)
        decode = Timer(label: "scantrack_agent_decode_seconds", dimensions: labels, preferredDisplayUnit: .seconds)
        accepted = Counter(
            label: "scantrack_agent_sightings_total",
            dimensions: labels + [("status", SightingStatus.accepted.rawValue)])
        rejected = Counter(
            label: "scantrack_agent_sightings_total",
            dimensions: labels + [("status", SightingStatus.rejected.rawValue)])
        noReads = Counter(label: "scantrack_agent_noreads_total", dimensions: labels)
        imagesKept = Counter(label: "scantrack_agent_images_kept_total", dimensions: labels)
        imageBytes = Counter(label: "scantrack_agent_image_bytes_total", dimensions: labels)
        liveTracks = Gauge(label: "scantrack_agent_live_tracks", dimensions: labels)
        spoolEvents = Gauge(label: "scantrack_agent_spool_events", dimensions: labels)
        spoolBytes = Gauge(label: "scantrack_agent_spool_bytes", dimensions: labels)
        spoolDropped = Counter(label: "scantrack_agent_spool_dropped_events_total", dimensions: labels)
        natsConnected = Gauge(label: "scantrack_agent_nats_connected", dimensions: labels)
        natsLink = LinkState.allCases.map {
            ($0.rawValue, Gauge(label: "scantrack_agent_nats_link", dimensions: labels + [("state", $0.rawValue)]))
        }
        paused = Gauge(label: "scantrack_agent_paused", dimensions: labels)
        publish = Timer(label: "scantrack_agent_publish_seconds", dimensions: labels, preferredDisplayUnit: .seconds)
        captureToPublish = Timer(
            label: "scantrack_agent_capture_to_publish_seconds", dimensions: labels, preferredDisplayUnit: .seconds)
    }

    /// One event acknowledged at `acknowledged`: the time since its frame's capture (`time` in its
    /// JSON; none for a payload without one). 0 when the event's time is later (a clip whose
    /// `startAt` lies ahead).
    func published(_ payload: [UInt8], acknowledged: Timestamp) {
        guard let time = Self.envelopeTime(payload) else { return }
        captureToPublish.recordNanoseconds(max(0, acknowledged.milliseconds - time.milliseconds) * 1_000_000)
    }

    static let timeKey = Array(#""time":""#.utf8)

    /// The `time` of an event the agent wrote, found without parsing it: its envelope writes
    /// `"time":"<RFC 3339>"` among its first fields (an escaped quote inside a string cannot look
    /// like it). Nil when it is not there.
    static func envelopeTime(_ payload: [UInt8]) -> Timestamp? {
        let head = payload.prefix(512)
        guard head.count > timeKey.count else { return nil }
        for start in head.startIndex...(head.endIndex - timeKey.count) where head[start] == UInt8(ascii: "\"") {
            guard head[start..<start + timeKey.count].elementsEqual(timeKey) else { continue }
            let valueStart = start + timeKey.count
            guard let end = payload[valueStart...].prefix(40).firstIndex(of: UInt8(ascii: "\"")) else { return nil }
            return Timestamp(rfc3339: String(decoding: payload[valueStart..<end], as: UTF8.self))
        }
        return nil
    }

    /// `scantrack_agent_decisions_total{site, camera, action, late}`: one decision sent.
    func decision(_ decision: DecisionEvent) {
        Counter(
            label: "scantrack_agent_decisions_total",
            dimensions: labels + [("action", decision.action.rawValue), ("late", decision.late ? "true" : "false")]
        ).increment()
    }

    func sighting(status: SightingStatus?) {
        (status == .rejected ? rejected : accepted).increment()
    }

    /// A heartbeat's status: counters by what changed since the last one (`previous`), gauges
    /// as they are, and every decode latency of the window.
    func heartbeat(_ status: AgentStatus, previous: AgentStatus?, latencies: [Double]) {
        framesReceived.increment(by: max(0, status.framesIn - (previous?.framesIn ?? 0)))
        framesDecoded.increment(by: max(0, status.framesProcessed - (previous?.framesProcessed ?? 0)))
        framesDropped.increment(by: max(0, status.framesDropped - (previous?.framesDropped ?? 0)))
        incompleteFrames.increment(
            by: max(0, status.sourceIncompleteFrames - (previous?.sourceIncompleteFrames ?? 0)))
        reconnects.increment(by: max(0, status.sourceReconnects - (previous?.sourceReconnects ?? 0)))
        for seconds in latencies { decode.recordSeconds(seconds) }
        liveTracks.record(status.liveTracks)
        spoolEvents.record(status.spoolDepth)
        spoolBytes.record(status.spoolBytes)
        spoolDropped.increment(by: max(0, status.spoolDropped - (previous?.spoolDropped ?? 0)))
        natsConnected.record(status.nats == LinkState.connected.rawValue ? 1 : 0)
        for link in natsLink { link.gauge.record(status.nats == link.state ? 1 : 0) }
        paused.record(status.paused ? 1 : 0)
        sourceStreaming.record(status.sourceState == SourceStatus.streaming.rawValue ? 1 : 0)
    }
}
