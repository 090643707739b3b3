import ScanCore
import ScanNATS

/// Reads everything a JetStream stream holds on `subject`, through a fresh durable consumer.
public enum StreamReader {
    /// One message: its subject, `Nats-Msg-Id` and `traceparent` headers, and its JSON.
    public typealias Event = (subject: String, msgId: String?, event: JSONValue, traceparent: String?)

    public static func events(
        _ jetStream: JetStream, stream: String, subject: String
    ) throws -> [Event] {
        let subscription = try jetStream.pullSubscribe(
            stream: stream, subject: subject, consumer: ConsumerSpec(durable: TestEnvironment.uniqueName("check")))
        var events: [Event] = []
        while true {
            let batch = try subscription.fetch(batch: 200, timeoutMilliseconds: 500)
            if batch.isEmpty { break }
            for message in batch {
                events.append(
                    (
                        message.subject, message.message.header("Nats-Msg-Id"), try JSONValue.parse(message.bytes),
                        message.message.header(TraceContext.header)
                    ))
                try message.ack()
            }
        }
        return events
    }
}
