import ScanAgentConfig
import ScanCore
import ScanEvents
import ScanVision

// The agent's side of the contract: its tracks, sessions, no-reads and parcels turned into the
// wire types ScanEvents defines. The contract itself knows nothing of the tracker, so the
// aggregator, which only reads events, does not link it.

/// Builds each kind of event for one camera, as its wire type (`SightingEvent`, `SessionEvent`,
/// `TrackEvent`, …) turned into the routed `AgentEvent`.
public struct EventFactory: Sendable {
    public var camera: CameraIdentity

    public init(camera: CameraIdentity) { self.camera = camera }

    /// The one sighting of a confirmed track, when it ends.
    /// A track's sighting; `parcelId`: the parcel it is placed in, `picturedParcel`: the same id
    /// when that parcel's picture is certain to be kept (the sighting then names it).
    public func sighting(
        _ track: Track, time: Timestamp, sessionId: String?, parcelId: String? = nil, picturedParcel: String? = nil
    ) -> AgentEvent {
        var sighting = SightingEvent(track: track, camera: camera, time: time, sessionId: sessionId)
        sighting.parcelId = parcelId
        sighting.parcelImage = picturedParcel.map {
            ImageObject.name(kind: .parcel, site: camera.site, camera: camera.id, id: $0)
        }
        return sighting.agentEvent
    }

    public func sessionStarted(_ session: Session) -> AgentEvent {
        SessionEvent(started: session, camera: camera).agentEvent
    }

    /// Exactly one per session, listing its accepted codes counted by tracks.
    public func sessionCompleted(_ session: Session, reason: SessionStopReason, at time: Timestamp) -> AgentEvent {
        SessionEvent(completed: session, reason: reason, at: time, camera: camera).agentEvent
    }

    /// `track.added`, `track.updated` or `track.removed` for live viewers; a removed track that
    /// was merged into another names it.
    public func trackEvent(
        _ kind: TrackEvent.Kind, _ track: Track, time: Timestamp, sequence: Int, mergedInto: String? = nil
    ) -> AgentEvent {
        TrackEvent(kind, track: track, camera: camera, time: time, sequence: sequence, mergedInto: mergedInto)
            .agentEvent
    }

    /// A label seen but not decoded; `picture` is encoded and kept by the agent.
    public func noRead(_ noRead: CandidateTracker.NoRead, time: Timestamp, sessionId: String?) -> AgentEvent {
        let event = NoReadEvent(noRead, camera: camera, time: time, sessionId: sessionId)
        var routed = event.agentEvent
        routed.unsavedNoRead = AgentEvent.UnsavedNoRead(event: event, picture: noRead.image)
        return routed
    }

    /// Heartbeat number `sequence` of the run.
    public func status(_ status: AgentStatus, time: Timestamp, sequence: Int) -> AgentEvent {
        StatusEvent(status: status, camera: camera, time: time, sequence: sequence).agentEvent
    }
}

extension SightingStatus {
    public init(_ decision: TrackDecision) { self = decision.accepted ? .accepted : .rejected }
}

extension SightingEvent {
    /// The sighting of a track that ended at `time`.
    public init(track: Track, camera: CameraIdentity, time: Timestamp, sessionId: String?) {
        let value = EncodedValue(bytes: track.value)
        let decision = track.decision ?? .acceptedByDefault
        self.init(
            envelope: EventEnvelope(
                type: "sighting", eventId: track.id + ".sighting", site: camera.site, camera: camera.id, time: time),
            trackId: track.id, symbology: track.symbology.rawValue, value: value.eventString,
            valueEncoding: value.encoding, status: SightingStatus(decision), ruleId: decision.ruleId,
            role: decision.role, firstSeen: track.firstSeen, lastSeen: track.lastSeen, firstFrame: track.firstFrame,
            lastFrame: track.lastFrame, frames: track.frames, decodes: track.decodes,
            firstBox: track.firstBox.corners, lastBox: track.lastBox.corners, lane: camera.lane,
            station: camera.station, sessionId: sessionId, gs1: track.isGS1, addOn: track.addOn,
            velocity: track.velocityPixelsPerSecond)
        gs1Elements = track.isGS1 ? GS1ElementStrings.parse(track.value, referenceYear: time.utcYear) : nil
        aim = track.symbology.aimIdentifier(gs1: track.isGS1, addOn: track.addOn != nil)
        if let printed = track.printed {
            printedSymbology = printed.symbology.rawValue
            printedValue = EncodedValue(bytes: printed.value).eventString
        }
    }
}

extension SessionEvent {
    /// `session.started` for `session`.
    public init(started session: Session, camera: CameraIdentity) {
        self.init(
            kind: .started,
            envelope: EventEnvelope(
                type: Kind.started.rawValue, eventId: session.id + ".started", site: camera.site, camera: camera.id,
                time: session.startedAt),
            sessionId: session.id, trigger: session.trigger, orderId: session.orderId, lane: camera.lane,
            station: camera.station)
    }

    /// `session.completed` for `session`, ended at `time` for `reason`.
    public init(completed session: Session, reason: SessionStopReason, at time: Timestamp, camera: CameraIdentity) {
        self.init(started: session, camera: camera)
        kind = .completed
        envelope = EventEnvelope(
            type: Kind.completed.rawValue, eventId: session.id + ".completed", site: camera.site, camera: camera.id,
            time: time)
        self.reason = reason.rawValue
        startedAt = session.startedAt
        codes = session.codes.map {
            Code(value: $0.value, symbology: $0.symbology.rawValue, trackIds: $0.trackIds, role: $0.role)
        }
    }
}

extension TrackEvent {
    /// The event for `track`; `sequence` numbers the updates of one track.
    public init(
        _ kind: Kind, track: Track, camera: CameraIdentity, time: Timestamp, sequence: Int, mergedInto: String? = nil
    ) {
        let suffix =
            switch kind {
            case .added: "added"
            case .removed: "removed"
            case .updated: "updated.\(sequence)"
            }
        let value = EncodedValue(bytes: track.value)
        self.init(
            kind: kind,
            envelope: EventEnvelope(
                type: kind.rawValue, eventId: track.id + "." + suffix, site: camera.site, camera: camera.id,
                time: time),
            trackId: track.id, symbology: track.symbology.rawValue, value: value.eventString,
            valueEncoding: value.encoding, status: track.decision.map { SightingStatus($0) },
            ruleId: track.decision?.ruleId, frame: track.lastFrame, box: track.lastBox.corners,
            velocity: track.velocityPixelsPerSecond, mergedInto: mergedInto)
    }
}

extension NoReadEvent {
    /// The no-read the candidate tracker reported at `time`; the picture is added by whoever
    /// encodes it (`imagePNG`, `image`).
    public init(_ noRead: CandidateTracker.NoRead, camera: CameraIdentity, time: Timestamp, sessionId: String?) {
        self.init(
            envelope: EventEnvelope(
                type: "noread", eventId: noRead.trackId + ".noread", site: camera.site, camera: camera.id,
                time: time),
            trackId: noRead.trackId, firstSeen: noRead.firstSeen, lastSeen: noRead.lastSeen,
            firstFrame: noRead.firstFrame, lastFrame: noRead.lastFrame, frames: noRead.frames,
            firstBox: noRead.firstBox.corners, lastBox: noRead.lastBox.corners)
        family = noRead.family?.rawValue
        reason = noRead.reason.rawValue
        lane = camera.lane
        station = camera.station
        self.sessionId = sessionId
        sharpness = noRead.sharpness
        pixelsPerModule = noRead.quality?.pixelsPerModule
        contrast = noRead.quality?.contrast
    }
}

extension ParcelEvent {
    /// The parcel the grouper closed at `time`.
    public init(_ parcel: ParcelGrouper.Parcel, camera: CameraIdentity, time: Timestamp) {
        self.init(
            envelope: EventEnvelope(
                type: "parcel", eventId: parcel.id + ".parcel", site: camera.site, camera: camera.id, time: time),
            parcelId: parcel.id, lane: camera.lane, station: camera.station, firstSeen: parcel.firstSeen,
            lastSeen: parcel.lastSeen, outline: parcel.outline.corners,
            codes: parcel.tracks.map { track in
                let value = EncodedValue(bytes: track.value)
                return Code(
                    trackId: track.id, symbology: track.symbology.rawValue, value: value.eventString,
                    valueEncoding: value.encoding == "text" ? nil : value.encoding,
                    aim: track.symbology.aimIdentifier(gs1: track.isGS1, addOn: track.addOn != nil),
                    status: SightingStatus(track.decision ?? .acceptedByDefault))
            },
            missing: parcel.missing.map(\.name), noReads: parcel.noReads)
    }
}

extension DecisionEvent {
    /// The agent's decision for its own parcel; nil when the camera is on no lane. `beltSpeed`:
    /// the belt subject's speed now (nil: the config's).
    public init?(agentParcel parcel: ParcelEvent, config: DecisionConfig, beltSpeed: Double? = nil) {
        guard let lane = parcel.lane else { return nil }
        var found: Set<DecisionReason> = []
        if parcel.noRead { found.insert(.noRead) }
        if !parcel.missing.isEmpty { found.insert(.missingRequired) }
        if parcel.codes.contains(where: { $0.status == .rejected }) { found.insert(.rejectedCode) }
        let reasons = DecisionReason.allCases.filter(found.contains)
        let speed = beltSpeed ?? config.beltSpeed
        self.init(
            envelope: EventEnvelope(
                type: "decision", eventId: parcel.parcelId + ".decision", site: parcel.site, camera: parcel.camera,
                time: parcel.time),
            lane: lane, parcelId: parcel.parcelId,
            action: reasons.contains(where: config.divertOn.contains) ? .divert : .pass, reasons: reasons,
            codes: parcel.codes.map { Code(symbology: $0.symbology, value: $0.value, valueEncoding: $0.valueEncoding) },
            lastSeen: parcel.lastSeen, closedAt: parcel.time,
            deadline: parcel.time.adding(milliseconds: Int64(config.deadlineMilliseconds)),
            divertAt: Self.divertPoint(lastSeen: parcel.lastSeen, distance: config.divertDistance, speed: speed),
            beltSpeed: speed, late: false, decidedBy: "agent")
    }
}
