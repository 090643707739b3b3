import ScanCore

/// An event of the agents' stream that the aggregator stores: one case per family, each holding
/// its family's wire type. Ingest reads the family from the subject, parses the event as that
/// family (`parse(_:family:)`), checks its sender and place, and stores it in its family's table.
public enum IngestEvent: Sendable {
    case sighting(SightingEvent)
    case session(SessionEvent)
    case noRead(NoReadEvent)
    case reading(ReadingEvent)
    case parcel(ParcelEvent)
    case decision(DecisionEvent)
    case measure(MeasureEvent)

    /// The families ingest stores, in the order a batch stores them.
    public static let families: [SubjectFamily] = [
        .sighting, .session, .noread, .reading, .parcel, .decision, .measure,
    ]

    /// An event of `family` from its parsed JSON (the wire type checks the fields); a family
    /// ingest does not store is refused.
    public static func parse(_ value: JSONValue, family: SubjectFamily) throws(DeadLetter) -> IngestEvent {
        switch family {
        case .sighting: .sighting(try SightingEvent.parse(value))
        case .session: .session(try SessionEvent.parse(value))
        case .noread: .noRead(try NoReadEvent.parse(value))
        case .reading: .reading(try ReadingEvent.parse(value))
        case .parcel: .parcel(try ParcelEvent.parse(value))
        case .decision: .decision(try DecisionEvent.parse(value))
        case .measure: .measure(try MeasureEvent.parse(value))
        default: throw DeadLetter(.unknownType, "the aggregator stores no '\(family.rawValue)' events")
        }
    }

    public var family: SubjectFamily {
        switch self {
        case .sighting: .sighting
        case .session: .session
        case .noRead: .noread
        case .reading: .reading
        case .parcel: .parcel
        case .decision: .decision
        case .measure: .measure
        }
    }

    public var eventId: String {
        switch self {
        case .sighting(let event): event.eventId
        case .session(let event): event.eventId
        case .noRead(let event): event.eventId
        case .reading(let event): event.eventId
        case .parcel(let event): event.eventId
        case .decision(let event): event.eventId
        case .measure(let event): event.eventId
        }
    }

    /// The camera that sent it and the lane or station it names, as its subject and the topology
    /// are checked against; nil for a decision or a measurement, which are sent on a lane's
    /// subject and checked by lane.
    public var camera: (site: String, camera: String, lane: String?, station: String?)? {
        switch self {
        case .sighting(let event): (event.site, event.camera, event.lane, event.station)
        case .session(let event): (event.envelope.site, event.envelope.camera, event.lane, event.station)
        case .noRead(let event): (event.site, event.camera, event.lane, event.station)
        case .reading(let event): (event.site, event.camera, event.lane, event.station)
        case .parcel(let event): (event.site, event.camera, event.lane, event.station)
        case .decision, .measure: nil
        }
    }
}

extension SubjectFamily {
    /// The family of an event subject `<prefix>.v1.<family>.…`; nil for any other subject.
    public init?(subject: String, prefix: String) {
        let head = prefix + ".v1."
        guard subject.hasPrefix(head) else { return nil }
        let rest = subject.dropFirst(head.count)
        guard let family = SubjectFamily(rawValue: String(rest.prefix { $0 != "." })) else { return nil }
        self = family
    }
}
