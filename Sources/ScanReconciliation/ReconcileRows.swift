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
