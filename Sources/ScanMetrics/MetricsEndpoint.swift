import Foundation
import Hummingbird
import Logging
import Metrics
import Prometheus
import ScanServices
import ServiceLifecycle

/// One check of a program's readiness (NATS connected, PostgreSQL reachable, consumer bound).
public struct HealthCheck: Sendable, Equatable {
    public var name: String
    public var ok: Bool
    public var detail: String

    public init(name: String, ok: Bool, detail: String) {
        self.name = name
        self.ok = ok
        self.detail = detail
    }
}

/// What a program's services say of their connections, as they connect and lose them.
public final class Readiness: Sendable {
    private let checks: Guarded<[String: HealthCheck]>
    private let order: [String]
    private let probe: (@Sendable () -> [HealthCheck])?

    /// `names`: the checks that must all pass, in the order they are shown; each starts failing
    /// until `set`. `probe`: checks made afresh at each request (after the named ones).
    public init(_ names: [String], probe: (@Sendable () -> [HealthCheck])? = nil) {
        order = names
        self.probe = probe
        checks = Guarded(
            Dictionary(uniqueKeysWithValues: names.map { ($0, HealthCheck(name: $0, ok: false, detail: "not yet")) }))
    }

    public func set(_ name: String, ok: Bool, detail: String = "") {
        checks.withLock {
            $0[name] = HealthCheck(name: name, ok: ok, detail: detail.isEmpty ? (ok ? "ok" : "failing") : detail)
        }
    }

    public var current: [HealthCheck] {
        checks.withLock { checks in order.compactMap { checks[$0] } } + (probe?() ?? [])
    }

    public var isReady: Bool { current.allSatisfy(\.ok) }
}

/// The process's metrics: swift-metrics backed by a Prometheus registry, bootstrapped once.
public enum ScanMetrics {
    public static let registry = PrometheusCollectorRegistry()

    private static let bootstrapped: Bool = {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets["scantrack_agent_decode_seconds"] = decodeBuckets
        MetricsSystem.bootstrap(factory)
        return true
    }()

    /// Points swift-metrics at the Prometheus registry (the first call does; later ones nothing).
    public static func bootstrap() { _ = bootstrapped }

    /// Every metric's `# HELP` text: the words of docs/metrics.md's tables (a test holds them equal).
    public static let help: [String: String] = [
        "scantrack_agent_frames_received_total": "frames the camera (or clip) delivered",
        "scantrack_agent_frames_decoded_total": "frames decoded",
        "scantrack_agent_frames_dropped_total": "frames dropped because decoding was busy (a camera does not wait)",
        "scantrack_agent_source_incomplete_frames_total":
            "camera frames that arrived incomplete (GigE Vision packets lost) and were not decoded",
        "scantrack_agent_source_reconnects_total":
            "times the camera was opened again after it went away (a cable pulled, a reboot)",
        "scantrack_agent_source_streaming":
            "1 while the camera streams, 0 while it is starting, reconnecting or ended (why: the heartbeat's source.error and the log)",
        "scantrack_agent_decode_seconds": "time to decode one frame (localiser, zbar, zxing-cpp)",
        "scantrack_agent_sightings_total": "sightings made, label status = accepted or rejected (by the rules)",
        "scantrack_agent_noreads_total": "labels seen but not decoded (no-read events)",
        "scantrack_agent_images_kept_total": "pictures of parcels and no-reads kept in the images bucket (images.keep)",
        "scantrack_agent_image_bytes_total": "bytes of JPEG of the pictures kept in the images bucket",
        "scantrack_agent_live_tracks": "codes followed in the view now",
        "scantrack_agent_spool_events": "events in the spool waiting for JetStream",
        "scantrack_agent_spool_bytes": "the spool's unsent bytes",
        "scantrack_agent_spool_dropped_events_total": "events dropped by a full spool",
        "scantrack_agent_nats_connected": "1 when connected to NATS, else 0",
        "scantrack_agent_nats_link":
            "1 for the link's state now (label state = connected, degraded: connected but JetStream does not acknowledge, or disconnected), 0 for the others",
        "scantrack_agent_paused": "1 while paused (scanadmin agent pause)",
        "scantrack_agent_publish_seconds": "one event from the spool to JetStream's acknowledgement",
        "scantrack_agent_capture_to_publish_seconds":
            "one event from the capture of the frame it was made on (its time: the camera's timestamp where the camera stamps frames) to JetStream's acknowledgement: decoding, tracking, the spool and the network together; a clip replayed faster than real time, or events sent from the spool after an outage, show as long",
        "scantrack_agent_decisions_total":
            "divert decisions sent, label action = pass or divert, late = true for one sent past its deadline (it waited in the spool)",
        "scantrack_aggregator_messages_total": "JetStream messages ingested (stored, duplicate or refused)",
        "scantrack_aggregator_events_stored_total":
            "events newly stored, label type = the family: sighting, session, noread, reading, parcel, decision or measure",
        "scantrack_aggregator_duplicates_total": "events stored before (a redelivery or an agent's resend), skipped",
        "scantrack_aggregator_dead_letters_total": "messages refused, label reason (as in dead_letters.reason)",
        "scantrack_aggregator_batch_seconds": "one batch from validation to commit",
        "scantrack_aggregator_publish_to_stored_seconds":
            "one agent event from its publish (JetStream's timestamp of storing it) to the aggregator's commit of it in PostgreSQL: the consumer's backlog and the batch together (0 when the two machines' clocks put the commit first)",
        "scantrack_aggregator_consumer_pending_messages":
            "messages in the streams it reads not yet delivered to its durable consumers (ingest lag)",
        "scantrack_aggregator_consumer_ack_pending_messages": "delivered, not yet acknowledged",
        "scantrack_aggregator_stream_bytes":
            "bytes a stream the aggregator reads holds now, label stream: the agents' stream and each camera's and lane's own (a full one refuses its senders' events)",
        "scantrack_aggregator_stream_max_bytes": "that stream's size limit in bytes, label stream (-1: none)",
        "scantrack_aggregator_reconciliation_lag_seconds":
            "age of the oldest sighting not yet reconciled into an item pass (0: none waits)",
        "scantrack_aggregator_nats_link":
            "1 for the link's state now (label state = connected or disconnected), 0 for the other",
        "scantrack_aggregator_decisions_total":
            "divert decisions published, labels site, lane, action = pass or divert, late = true for one made or sent past its deadline",
        "scantrack_build_info": "1, labelled with the program, its version and the commit it was built from",
        "scantrack_aggregator_postgres_errors_total":
            "failed attempts to store a batch (each retried; nothing is lost)",
        "scantrack_aggregator_images_described_total":
            "pictures described in the images bucket (the object's meta message), once their events were stored",
    ]

    /// A decode takes about 1.4 ms guided (hundreds for a full 4K frame): buckets that resolve it.
    static let decodeBuckets: [Duration] = [
        .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
        .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
        .milliseconds(500), .seconds(1),
    ]

    /// The registry in the Prometheus text format, each metric with its `# HELP` line, and the
    /// process's own `process_*` figures.
    public static func text() -> String {
        var exposition = withHelp(registry.emitToString())
        if !exposition.isEmpty && !exposition.hasSuffix("\n") { exposition += "\n" }
        return exposition + ProcessMetrics.text()
    }

    /// Puts `# HELP name text` before each `# TYPE name …` line whose metric has a text.
    static func withHelp(_ exposition: String) -> String {
        var lines: [Substring] = []
        for line in exposition.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("# TYPE "), let name = line.dropFirst(7).split(separator: " ").first,
                let text = help[String(name)]
            {
                lines.append("# HELP \(name) \(text)")
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    /// The HTTP service of `/metrics`, `/health/live` and `/health/ready`. `onListening` gets the
    /// bound address (the real port when 0 was asked for).
    public static func endpoint(
        host: String, port: Int, readiness: Readiness, logger: Logger,
        onListening: @escaping @Sendable (String) -> Void = { _ in }
    ) -> some Service {
        bootstrap()
        // HEAD answers as GET does, without the body (probes, `curl -I`).
        let router = Router(options: .autoGenerateHeadEndpoints)
        // Before the routes: Hummingbird applies a middleware to the routes added after it.
        if LoopbackHostCheck<BasicRequestContext>.isLoopback(host) {
            router.add(middleware: LoopbackHostCheck())
        }
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: text())))
        }
        router.get("/health/live") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain"],
                body: .init(byteBuffer: ByteBuffer(string: "live\n")))
        }
        router.get("/health/ready") { _, _ in
            let checks = readiness.current
            let text = checks.map { "\($0.name) \($0.ok ? "ok" : "failing"): \($0.detail)\n" }.joined()
            return Response(
                status: checks.allSatisfy(\.ok) ? .ok : .serviceUnavailable, headers: [.contentType: "text/plain"],
                body: .init(byteBuffer: ByteBuffer(string: text)))
        }
        return Application(
            router: router, configuration: .init(address: .hostname(host, port: port), serverName: "scantrack"),
            onServerRunning: { channel in
                let shown = host.contains(":") ? "[\(host)]" : host
                let address = "http://\(shown):\(channel.localAddress?.port ?? port)"
                logger.info("metrics and health", metadata: ["address": "\(address)/metrics"])
                onListening(address)
            },
            logger: logger)
    }
}

/// On an endpoint bound to loopback, a request must name a loopback host (`localhost`, `127.x`,
/// `[::1]`): a web page elsewhere that points its own name at 127.0.0.1 (DNS rebinding) cannot read
/// the metrics or health through the operator's browser. An endpoint bound to another address was
/// exposed on purpose (a monitoring network, where Prometheus names the host as it likes) and is
/// not checked; docs/metrics.md says to keep it on such a network.
struct LoopbackHostCheck<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard Self.isLoopback(HostHeader.name(request.head.authority ?? "")) else {
            return Response(
                status: .misdirectedRequest, headers: [.contentType: "text/plain"],
                body: .init(byteBuffer: ByteBuffer(string: "not served under that host name\n")))
        }
        return try await next(request, context)
    }

    /// `localhost`, `::1` or an IPv4 address in 127.0.0.0/8 (four decimal parts, not a name that
    /// merely begins with them).
    static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased()
        if host == "localhost" || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127"
            && parts.allSatisfy { part in part.allSatisfy { ("0"..."9").contains($0) } && UInt8(part) != nil }
    }

}

/// The host a request names (its Host header or HTTP/2 authority), for the checks against DNS
/// rebinding here and in the dashboard.
public enum HostHeader {
    /// `example.com:8080` → `example.com`; `[::1]:8080` → `::1`; lower case.
    public static func name(_ authority: String) -> String {
        var host = Substring(authority.lowercased())
        if host.hasPrefix("[") {
            host = host.dropFirst().prefix { $0 != "]" }
        } else if let colon = host.lastIndex(of: ":") {
            host = host[..<colon]
        }
        return String(host)
    }
}
