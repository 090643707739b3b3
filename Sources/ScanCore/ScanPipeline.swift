/// From one frame's raw decodes to contract events: split merged symbols, normalise values,
/// track, decide (rules) once per track, and emit track events and sightings.
/// Pure: the caller supplies frames, times and detections; the pipeline returns events.
public struct ScanPipeline: Sendable {
    public private(set) var tracker: Tracker
    public let factory: EventFactory
    public var splitter: DetectionSplitter
    public var normalizer: CodeNormalizer
    /// Decides each track once, at its first confirmed read. Nil accepts everything.
    public var decide: (@Sendable (Track, Timestamp) -> TrackDecision)?
    /// The session a sighting belongs to, asked when the track ends.
    public var sessionId: String?
    private var updateCounts: [String: Int] = [:]

    public init(
        camera: CameraIdentity, tracking: TrackingConfig = TrackingConfig(), density: Int = 1,
        normalizer: CodeNormalizer = CodeNormalizer(), idPrefix: String
    ) {
        self.tracker = Tracker(config: tracking, idPrefix: idPrefix)
        self.factory = EventFactory(camera: camera)
        self.splitter = DetectionSplitter(density: density)
        self.normalizer = normalizer
    }

    /// Prepares raw decoder output: one detection per physical code, normalised.
    public func prepare(_ raw: [Detection]) -> [Detection] {
        var prepared: [Detection] = []
        prepared.reserveCapacity(raw.count)
        for detection in raw {
            for part in splitter.split(detection) { prepared.append(normalizer.normalize(part)) }
        }
        return prepared
    }

    /// What ended in this frame, with its final state; the caller turns them into sightings.
    public private(set) var ended: [Track] = []

    public mutating func process(frame: Int, time: Timestamp, detections raw: [Detection]) -> [AgentEvent] {
        let trackerEvents = tracker.step(frame: frame, time: time, detections: prepare(raw))
        return translate(trackerEvents, time: time)
    }

    /// Ends every open track (end of stream, shutdown).
    public mutating func finish(time: Timestamp) -> [AgentEvent] {
        translate(tracker.finish(), time: time)
    }

    private mutating func translate(_ trackerEvents: [TrackerEvent], time: Timestamp) -> [AgentEvent] {
        var events: [AgentEvent] = []
        ended.removeAll(keepingCapacity: true)
        for event in trackerEvents {
            switch event {
            case .added(var track):
                let decision = decide?(track, track.lastSeen) ?? .acceptedByDefault
                track.decision = decision
                tracker.setDecision(decision, forTrack: track.id)
                events.append(factory.trackEvent(.trackAdded, track, time: time, sequence: 0))
            case .updated(let track):
                let count = updateCounts[track.id, default: 0] + 1
                updateCounts[track.id] = count
                events.append(factory.trackEvent(.trackUpdated, track, time: time, sequence: count))
            case .merged(let track, let keeper):
                updateCounts[track.id] = nil
                var event = factory.trackEvent(.trackRemoved, track, time: time, sequence: 0)
                // Tell viewers where it went; the code's one sighting comes from the keeper.
                event.json.removeLast()
                event.json += Array(",\"mergedInto\":\"\(keeper)\"}".utf8)
                events.append(event)
            case .removed(let track):
                updateCounts[track.id] = nil
                events.append(factory.trackEvent(.trackRemoved, track, time: time, sequence: 0))
                events.append(factory.sighting(track, time: time, sessionId: sessionId))
                ended.append(track)
            }
        }
        return events
    }
}
