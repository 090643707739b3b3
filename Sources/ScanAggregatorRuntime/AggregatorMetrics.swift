import Metrics
import ScanCore
import ScanEvents

/// The aggregator's metrics (swift-metrics; Prometheus names in docs/metrics.md). Without a
/// metrics backend bootstrapped (tests, `--metrics-listen` not given) they cost nothing.
struct AggregatorMetrics: Sendable {
    let messages = Counter(label: "scantrack_aggregator_messages_total")
    /// `scantrack_aggregator_events_stored_total{type}`, one per family ingest stores.
    let stored = Dictionary(
        uniqueKeysWithValues: IngestEvent.families.map { family in
            (
                family,
                Counter(label: "scantrack_aggregator_events_stored_total", dimensions: [("type", family.rawValue)])
            )
        })
    let duplicates = Counter(label: "scantrack_aggregator_duplicates_total")
    let batch = Timer(label: "scantrack_aggregator_batch_seconds", preferredDisplayUnit: .seconds)
    /// From the stream storing an agent's event (its publish) to the aggregator's commit of it.
    let publishToStored = Timer(label: "scantrack_aggregator_publish_to_stored_seconds", preferredDisplayUnit: .seconds)
    let pending = Gauge(label: "scantrack_aggregator_consumer_pending_messages")
    let ackPending = Gauge(label: "scantrack_aggregator_consumer_ack_pending_messages")
    let postgresErrors = Counter(label: "scantrack_aggregator_postgres_errors_total")
    let imagesDescribed = Counter(label: "scantrack_aggregator_images_described_total")
    let reconciliationLag = Gauge(label: "scantrack_aggregator_reconciliation_lag_seconds")
    let natsConnected = Gauge(label: "scantrack_aggregator_nats_link", dimensions: [("state", "connected")])
    let natsDisconnected = Gauge(label: "scantrack_aggregator_nats_link", dimensions: [("state", "disconnected")])

    /// `scantrack_aggregator_nats_link{state}`: 1 for the state now, 0 for the other.
    func natsLink(connected: Bool) {
        natsConnected.record(connected ? 1 : 0)
        natsDisconnected.record(connected ? 0 : 1)
    }

    /// `scantrack_aggregator_stream_bytes{stream}` and `…_stream_max_bytes{stream}`.
    func stream(_ name: String, bytes: UInt64, maxBytes: Int64) {
        Gauge(label: "scantrack_aggregator_stream_bytes", dimensions: [("stream", name)])
            .record(Int64(clamping: bytes))
        Gauge(label: "scantrack_aggregator_stream_max_bytes", dimensions: [("stream", name)]).record(maxBytes)
    }

    /// `scantrack_aggregator_decisions_total{site, lane, action, late}`: one decision published.
    func decision(_ decision: DecisionEvent) {
        Counter(
            label: "scantrack_aggregator_decisions_total",
            dimensions: [
                ("site", decision.site), ("lane", decision.lane), ("action", decision.action.rawValue),
                ("late", decision.late ? "true" : "false"),
            ]
        ).increment()
    }

    func deadLetter(reason: String) {
        Counter(label: "scantrack_aggregator_dead_letters_total", dimensions: [("reason", reason)]).increment()
    }

    /// One committed batch's messages: each one's time from its publish (the stream's timestamp)
    /// to `committed`; 0 when the clocks of two machines put the commit first.
    func stored(_ messages: [any ConsumedMessage], committed: Timestamp) {
        for message in messages {
            guard let published = message.storedInStream else { continue }
            publishToStored.recordNanoseconds(max(0, committed.milliseconds - published.milliseconds) * 1_000_000)
        }
    }

    /// One stored batch.
    func record(_ counts: IngestCounts, refused reasons: [String], duration: Duration) {
        messages.increment(by: counts.messages)
        for (family, counter) in stored { counter.increment(by: counts.stored[family]) }
        duplicates.increment(by: counts.duplicates)
        for reason in reasons { deadLetter(reason: reason) }
        batch.record(duration: duration)
    }
}
