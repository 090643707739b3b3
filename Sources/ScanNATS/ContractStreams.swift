import ScanCore

extension ContractSubjects {
    /// The agents' stream as every program declares it: agents and aggregators both create or
    /// check it at start, with the same settings, so neither undoes the other's. `replicas`:
    /// copies in a JetStream cluster (nil: 1 for a new stream, an existing one keeps its own).
    public func agentStreamSpec(replicas: Int64? = nil) -> StreamSpec {
        var spec = StreamSpec(name: agentStream, subjects: agentStreamSubjects)
        spec.duplicateWindowSeconds = ContractSubjects.duplicateWindowSeconds
        spec.replicas = replicas
        return spec
    }

    /// Item passes and pack records for the WMS; deduplicated like the agents' stream, since the
    /// aggregator republishes what it is not sure was acknowledged.
    public func resultsStreamSpec(replicas: Int64? = nil) -> StreamSpec {
        var spec = StreamSpec(name: resultsStream, subjects: resultsStreamSubjects)
        spec.duplicateWindowSeconds = ContractSubjects.duplicateWindowSeconds
        spec.replicas = replicas
        return spec
    }

    public func deadLetterStreamSpec(replicas: Int64? = nil) -> StreamSpec {
        var spec = StreamSpec(name: deadLetterStream, subjects: deadLetterSubjects)
        spec.replicas = replicas
        return spec
    }
}
