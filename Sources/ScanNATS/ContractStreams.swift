import ScanCore

extension ContractSubjects {
    /// The agents' stream as every program declares it: agents and aggregators both create or
    /// check it at start, with the same settings, so neither undoes the other's.
    public var agentStreamSpec: StreamSpec {
        var spec = StreamSpec(name: agentStream, subjects: agentStreamSubjects)
        spec.duplicateWindowSeconds = ContractSubjects.duplicateWindowSeconds
        return spec
    }

    /// Item passes and pack records for the WMS; deduplicated like the agents' stream, since the
    /// aggregator republishes what it is not sure was acknowledged.
    public var resultsStreamSpec: StreamSpec {
        var spec = StreamSpec(name: resultsStream, subjects: resultsStreamSubjects)
        spec.duplicateWindowSeconds = ContractSubjects.duplicateWindowSeconds
        return spec
    }

    public var deadLetterStreamSpec: StreamSpec { StreamSpec(name: deadLetterStream, subjects: deadLetterSubjects) }
}
