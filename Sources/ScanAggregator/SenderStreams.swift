import Foundation
import Logging
import ScanAggregatorRuntime
import ScanCore
import ScanNATS
import ScanReconciliation

/// The agents' events from every sender's own stream (docs/security.md, "One sender cannot
/// starve the others"): a stream for each camera and each lane the topology names, made by the
/// aggregator, and the agents' stream, which takes every event while the topology names no
/// camera and nothing new once it does (what it held is still read).
///
/// The layout follows the topology, read again every `layoutInterval`: a camera added gets its
/// stream then (until then its agent keeps its events in its spool); one taken out keeps its
/// stream and what it holds until an admin deletes it, and this consumer reads it until it stops.
///
/// A fetch takes what waits on each stream in turn, without waiting (each stream's turn to be
/// first comes round), twice, 2 ms apart (the server answers the first pass's requests at once);
/// only when neither found anything does it wait, on one stream at a time for at most
/// `waitSliceMilliseconds`, so an event on another stream waits no longer than that.
public final class SenderStreamsConsumer: EventConsumer {
    public static let layoutInterval: Duration = .seconds(5)
    public static let waitSliceMilliseconds: Int64 = 50

    private let connection: NATSConnection
    private let jetStream: JetStream
    private let subjects: ContractSubjects
    private let spec: ConsumerSpec
    private let replicas: Int64?
    private let cameraBytes: Int64
    private let topology: () throws -> Topology
    private let logger: Logger
    private var streams: [JetStreamEventConsumer] = []
    private var layout: [StreamSpec]?
    private var checkedAt: ContinuousClock.Instant?
    private var turn = 0

    /// `topology`: the layout to follow, read on this consumer's thread; `cameraBytes`: the limit
    /// of each camera's stream.
    public init(
        connection: NATSConnection, jetStream: JetStream, subjects: ContractSubjects, spec: ConsumerSpec,
        replicas: Int64?, cameraBytes: Int64 = ContractSubjects.cameraStreamBytes, logger: Logger,
        topology: @escaping () throws -> Topology
    ) throws {
        self.connection = connection
        self.jetStream = jetStream
        self.subjects = subjects
        self.spec = spec
        self.replicas = replicas
        self.cameraBytes = cameraBytes
        self.topology = topology
        self.logger = logger
        streams = [try subscribe(subjects.agentStream)]
        try followTopology()
    }

    private func subscribe(_ stream: String) throws -> JetStreamEventConsumer {
        try JetStreamEventConsumer(
            connection: connection, jetStream: jetStream, stream: stream, subject: "\(subjects.prefix).v1.>",
            spec: spec)
    }

    /// Makes the streams the topology asks for when it changed (at most every `layoutInterval`).
    /// A topology that cannot be read now leaves the layout as it is.
    private func followTopology() throws {
        let now = ContinuousClock.now
        if let checkedAt, now - checkedAt < Self.layoutInterval { return }
        checkedAt = now
        let wanted: [StreamSpec]
        do {
            let topology = try topology()
            wanted = try subjects.senderStreamSpecs(
                cameras: topology.cameraSenders, lanes: topology.laneSenders, replicas: replicas,
                cameraBytes: cameraBytes)
        } catch {
            logger.warning("streams: topology not read; the layout stays", metadata: ["error": "\(error)"])
            return
        }
        guard wanted != layout else { return }
        if wanted.isEmpty {
            do {
                try jetStream.ensureStream(subjects.agentStreamSpec(replicas: replicas))
            } catch {
                // Senders' streams left by an earlier topology hold their subjects still.
                guard (try? jetStream.streamFacts(subjects.agentStream)) != nil else { throw error }
                logger.warning(
                    "streams: the agents' stream cannot take every event back while senders' streams remain",
                    metadata: ["error": "\(error)"])
            }
        } else {
            // The agents' stream lets go of the senders' subjects first: two streams may not share one.
            try jetStream.ensureStream(subjects.agentStreamSpec(replicas: replicas, retired: true))
            for spec in wanted { try jetStream.ensureStream(spec) }
        }
        let reading = Set(streams.map(\.stream))
        for spec in wanted where !reading.contains(spec.name) { streams.append(try subscribe(spec.name)) }
        layout = wanted
        logger.info(
            "streams",
            metadata: ["senders": .stringConvertible(wanted.count), "reading": .stringConvertible(streams.count)])
    }

    public func fetch(batch: Int, timeoutMilliseconds: Int64) throws -> [any ConsumedMessage] {
        try followTopology()
        if streams.count == 1 { return try streams[0].fetch(batch: batch, timeoutMilliseconds: timeoutMilliseconds) }
        let start = ContinuousClock.now
        while true {
            // A pass returns what earlier requests brought and asks each stream again; the server
            // answers those at once, so a second pass a moment later takes what the first found.
            var messages = try pass(batch: batch)
            if messages.isEmpty {
                Thread.sleep(forTimeInterval: Self.answerWait)
                messages = try pass(batch: batch)
            }
            turn = (turn + 1) % streams.count
            if !messages.isEmpty { return messages }
            let left = timeoutMilliseconds - Int64((ContinuousClock.now - start).seconds * 1000)
            if left <= 0 { return [] }
            let waited = try streams[turn].fetch(
                batch: batch, timeoutMilliseconds: min(left, Self.waitSliceMilliseconds))
            if !waited.isEmpty { return waited }
        }
    }

    /// How long a pass's requests are given to be answered before the second pass.
    static let answerWait: TimeInterval = 0.002

    /// Each stream in turn, without waiting (`JetStreamEventConsumer.fetchWaiting`).
    private func pass(batch: Int) throws -> [any ConsumedMessage] {
        var messages: [any ConsumedMessage] = []
        for offset in streams.indices where messages.count < batch {
            messages += try streams[(turn + offset) % streams.count].fetchWaiting(batch: batch - messages.count)
        }
        return messages
    }

    public func rebind() throws {
        for stream in streams { try stream.rebind() }
        checkedAt = nil
    }

    public var isConnected: Bool { connection.isConnected }

    public func backlog() -> (pending: UInt64, ackPending: Int64)? {
        var total: (pending: UInt64, ackPending: Int64) = (0, 0)
        for stream in streams {
            guard let one = stream.backlog() else { return nil }
            total = (total.pending + one.pending, total.ackPending + one.ackPending)
        }
        return total
    }

    public func streamUsages() -> [(stream: String, bytes: UInt64, maxBytes: Int64)] {
        streams.flatMap { $0.streamUsages() }
    }

    public var description: String {
        "\(spec.durable) on \(subjects.agentStream) and \(streams.count - 1) senders' streams"
    }
}
