import ScanCore
import ScanEvents

extension ContractSubjects {
    /// The agents' stream as every program declares it: agents and aggregators both create or
    /// check it at start, with the same settings, so neither undoes the other's. `replicas`:
    /// copies in a JetStream cluster (nil: 1 for a new stream, an existing one keeps its own).
    /// Size limits (docs/security.md, "Limits"): a message at most a no-read with its picture
    /// (`EventValidator.maxNoReadBytes`) plus its headers; 4 GiB in all, and a full stream refuses
    /// new events, which then wait in the agents' spools, rather than dropping unconsumed ones.
    public func agentStreamSpec(replicas: Int64? = nil) -> StreamSpec {
        var spec = StreamSpec(name: agentStream, subjects: agentStreamSubjects)
        spec.duplicateWindowSeconds = ContractSubjects.duplicateWindowSeconds
        spec.replicas = replicas
        spec.maxMessageSize = Int32(EventValidator.maxNoReadBytes + 64 * 1024)
        spec.maxBytes = 4 << 30
        spec.refuseWhenFull = true
        return spec
    }

    /// Item passes and pack records for the WMS; deduplicated like the agents' stream, since the
    /// aggregator republishes what it is not sure was acknowledged.
    public func resultsStreamSpec(replicas: Int64? = nil) -> StreamSpec {
        var spec = StreamSpec(name: resultsStream, subjects: resultsStreamSubjects)
        spec.duplicateWindowSeconds = ContractSubjects.duplicateWindowSeconds
        spec.replicas = replicas
        spec.maxMessageSize = 1 << 20
        spec.maxBytes = 1 << 30
        spec.refuseWhenFull = true  // the results outbox in PostgreSQL keeps them until there is room
        return spec
    }

    public func deadLetterStreamSpec(replicas: Int64? = nil) -> StreamSpec {
        var spec = StreamSpec(name: deadLetterStream, subjects: deadLetterSubjects)
        spec.replicas = replicas
        spec.maxMessageSize = 64 * 1024
        spec.maxBytes = 256 << 20  // stored in PostgreSQL too: the oldest go first
        return spec
    }

    /// Orders the WMS publishes; deduplicated by message id like the agents' stream. Kept a
    /// week (the aggregator stores them; the stream is the WMS's outbox while it is away).
    public func ordersStreamSpec(replicas: Int64? = nil) -> StreamSpec {
        var spec = StreamSpec(name: ordersStream, subjects: ordersStreamSubjects)
        spec.duplicateWindowSeconds = ContractSubjects.duplicateWindowSeconds
        spec.replicas = replicas
        spec.maxMessageSize = Int32(OrderMessage.maxBytes)
        spec.maxBytes = 1 << 30
        spec.maxAgeSeconds = 7 * 24 * 3600
        return spec
    }
}
