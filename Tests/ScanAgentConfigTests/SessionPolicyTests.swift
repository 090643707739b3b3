import ScanTestTiming
import Testing

@testable import ScanCore
@testable import ScanAgentConfig
@testable import ScanVision

/// Session policies driven by a manual clock (milliseconds from a fixed start).
@Suite("sessions", .timed)
struct SessionPolicyTests {
    static let t0 = Timestamp(milliseconds: 1_795_800_000_000)
    static func at(_ seconds: Double) -> Timestamp { t0.adding(milliseconds: Int64(seconds * 1000)) }

    /// A confirmed track as the pipeline hands it over.
    static func track(_ value: String, id: String) -> Track {
        var track = Track(
            serial: 0, detection: Detection(symbology: .ean13, value: Array(value.utf8), points: []),
            box: Box(minX: 0, minY: 0, maxX: 10, maxY: 10), frame: 0, time: t0)
        track.id = id
        return track
    }

    static func completed(_ events: [SessionChange]) -> [(Session, SessionStopReason)] {
        events.compactMap { if case .completed(let session, let reason, _) = $0 { (session, reason) } else { nil } }
    }

    @Test("continuous + stop after 3 unique codes: identical items count by track, not by value")
    func countStop() {
        var config = SessionConfig()
        config.stopAfterCodes = 3
        var policy = SessionPolicy(config: config, idPrefix: "cam")
        var events = policy.streamStart(at: Self.at(0))
        #expect(events.count == 1)
        events += policy.accepted(Self.track("A", id: "t1"), role: nil, at: Self.at(1)).events
        events += policy.accepted(Self.track("A", id: "t2"), role: nil, at: Self.at(2)).events
        events += policy.accepted(Self.track("B", id: "t3"), role: nil, at: Self.at(3)).events
        #expect(Self.completed(events).isEmpty, "two unique codes so far")
        let third = policy.accepted(Self.track("C", id: "t4"), role: nil, at: Self.at(4))
        #expect(third.sessionId == "cam-s1")
        let done = Self.completed(third.events)
        #expect(done.count == 1)
        #expect(done.first?.1 == .count)
        #expect(done.first?.0.codes.map(\.value) == ["A", "B", "C"])
        #expect(done.first?.0.codes.first?.trackIds == ["t1", "t2"])
        #expect(done.first?.0.codes.first?.count == 2)
        #expect(policy.current?.id == "cam-s2", "continuous: the next session starts at once")
    }

    @Test("a track folded into another no longer counts; a code left without tracks leaves the session")
    func forgetMerged() {
        var policy = SessionPolicy(config: SessionConfig(), idPrefix: "cam")
        var events = policy.streamStart(at: Self.at(0))
        events += policy.accepted(Self.track("A", id: "t1"), role: nil, at: Self.at(1)).events
        events += policy.accepted(Self.track("A", id: "t2"), role: nil, at: Self.at(1.1)).events
        events += policy.accepted(Self.track("B", id: "t3"), role: nil, at: Self.at(2)).events
        policy.forget(trackId: "t2")
        policy.forget(trackId: "t3")
        policy.forget(trackId: "unknown")
        let done = Self.completed(policy.endOfStream(at: Self.at(3)))
        #expect(done.first?.0.codes.map(\.value) == ["A"])
        #expect(done.first?.0.codes.first?.trackIds == ["t1"])
    }

    @Test("stop after T seconds, and after T seconds without a new code")
    func timeStops() {
        var config = SessionConfig()
        config.start = .firstCode
        config.stopAfter = .seconds(10)
        config.stopAfterIdle = .seconds(3)
        var policy = SessionPolicy(config: config, idPrefix: "cam")
        #expect(policy.streamStart(at: Self.at(0)).isEmpty, "firstCode waits for a code")
        #expect(policy.tick(at: Self.at(5)).isEmpty)
        let opened = policy.accepted(Self.track("A", id: "t1"), role: nil, at: Self.at(6))
        #expect(opened.events.count == 1 && opened.sessionId != nil)
        #expect(policy.tick(at: Self.at(8.9)).isEmpty)
        #expect(Self.completed(policy.tick(at: Self.at(9))).first?.1 == .idle)
        #expect(policy.current == nil)

        _ = policy.accepted(Self.track("B", id: "t2"), role: nil, at: Self.at(20))
        for second in 21...29 {
            _ = policy.accepted(Self.track("C\(second)", id: "t\(second)"), role: nil, at: Self.at(Double(second)))
        }
        #expect(Self.completed(policy.tick(at: Self.at(29.5))).isEmpty)
        #expect(Self.completed(policy.tick(at: Self.at(30))).first?.1 == .duration)
    }

    @Test("command start and stop; a session is completed exactly once, even when empty")
    func commands() {
        var config = SessionConfig()
        config.start = .command
        var policy = SessionPolicy(config: config, idPrefix: "cam")
        #expect(policy.streamStart(at: Self.at(0)).isEmpty)
        #expect(
            policy.accepted(Self.track("A", id: "t1"), role: nil, at: Self.at(1)).sessionId == nil, "no session yet")
        let started = policy.startCommand(at: Self.at(2), orderId: "ORD-1")
        #expect(started.count == 1)
        #expect(policy.current?.orderId == "ORD-1")
        let restarted = policy.startCommand(at: Self.at(3), orderId: "ORD-2")
        #expect(Self.completed(restarted).map(\.1) == [.command], "the running one completes first")
        let stopped = Self.completed(policy.stopCommand(at: Self.at(4)))
        #expect(stopped.count == 1 && stopped.first?.0.codes.isEmpty == true)
        #expect(policy.stopCommand(at: Self.at(5)).isEmpty, "nothing left to complete")
        #expect(policy.endOfStream(at: Self.at(6)).isEmpty)
    }

    @Test("orderCode sessions start on a code with role order, which names the order")
    func orderCode() {
        var config = SessionConfig()
        config.start = .orderCode
        config.stopAfterIdle = .seconds(20)
        var policy = SessionPolicy(config: config, idPrefix: "pack")
        #expect(policy.accepted(Self.track("4006381333931", id: "t1"), role: "item", at: Self.at(1)).sessionId == nil)
        let order = policy.accepted(Self.track("ORD-77", id: "t2"), role: "order", at: Self.at(2))
        #expect(order.sessionId == "pack-s1")
        #expect(policy.current?.orderId == "ORD-77")
        _ = policy.accepted(Self.track("4006381333931", id: "t3"), role: "item", at: Self.at(3))
        let end = Self.completed(policy.endOfStream(at: Self.at(4)))
        #expect(end.first?.1 == .endOfStream)
        #expect(end.first?.0.codes.map(\.value) == ["ORD-77", "4006381333931"])
    }

    @Test("codes in the start delay are ignored")
    func startDelay() {
        var config = SessionConfig()
        config.startDelay = .seconds(2)
        var policy = SessionPolicy(config: config, idPrefix: "cam")
        _ = policy.streamStart(at: Self.at(0))
        #expect(policy.accepted(Self.track("A", id: "t1"), role: nil, at: Self.at(1.5)).sessionId == nil)
        #expect(policy.accepted(Self.track("B", id: "t2"), role: nil, at: Self.at(2)).sessionId == "cam-s1")
        #expect(policy.current?.codes.map(\.value) == ["B"])
    }

    @Test("an idle continuous lane makes no stream of empty sessions")
    func idleContinuous() {
        var config = SessionConfig()
        config.stopAfterIdle = .seconds(5)
        var policy = SessionPolicy(config: config, idPrefix: "cam")
        _ = policy.streamStart(at: Self.at(0))
        #expect(Self.completed(policy.tick(at: Self.at(5))).first?.1 == .idle)
        #expect(policy.tick(at: Self.at(60)).isEmpty)
        #expect(policy.accepted(Self.track("A", id: "t1"), role: nil, at: Self.at(61)).sessionId == "cam-s2")
    }
}
