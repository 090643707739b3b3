import ScanCore

/// One event of the contract (docs/integration.md): what `scan-agent replay` prints and what
/// the agent publishes.
public struct AgentEvent: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case sighting
        case trackAdded = "track.added"
        case trackUpdated = "track.updated"
        case trackRemoved = "track.removed"
        case sessionStarted = "session.started"
        case sessionCompleted = "session.completed"
        case noread
        case status
        case readingPaused = "reading.paused"
        case readingResumed = "reading.resumed"
        case parcel
        case decision
    }

    public var kind: Kind
    public var eventId: String
    public var time: Timestamp
    /// The object as one line of JSON.
    public var json: [UInt8]
    /// A no-read whose picture is still to be encoded and kept (`AgentEvent.noRead(_:picture:)`):
    /// the agent turns it into PNG, writes the file and renders the event again with both.
    public var unsavedNoRead: UnsavedNoRead?
    /// A parcel whose picture (the pipeline's `parcelPictures`) the agent may keep in the images
    /// bucket (`images.keep`) and name in the event, rendered again.
    public var unsavedParcel: UnsavedParcel?
    /// A sighting's `status` (accepted or rejected), for the agent's metrics.
    public var sightingStatus: SightingStatus?

    public init(kind: Kind, eventId: String, time: Timestamp, json: [UInt8], unsavedNoRead: UnsavedNoRead? = nil) {
        self.kind = kind
        self.eventId = eventId
        self.time = time
        self.json = json
        self.unsavedNoRead = unsavedNoRead
    }

    /// A parcel event and the crop of the frame where most of its codes were in view.
    public struct UnsavedParcel: Sendable, Equatable {
        public var event: ParcelEvent
        public var picture: GrayImage
        /// The decision made for it diverts it (`images.keep: diverts`).
        public var diverted: Bool

        public init(event: ParcelEvent, picture: GrayImage, diverted: Bool = false) {
            self.event = event
            self.picture = picture
            self.diverted = diverted
        }
    }

    /// A no-read event and the picture that goes with it.
    public struct UnsavedNoRead: Sendable, Equatable {
        public var event: NoReadEvent
        public var picture: GrayImage?

        public init(event: NoReadEvent, picture: GrayImage?) {
            self.event = event
            self.picture = picture
        }
    }

    /// NATS subject family: `sighting`, `session`, `track`, `noread` or `status`.
    public var subjectFamily: SubjectFamily {
        switch kind {
        case .sighting: .sighting
        case .sessionStarted, .sessionCompleted: .session
        case .trackAdded, .trackUpdated, .trackRemoved: .track
        case .noread: .noread
        case .status: .status
        case .readingPaused, .readingResumed: .reading
        case .parcel: .parcel
        case .decision: .decision
        }
    }

    /// True for events that must reach the aggregator (JetStream, spooled); false for best-effort ones.
    public var isDurable: Bool {
        kind == .sighting || kind == .sessionStarted || kind == .sessionCompleted || kind == .noread
            || kind == .readingPaused || kind == .readingResumed || kind == .parcel || kind == .decision
    }
}
