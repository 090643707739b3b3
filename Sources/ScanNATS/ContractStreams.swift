import ScanCore

extension ContractSubjects {
    /// The agents' stream as every program declares it: agents and aggregators both create or
    /// check it at start, with the same settings, so neither undoes the other's.
    public var agentStreamSpec: StreamSpec {
        var spec = StreamSpec(name: agentStream, subjects: agentStreamSubjects)
        spec.duplicateWindowSeconds = ContractSubjects.duplicateWindowSeconds
        return spec
    }

    public var deadLetterStreamSpec: StreamSpec { StreamSpec(name: deadLetterStream, subjects: deadLetterSubjects) }
}
