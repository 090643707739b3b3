import ScanTestSupport
import ScanTestTiming
import Testing

@testable import ScanNATS

/// Against the real nats-server (JetStream) that `make test` starts.
@Suite("JetStream through cnats", .timed, .enabled(if: TestEnvironment.natsEnabled))
struct JetStreamTests {
    let url: String
    let connection: NATSConnection
    let jetStream: JetStream

    init() throws {
        url = try TestEnvironment.requireNATS()
        connection = try NATSConnection(url: url)
        jetStream = try connection.jetStream()
    }

    @Test("a repeated Nats-Msg-Id is stored once")
    func deduplication() throws {
        let stream = TestEnvironment.uniqueName("DEDUP").uppercased()
        let subject = "test.\(stream.lowercased()).sighting"
        try jetStream.ensureStream(StreamSpec(name: stream, subjects: [subject]))
        defer { try? jetStream.deleteStream(stream) }

        let first = try jetStream.publish(subject: subject, bytes: Array("one".utf8), messageID: "event-1")
        let again = try jetStream.publish(subject: subject, bytes: Array("one".utf8), messageID: "event-1")
        let other = try jetStream.publish(subject: subject, bytes: Array("two".utf8), messageID: "event-2")
        #expect(first.duplicate == false)
        #expect(again.duplicate == true)
        #expect(again.sequence == first.sequence)
        #expect(other.sequence == first.sequence + 1)
        #expect(try jetStream.messageCount(stream: stream) == 2)
    }

    @Test("a durable pull consumer delivers, acks, and redelivers what was not acked")
    func pullConsumerRedelivery() throws {
        let stream = TestEnvironment.uniqueName("PULL").uppercased()
        let subject = "test.\(stream.lowercased()).>"
        try jetStream.ensureStream(StreamSpec(name: stream, subjects: [subject]))
        defer { try? jetStream.deleteStream(stream) }
        for index in 0..<3 {
            _ = try jetStream.publish(
                subject: "test.\(stream.lowercased()).cam\(index)", bytes: Array("m\(index)".utf8),
                messageID: "id-\(index)")
        }
        var consumer = ConsumerSpec(durable: "aggregator")
        consumer.ackWaitMilliseconds = 400
        let subscription = try jetStream.pullSubscribe(stream: stream, subject: subject, consumer: consumer)

        let batch = try subscription.fetch(batch: 10, timeoutMilliseconds: 2_000)
        #expect(batch.map { String(decoding: $0.bytes, as: UTF8.self) } == ["m0", "m1", "m2"])
        #expect(try batch.map { try $0.metadata().deliveries } == [1, 1, 1])
        try batch[0].ackSync()
        try batch[2].ackSync()
        // m1 was not acknowledged: after the ack wait the server sends it again, and only it.
        let redelivered = try subscription.fetch(batch: 10, timeoutMilliseconds: 5_000)
        #expect(redelivered.map { String(decoding: $0.bytes, as: UTF8.self) } == ["m1"])
        #expect(try redelivered.first?.metadata().deliveries == 2)
        try redelivered.first?.ackSync()
        #expect(try subscription.fetch(batch: 10, timeoutMilliseconds: 800).isEmpty)

        // A second subscription on the same durable resumes after the acknowledged messages.
        let resumed = try jetStream.pullSubscribe(stream: stream, subject: subject, consumer: consumer)
        #expect(try resumed.fetch(batch: 10, timeoutMilliseconds: 500).isEmpty)
    }

    @Test("core NATS publish and request/reply")
    func coreNATS() throws {
        let subject = "test." + TestEnvironment.uniqueName("core")
        let subscription = try connection.subscribe(subject: subject)
        try connection.publish(subject: subject, bytes: Array("hello".utf8))
        try connection.flush()
        let message = try #require(try subscription.next(timeoutMilliseconds: 2_000))
        #expect(message.bytes == Array("hello".utf8))
        #expect(try subscription.next(timeoutMilliseconds: 100) == nil)
    }

    @Test("connecting to a port where nothing listens fails with a clear error")
    func connectFailure() {
        var options = NATSConnection.Options()
        options.connectTimeoutMilliseconds = 300
        options.reconnectForever = false
        do {
            _ = try NATSConnection(url: "nats://user:secret@127.0.0.1:1", options: options)
            Issue.record("connected to port 1")
        } catch {
            #expect(error.code == .connectionFailed)
            #expect(error.description.contains("127.0.0.1:1"))
            #expect(!error.description.contains("secret"), "credentials must never appear in errors")
        }
    }

    @Test("a JetStream publish to a subject no stream holds fails with a JetStream error")
    func publishWithoutStream() throws {
        #expect(throws: NATSError.self) {
            _ = try jetStream.publish(
                subject: "nostream." + TestEnvironment.uniqueName("x"), bytes: [1], messageID: "a")
        }
    }
}
