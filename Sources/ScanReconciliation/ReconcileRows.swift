import ScanCore
import ScanEvents

// The rows reconciliation reads and writes, as its store (PostgreSQL, or memory in tests) hands
// them over.

/// A stored sighting not yet placed in a pass.
public struct UnreconciledSighting: Sendable, Equatable {
    public var eventId: String
    public var site: String
    public var camera: String
    public var trackId: String
    public var symbology: String
    public var value: String
    public var valueEncoding: String
    public var accepted: Bool
    public var firstSeen: Timestamp
    public var lastSeen: Timestamp

    public init(
        eventId: String, site: String, camera: String, trackId: String, symbology: String, value: String,
        valueEncoding: String, accepted: Bool, firstSeen: Timestamp, lastSeen: Timestamp
    ) {
        self.eventId = eventId
        self.site = site
        self.camera = camera
        self.trackId = trackId
        self.symbology = symbology
        self.value = value
        self.valueEncoding = valueEncoding
        self.accepted = accepted
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
    }
}

/// A lane, as watermarks are kept.
public struct LaneKey: Hashable, Sendable {
    public var site: String
    public var lane: String
    public init(site: String, lane: String) {
        self.site = site
        self.lane = lane
    }
}

/// A no-read not yet settled against the item passes.
public struct UnsettledNoRead: Sendable, Equatable {
    public var eventId: String
    public var site: String
    public var camera: String
    public var firstSeen: Timestamp
    /// When the aggregator stored it (wall clock).
    public var received: Timestamp

    public init(eventId: String, site: String, camera: String, firstSeen: Timestamp, received: Timestamp) {
        self.eventId = eventId
        self.site = site
        self.camera = camera
        self.firstSeen = firstSeen
        self.received = received
    }
}

/// A pass to store, with what its lane expects.
public struct PassRow: Sendable {
    public var pass: ItemPass
    public var camerasExpected: Int
    public var missing: [String]
    public init(pass: ItemPass, camerasExpected: Int, missing: [String]) {
        self.pass = pass
        self.camerasExpected = camerasExpected
        self.missing = missing
    }
}

/// A completed pack-station session not yet turned into a pack record (`event` nil: its stored
/// body no longer reads as a session event, and it is skipped).
public struct CompletedSession: Sendable {
    public var eventId: String
    public var site: String
    public var camera: String
    public var event: SessionEvent?

    public init(eventId: String, site: String, camera: String, event: SessionEvent?) {
        self.eventId = eventId
        self.site = site
        self.camera = camera
        self.event = event
    }
}

/// A camera's parcel waiting to be merged into a parcel pass: its codes (item passes not yet
/// known), the track id of each code's sighting, and when it was stored.
public struct UnmergedParcel: Sendable, Equatable {
    public var site: String
    public var parcel: LaneParcel
    /// Parallel to `parcel.codes`.
    public var trackIds: [String]
    public var received: Timestamp

    public init(site: String, parcel: LaneParcel, trackIds: [String], received: Timestamp) {
        self.site = site
        self.parcel = parcel
        self.trackIds = trackIds
        self.received = received
    }

    /// A stored `parcel` event, its codes' item passes not known yet.
    public init(_ event: ParcelEvent, received: Timestamp) {
        let parcel = LaneParcel(
            eventId: event.eventId, parcelId: event.parcelId, camera: event.camera, firstSeen: event.firstSeen,
            lastSeen: event.lastSeen,
            codes: event.codes.map {
                ParcelCode(symbology: $0.symbology, value: $0.value, valueEncoding: $0.valueEncoding, itemId: nil)
            }, missing: event.missing, closedAt: event.time, rejected: event.codes.contains { $0.status == .rejected },
            image: event.imageObject?.name)
        self.init(site: event.site, parcel: parcel, trackIds: event.codes.map(\.trackId), received: received)
    }
}

/// Where a code's sighting stands: placed in an item pass yet, accepted, and which pass.
public struct SightingState: Sendable, Equatable {
    public var reconciled: Bool
    public var accepted: Bool
    public var itemId: String?
    /// Whether another camera's sighting is in its item pass too: that camera read this code on
    /// the box, so its parcel of the box will hold it.
    public var readElsewhere: Bool

    public init(reconciled: Bool, accepted: Bool, itemId: String?, readElsewhere: Bool = false) {
        self.reconciled = reconciled
        self.accepted = accepted
        self.itemId = itemId
        self.readElsewhere = readElsewhere
    }
}

/// A parcel pass to store, with the number of cameras its lane has.
public struct ParcelPassRow: Sendable {
    public var pass: ParcelPass
    public var camerasExpected: Int

    public init(pass: ParcelPass, camerasExpected: Int) {
        self.pass = pass
        self.camerasExpected = camerasExpected
    }
}

extension LaneParcel {
    /// As a parcel pass stores its members (JSON), and back.
    public var json: [UInt8] {
        var writer = JSONWriter()
        writer.field("eventId", eventId)
        writer.field("parcelId", parcelId)
        writer.field("camera", camera)
        writer.field("firstSeen", firstSeen.description)
        writer.field("lastSeen", lastSeen.description)
        writer.raw("codes", JSONWriter.array(codes.map(\.json)))
        writer.strings("missing", missing)
        writer.field("closedAt", closedAt.description)
        writer.field("rejected", rejected)
        writer.field("image", image)
        return writer.finished()
    }

    /// Reads what `json` wrote; nil for anything else.
    public init?(stored value: JSONValue) {
        guard let eventId = value["eventId"]?.stringValue, let parcelId = value["parcelId"]?.stringValue,
            let camera = value["camera"]?.stringValue,
            let firstSeen = value["firstSeen"]?.stringValue.flatMap(Timestamp.init(rfc3339:)),
            let lastSeen = value["lastSeen"]?.stringValue.flatMap(Timestamp.init(rfc3339:)),
            case .array(let codes)? = value["codes"], case .array(let missing)? = value["missing"]
        else { return nil }
        self.init(
            eventId: eventId, parcelId: parcelId, camera: camera, firstSeen: firstSeen, lastSeen: lastSeen,
            codes: codes.compactMap { code in
                guard let symbology = code["symbology"]?.stringValue, let text = code["value"]?.stringValue else {
                    return nil
                }
                return ParcelCode(
                    symbology: symbology, value: text, valueEncoding: code["valueEncoding"]?.stringValue,
                    itemId: code["itemId"]?.stringValue)
            }, missing: missing.compactMap(\.stringValue),
            closedAt: value["closedAt"]?.stringValue.flatMap(Timestamp.init(rfc3339:)),
            rejected: value["rejected"]?.boolValue ?? false, image: value["image"]?.stringValue)
    }
}

/// A measurement waiting for its parcel pass, with when it was stored.
public struct UnsettledMeasurement: Sendable, Equatable {
    public var measurement: MeasureEvent
    public var received: Timestamp

    public init(_ measurement: MeasureEvent, received: Timestamp) {
        self.measurement = measurement
        self.received = received
    }
}
