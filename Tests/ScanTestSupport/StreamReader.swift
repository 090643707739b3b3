import ScanCore
import ScanNATS

/// Reads everything a JetStream stream holds on `subject`, through a fresh durable consumer.
public enum StreamReader {
    public static func events(
        _ jetStream: JetStream, stream: String, subject: String
    ) throws -> [(subject: String, msgId: String?, event: JSONValue)] {
        let subscription = try jetStream.pullSubscribe(
            stream: stream, subject: subject, consumer: ConsumerSpec(durable: TestEnvironment.uniqueName("check")))
        var events: [(String, String?, JSONValue)] = []
        while true {
            let batch = try subscription.fetch(batch: 200, timeoutMilliseconds: 500)
            if batch.isEmpty { break }
            for message in batch {
                events.append(
                    (message.subject, message.message.header("Nats-Msg-Id"), try JSONValue.parse(message.bytes)))
                try message.ack()
            }
        }
        return events
    }
}
