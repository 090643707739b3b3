import ScanAgentConfig
import ScanCore
import ScanEvents
import ScanRules
import ScanVision

/// From one frame's detections to contract events: normalise values, track, decide (rules)
/// once per track, run sessions, and emit track events and sightings. Detections arrive one per
/// physical code: the decoder splits zbar's merged symbols (`DetectionSplitter`) before its
/// phantom checks.
/// Pure: the caller supplies frames, times and detections; the pipeline returns events.
public struct ScanPipeline: Sendable {
    public private(set) var tracker: Tracker
    /// Code-like regions followed whether or not they decode; nil when no-reads are off.
    public private(set) var candidates: CandidateTracker?
    public let factory: EventFactory
    public var normalizer: CodeNormalizer
    /// Decides each track once, at its first confirmed read. Swapped between frames when a new
    /// ruleset arrives.
    public var rules: Ruleset
    public private(set) var sessions: SessionPolicy
    /// Codes grouped into parcels; nil when grouping is off.
    public private(set) var parcels: ParcelGrouper?
    /// A divert decision after each parcel event; nil when decisions are off.
    public let decision: DecisionConfig?
    /// Each open parcel's best picture, handed out with its event (`AgentEvent.unsavedParcel`);
    /// nil (the default): none kept. Set by the agent when it keeps parcel images.
    public var parcelPictures: ParcelPictures?
    /// The belt's speed now (m/s) from its subject, for the decisions' divert points; nil: the
    /// config's.
    public var beltSpeed: Double?
    /// The session each confirmed, accepted track counted in.
    private var sessionOfTrack: [String: String] = [:]
    private var updateCounts: [String: Int] = [:]
    private var started = false

    public init(
        camera: CameraIdentity, tracking: TrackingConfig = TrackingConfig(),
        normalizer: CodeNormalizer = CodeNormalizer(), session: SessionConfig = SessionConfig(),
        rules: Ruleset = .acceptAll, noread: NoReadConfig = NoReadConfig(), grouping: GroupingConfig = GroupingConfig(),
        decision: DecisionConfig = DecisionConfig(), symbologies: [Symbology] = [], idPrefix: String
    ) {
        self.tracker = Tracker(config: tracking, idPrefix: idPrefix)
        if noread.enabled {
            candidates = CandidateTracker(
                minFrames: noread.minFrames, maxMissedFrames: tracking.maxMissedFrames, idPrefix: idPrefix)
            // A no-read that looks like a family the decoder is not set to read says so.
            // (PDF417's stacked rows look like bars to the localiser: both.)
            candidates?.configuredFamilies = Set(
                symbologies.flatMap {
                    $0 == .pdf417 ? [CodeFamily.linear, .matrix] : [$0.isLinear ? .linear : .matrix]
                })
        }
        self.factory = EventFactory(camera: camera)
        self.normalizer = normalizer
        self.rules = rules
        self.sessions = SessionPolicy(config: session, idPrefix: idPrefix)
        if grouping.enabled {
            // A parcel waits for no-reads beside it as long as a track waits for its code.
            parcels = ParcelGrouper(config: grouping, grace: tracking.maxMissedFrames + 2, idPrefix: idPrefix)
        }
        self.decision = grouping.enabled && decision.enabled ? decision : nil
    }

    /// One frame. `located`: the localiser's code-like regions, the area it searched and the
    /// frame they were found in (for no-reads; nil: none this frame).
    public mutating func process(
        frame: Int, time: Timestamp, detections: [Detection], located: LocatedRegions? = nil
    ) -> [AgentEvent] {
        var events: [AgentEvent] = []
        if !started {
            started = true
            events += sessionEvents(sessions.streamStart(at: time))
        }
        let trackerEvents = tracker.step(
            frame: frame, time: time, detections: detections.map(normalizer.normalize), area: located?.area)
        markConfirmedAtEnd(trackerEvents)
        events += translate(trackerEvents, time: time)
        parcels?.update(live: tracker.live, frame: frame)
        if parcelPictures != nil, let parcels, let image = located?.image {
            parcelPictures?.update(parcels.outlines(live: tracker.live, frame: frame), image: image)
        }
        if candidates != nil {
            // Where confirmed tracks were read in this frame: a track kept between reads is where
            // it is predicted, and a prediction that drifts (a speed across a code's lines that
            // a read of a band of them misled) must not mark a label beside it read.
            let decoded = tracker.confirmedReads(in: frame)
            let ended =
                candidates?.step(
                    frame: frame, time: time, regions: located?.regions ?? [], decoded: decoded,
                    tentative: tracker.tentativeReads(in: frame), tracked: tracker.confirmedPlaces(at: frame),
                    area: located?.area ?? Box(minX: 0, minY: 0, maxX: 0, maxY: 0), image: located?.image) ?? []
            events += noReadAndParcelEvents(ended, time: time)
            // A code read now and then stays one track while its region is seen between reads,
            // and reads at two ends of one region are one code.
            let seen = candidates?.seen(in: frame) ?? []
            tracker.sustain(frame: frame, present: seen)
            events += translate(tracker.mergeWithin(regions: seen.map(\.box), frame: frame), time: time)
            candidates?.markDecoded(tracker.confirmedReads(in: frame), frame: frame)
        }
        // A parcel whose codes have left the view closes as soon as no unread label beside it
        // can still become one of its no-reads.
        let unread = candidates?.live.filter { !$0.decoded }.map { $0.predictedBox(at: frame) } ?? []
        events += parcelEvents(
            parcels?.close(frame: frame, area: located?.area, unread: unread) ?? [], time: time)
        events += sessionEvents(sessions.tick(at: time))
        return events
    }

    /// Each closed parcel's event, followed by its decision when decisions are on.
    private mutating func parcelEvents(_ closed: [ParcelGrouper.Parcel], time: Timestamp) -> [AgentEvent] {
        var events: [AgentEvent] = []
        for parcel in closed {
            let event = ParcelEvent(parcel, camera: factory.camera, time: time)
            let decided = decision.flatMap { DecisionEvent(agentParcel: event, config: $0, beltSpeed: beltSpeed) }
            var routed = event.agentEvent
            if let picture = parcelPictures?.take(parcel.id) {
                routed.unsavedParcel = AgentEvent.UnsavedParcel(
                    event: event, picture: picture, diverted: decided?.action == .divert)
            }
            events.append(routed)
            if let decided { events.append(decided.agentEvent) }
        }
        return events
    }

    /// Ends every open track and the running session: the stream ended (`.streamEnded`) or the
    /// agent stops (`.stopped`). Labels in view that were not read are no-reads with that reason.
    public mutating func finish(time: Timestamp, ending: CandidateTracker.Ending = .streamEnded) -> [AgentEvent] {
        var events = endTracks(time: time, ending: ending)
        events += sessionEvents(sessions.endOfStream(at: time))
        return events
    }

    /// A track confirmed only as it ended (`Tracker.confirmedAtEnd`) read the candidate it lay on
    /// in its last frame, which the candidate tracker has not heard of.
    private mutating func markConfirmedAtEnd(_ trackerEvents: [TrackerEvent]) {
        for case .added(let track) in trackerEvents
        where trackerEvents.contains(where: { if case .removed(let gone) = $0 { gone.id == track.id } else { false } })
        {
            candidates?.markDecoded([track.lastBox], frame: track.lastFrame)
            // A track kept by its region long after its one read (`Tracker.sustain`): the
            // candidate remembers only its last frames, where the track was last seen.
            if track.presentFrame > track.lastFrame {
                candidates?.markDecoded([track.presentBox], frame: track.presentFrame)
            }
        }
    }

    private func noReadEvents(_ ended: [CandidateTracker.NoRead], time: Timestamp) -> [AgentEvent] {
        ended.map { factory.noRead($0, time: time, sessionId: sessions.current?.id) }
    }

    /// No-reads and the parcels they complete.
    private mutating func noReadAndParcelEvents(_ ended: [CandidateTracker.NoRead], time: Timestamp) -> [AgentEvent] {
        var events: [AgentEvent] = []
        let noReads = noReadEvents(ended, time: time)
        events += noReads
        for (noRead, event) in zip(ended, noReads) {
            if let alone = parcels?.noRead(noRead, eventId: event.eventId) {
                events += parcelEvents([alone], time: time)
            }
        }
        return events
    }

    /// Session time limits while no frame arrives (a paused agent, a camera that went away).
    public mutating func tick(time: Timestamp) -> [AgentEvent] {
        guard started else { return [] }
        return sessionEvents(sessions.tick(at: time))
    }

    /// Ends the open tracks (each gets its sighting, each unread label in view its no-read) but
    /// not the session: `pause`.
    public mutating func endTracks(time: Timestamp, ending: CandidateTracker.Ending = .stopped) -> [AgentEvent] {
        let trackerEvents = tracker.finish()
        markConfirmedAtEnd(trackerEvents)
        var events = translate(trackerEvents, time: time)
        events += noReadAndParcelEvents(candidates?.finish(ending) ?? [], time: time)
        return events + parcelEvents(parcels?.close(frame: nil) ?? [], time: time)
    }

    /// Confirmed tracks in view now.
    public var liveTracks: Int { tracker.confirmedLive }
    public var currentSessionId: String? { sessions.current?.id }

    /// `session.start` from a command.
    public mutating func startSession(orderId: String?, at time: Timestamp) -> [AgentEvent] {
        sessionEvents(sessions.startCommand(at: time, orderId: orderId))
    }

    /// `session.stop` from a command.
    public mutating func stopSession(at time: Timestamp) -> [AgentEvent] {
        sessionEvents(sessions.stopCommand(at: time))
    }

    private func sessionEvents(_ events: [SessionChange]) -> [AgentEvent] {
        events.map { event in
            switch event {
            case .started(let session): factory.sessionStarted(session)
            case .completed(let session, let reason, let time):
                factory.sessionCompleted(session, reason: reason, at: time)
            }
        }
    }

    private mutating func translate(_ trackerEvents: [TrackerEvent], time: Timestamp) -> [AgentEvent] {
        var events: [AgentEvent] = []
        for event in trackerEvents {
            switch event {
            case .added(var track):
                // Decided once, with the time of the track's first confirmed read.
                let subject = RuleSubject(
                    value: EncodedValue(bytes: track.value).eventString, symbology: track.symbology, gs1: track.isGS1,
                    camera: factory.camera, time: track.lastSeen)
                let decision = rules.decide(subject)
                track.decision = decision
                tracker.setDecision(decision, forTrack: track.id)
                parcels?.confirmed(track, frame: track.lastFrame, live: tracker.live)
                events.append(factory.trackEvent(.added, track, time: time, sequence: 0))
                if decision.accepted {
                    let (sessionId, sessionChanges) = sessions.accepted(track, role: decision.role, at: track.lastSeen)
                    if let sessionId { sessionOfTrack[track.id] = sessionId }
                    events += sessionEvents(sessionChanges)
                }
            case .updated(let track):
                let count = updateCounts[track.id, default: 0] + 1
                updateCounts[track.id] = count
                events.append(factory.trackEvent(.updated, track, time: time, sequence: count))
            case .merged(let track, let keeper):
                updateCounts[track.id] = nil
                parcels?.merged(track.id)
                if sessionOfTrack.removeValue(forKey: track.id) != nil { sessions.forget(trackId: track.id) }
                // Tell viewers where it went; the code's one sighting comes from the keeper.
                events.append(factory.trackEvent(.removed, track, time: time, sequence: 0, mergedInto: keeper))
            case .removed(let track):
                updateCounts[track.id] = nil
                events.append(factory.trackEvent(.removed, track, time: time, sequence: 0))
                // Placed first, so the sighting names its parcel (and the parcel's picture when
                // that is certain to be kept).
                parcels?.ended(track, frame: track.lastFrame)
                let parcelId = parcels?.parcelId(ofTrack: track.id)
                let image = parcelId.flatMap { id in parcelPictures?.promises(id) == true ? id : nil }
                events.append(
                    factory.sighting(
                        track, time: time, sessionId: sessionOfTrack.removeValue(forKey: track.id),
                        parcelId: parcelId, picturedParcel: image))
            }
        }
        return events
    }
}

/// What the localiser found in one frame, for the candidate tracker.
public struct LocatedRegions: Sendable {
    public var regions: [CodeLocalizer.Region]
    /// The part of the frame searched (the region of interest).
    public var area: Box
    public var image: GrayImage

    public init(regions: [CodeLocalizer.Region], area: Box, image: GrayImage) {
        self.regions = regions
        self.area = area
        self.image = image
    }
}
