import ScanCore
import ScanVision

/// One session: a tote or an order at a pack bench, from start to completion.
public struct Session: Sendable, Equatable {
    public var id: String
    public var startedAt: Timestamp
    public var trigger: String
    public var orderId: String?
    /// Accepted codes in order of first sight, each counted by tracks.
    public var codes: [SessionCode] = []
    public var lastCodeAt: Timestamp?

    public init(id: String, startedAt: Timestamp, trigger: String, orderId: String? = nil) {
        self.id = id
        self.startedAt = startedAt
        self.trigger = trigger
        self.orderId = orderId
    }

    public struct SessionCode: Sendable, Equatable {
        public var value: String
        public var symbology: Symbology
        public var trackIds: [String]
        /// The role the rules gave the code (`order`, `tote`, `item`…), if any.
        public var role: String? = nil
        public var count: Int { trackIds.count }
    }
}

/// What the session policy reports.
public enum SessionChange: Sendable, Equatable {
    case started(Session)
    /// Exactly once per session, even when it is empty.
    case completed(Session, reason: SessionStopReason, at: Timestamp)
}

/// Session policies (docs/agent-config.md): start continuously, on command, on the first accepted code, or on
/// a code with role `order`; stop after N unique accepted codes, T seconds, T seconds without a
/// new code, on command, or at the end of the stream — whichever comes first.
/// A value type driven by (event, time): the caller supplies times, there is no clock here.
public struct SessionPolicy: Sendable {
    public let config: SessionConfig
    /// Session IDs are `<prefix>-s<n>`.
    public let idPrefix: String
    public private(set) var current: Session?
    private var counter = 0
    private var streamStarted = false

    public init(config: SessionConfig, idPrefix: String) {
        self.config = config
        self.idPrefix = idPrefix
    }

    private mutating func open(at time: Timestamp, trigger: String, orderId: String?) -> SessionChange {
        counter += 1
        let session = Session(id: "\(idPrefix)-s\(counter)", startedAt: time, trigger: trigger, orderId: orderId)
        current = session
        return .started(session)
    }

    private mutating func close(at time: Timestamp, reason: SessionStopReason) -> [SessionChange] {
        guard let session = current else { return [] }
        current = nil
        var events: [SessionChange] = [.completed(session, reason: reason, at: time)]
        // Continuous sessions follow one another at once, except after the stream ended, and after
        // an idle stop (the next starts with the next code, so an idle lane makes no empty sessions).
        if config.start == .continuous && reason != .endOfStream && reason != .idle {
            events.append(open(at: time, trigger: "continuous", orderId: nil))
        }
        return events
    }

    /// The first frame of the stream: continuous sessions start here.
    public mutating func streamStart(at time: Timestamp) -> [SessionChange] {
        guard !streamStarted else { return [] }
        streamStarted = true
        return config.start == .continuous ? [open(at: time, trigger: "continuous", orderId: nil)] : []
    }

    /// `session.start` command (optionally with the order it is for). A running session is
    /// completed first, with reason `command`.
    public mutating func startCommand(at time: Timestamp, orderId: String?) -> [SessionChange] {
        var events: [SessionChange] = []
        if current != nil {
            events += closeWithoutContinuing(at: time, reason: .command)
        }
        events.append(open(at: time, trigger: "command", orderId: orderId))
        return events
    }

    /// `session.stop` command.
    public mutating func stopCommand(at time: Timestamp) -> [SessionChange] {
        close(at: time, reason: .command)
    }

    private mutating func closeWithoutContinuing(at time: Timestamp, reason: SessionStopReason) -> [SessionChange] {
        guard let session = current else { return [] }
        current = nil
        return [.completed(session, reason: reason, at: time)]
    }

    /// A track was confirmed and accepted by the rules. Returns the session it counts in (nil when
    /// none is running or it falls in the start delay) and what happened.
    public mutating func accepted(
        _ track: Track, role: String?, at time: Timestamp
    ) -> (sessionId: String?, events: [SessionChange]) {
        var events: [SessionChange] = []
        let value = EncodedValue(bytes: track.value).eventString
        if current == nil {
            switch config.start {
            case .firstCode: events.append(open(at: time, trigger: "firstCode", orderId: nil))
            case .continuous: events.append(open(at: time, trigger: "continuous", orderId: nil))
            case .orderCode where role == "order": events.append(open(at: time, trigger: "orderCode", orderId: value))
            default: return (nil, events)
            }
        }
        guard var session = current else { return (nil, events) }
        if time.milliseconds - session.startedAt.milliseconds < config.startDelay.wholeMilliseconds {
            return (nil, events)
        }
        if let index = session.codes.firstIndex(where: { $0.value == value && $0.symbology == track.symbology }) {
            session.codes[index].trackIds.append(track.id)
        } else {
            session.codes.append(
                Session.SessionCode(value: value, symbology: track.symbology, trackIds: [track.id], role: role))
        }
        session.lastCodeAt = time
        current = session
        if let limit = config.stopAfterCodes, session.codes.count >= limit {
            events += close(at: time, reason: .count)
        }
        return (session.id, events)
    }

    /// A track folded into another (the same code seen twice) no longer counts: the keeper does.
    /// A code left without tracks leaves the session.
    public mutating func forget(trackId: String) {
        guard var session = current, let index = session.codes.firstIndex(where: { $0.trackIds.contains(trackId) })
        else { return }
        session.codes[index].trackIds.removeAll { $0 == trackId }
        if session.codes[index].trackIds.isEmpty { session.codes.remove(at: index) }
        current = session
    }

    /// Time passes (called every frame): duration and idle limits.
    public mutating func tick(at time: Timestamp) -> [SessionChange] {
        guard let session = current else { return [] }
        let elapsed = time.milliseconds - session.startedAt.milliseconds
        if let limit = config.stopAfter, elapsed >= limit.wholeMilliseconds {
            return close(at: time, reason: .duration)
        }
        if let limit = config.stopAfterIdle {
            let since = time.milliseconds - (session.lastCodeAt ?? session.startedAt).milliseconds
            if since >= limit.wholeMilliseconds { return close(at: time, reason: .idle) }
        }
        return []
    }

    /// The stream ended: a running session completes with reason `end-of-stream`.
    public mutating func endOfStream(at time: Timestamp) -> [SessionChange] {
        close(at: time, reason: .endOfStream)
    }
}
