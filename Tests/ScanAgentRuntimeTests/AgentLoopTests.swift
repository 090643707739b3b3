import Foundation
import Logging
import ScanAgentRuntime
import ScanCore
import ScanServices
import ScanTestTiming
import ScanTesting
import Testing
import ScanAgentConfig
import ScanEvents
import ScanRules
import ScanVision

/// The decoding thread's behaviour, driven step by step with fakes and a manual clock: no
/// thread, no server, no wall-clock sleep.
@Suite("agent loop", .timed)
struct AgentLoopTests {
    /// One agent loop over fakes.
    struct Rig {
        let clock = ManualClock()
        let sink = MemorySpool()
        let bus = RecordingBus()
        let source: ScriptedFrameSource
        let decoder: ScriptedDecoder
        let loop: AgentLoop
        let queue: FrameQueue

        let images = MemoryNoReadImages()

        init(
            kind: SourceConfig.Kind = .v4l2, session: SessionConfig = SessionConfig(), ruleset: Ruleset = .acceptAll,
            regions: @escaping (Int) -> [Box] = { _ in [] }, configure: (inout AgentConfig) -> Void = { _ in },
            script: @escaping (Int) -> [Detection]
        ) {
            var config = AgentConfig(camera: CameraIdentity(id: "cam-1", site: "dc1", lane: "in-1"))
            config.session = session
            config.heartbeat = .seconds(5)
            config.tracking.maxMissedFrames = 3
            configure(&config)
            source = ScriptedFrameSource(kind: kind, count: 0, start: clock.now)
            decoder = ScriptedDecoder(script, regions: regions)
            queue = FrameQueue(capacity: 2, blocking: true)
            loop = AgentLoop(
                settings: AgentLoop.Settings(config: config, runId: "r1", rulesSource: "file"), ruleset: ruleset,
                source: source,
                queue: queue, decoder: decoder, sink: sink, bus: bus, delivery: DeliveryState(), clock: clock,
                images: images, logger: Logger(label: "test"))
        }

        /// Frames `range`, each 100 ms after the one before (the clock moves with them).
        func play(_ range: Range<Int>) {
            for index in range {
                loop.applyInbox()
                loop.handle(CapturedFrame(image: ScriptedFrames.image(index), index: index, time: clock.now))
                clock.advance(by: .milliseconds(100))
                loop.heartbeatIfDue()
            }
        }

        /// Durable events written so far, parsed.
        var durable: [JSONValue] { sink.appended.compactMap { try? JSONValue.parse($0.payload) } }
        var sightings: [JSONValue] { durable.filter { $0["type"]?.stringValue == "sighting" } }
        func values(_ events: [JSONValue]) -> [String] { events.compactMap { $0["value"]?.stringValue } }
        var heartbeats: [JSONValue] { bus.core.compactMap(\.json).filter { $0["type"]?.stringValue == "status" } }
    }

    static func code(_ value: String, at frame: Int, y: Int = 40) -> Detection {
        ScriptedDecoder.code(value, x: 10 + frame * 5, y: y)
    }

    @Test(
        "the belt speed from its subject (an encoder count) places each decision's divert point; once stale, the config's speed does"
    )
    func beltFromBus() throws {
        let rig = Rig(
            configure: { config in
                config.grouping.enabled = true
                config.decision.enabled = true
                config.decision.beltFromBus = true
                config.decision.beltSpeed = 1
                config.decision.divertDistance = 2
                config.decision.pulsesPerMetre = 1_000
                config.decision.beltStaleMilliseconds = 2_500
            },
            script: { frame in
                frame < 10
                    ? [Self.code("A", at: frame)] : (20..<30).contains(frame) ? [Self.code("B", at: frame - 20)] : []
            })
        // Two encoder counts 100 ms apart on the PLC's clock, 400 pulses: 4 m/s.
        let plc = Timestamp(milliseconds: 1_700_000_000_000)
        rig.loop.inbox.post(
            belt: BeltReading(site: "dc1", lane: "in-1", time: plc, pulses: 1_000), arrived: rig.clock.now)
        rig.loop.inbox.post(
            belt: BeltReading(site: "dc1", lane: "in-1", time: plc.adding(milliseconds: 100), pulses: 1_400),
            arrived: rig.clock.now)
        rig.play(0..<40)
        let decisions = rig.durable.filter { $0["type"]?.stringValue == "decision" }
        try #require(decisions.count == 2, "\(decisions)")
        func lead(_ decision: JSONValue) -> Int64? {
            guard let at = decision["divertAt"]?.stringValue.flatMap(Timestamp.init(rfc3339:)),
                let last = decision["lastSeen"]?.stringValue.flatMap(Timestamp.init(rfc3339:))
            else { return nil }
            return at.milliseconds - last.milliseconds
        }
        // A's parcel closes about 1.5 s after the reading: 2 m at 4 m/s. B's 3.5 s after: stale,
        // so the config's 1 m/s.
        #expect(decisions[0]["beltSpeed"]?.doubleValue == 4 && lead(decisions[0]) == 500)
        #expect(decisions[1]["beltSpeed"]?.doubleValue == 1 && lead(decisions[1]) == 2_000)
    }

    @Test("a region that leaves undecoded is one noread in the spool, with its picture kept and named")
    func noRead() throws {
        // A code read from frame 0 and a torn label beside it that is only ever located.
        let rig = Rig(
            regions: { frame in
                frame < 12 ? [Box(minX: 10 + frame * 5, minY: 200, maxX: 70 + frame * 5, maxY: 240)] : []
            },
            script: { frame in frame < 12 ? [Self.code("A", at: frame)] : [] })
        rig.play(0..<20)
        let noReads = rig.durable.filter { $0["type"]?.stringValue == "noread" }
        #expect(noReads.count == 1)
        let event = try #require(noReads.first)
        #expect(event["image"]?.stringValue == "cam-1-r1-n1.png")
        #expect(rig.images.kept.map(\.name) == ["cam-1-r1-n1.png"])
        let png = try #require(event["imagePng"]?.stringValue.flatMap(Base64.decode))
        #expect(png == rig.images.kept.first?.png)
        #expect(
            rig.sink.appended.first { $0.eventId == "cam-1-r1-n1.noread" }?.subject == "scantrack.v1.noread.dc1.cam-1")
        #expect(rig.values(rig.sightings) == ["A"], "the decoded code is a sighting, not a no-read")
        #expect(rig.loop.noReads == 1)
        #expect(rig.loop.snapshot().noReads == 1 && rig.loop.snapshot().sightings == 1, "counted in the heartbeat")
    }

    @Test("a picture that cannot be kept does not hold the no-read back")
    func noReadWithoutPicture() throws {
        let rig = Rig(
            regions: { frame in frame < 10 ? [Box(minX: 100, minY: 200, maxX: 160, maxY: 240)] : [] },
            script: { _ in [] })
        rig.images.failing = true
        rig.play(0..<20)
        let event = try #require(rig.durable.first { $0["type"]?.stringValue == "noread" })
        #expect(event["image"] == nil && event["imagePng"] == nil)
    }

    @Test("pause ends the open tracks and stops decoding; resume starts again with new tracks")
    func pauseAndResume() throws {
        let rig = Rig { frame in [Self.code("A", at: frame)] }
        rig.play(0..<5)
        #expect(rig.sightings.isEmpty, "A is still in view")
        let replies = ReplyBox()
        rig.loop.inbox.post(.pause, reply: replies.keep("pause"))
        rig.play(5..<10)
        #expect(rig.loop.isPaused)
        #expect(rig.values(rig.sightings) == ["A"], "pausing ended A's track: its sighting is out")
        #expect(rig.decoder.decodedFrames == Array(0..<5), "no frame is decoded while paused")
        rig.loop.inbox.post(.resume, reply: replies.keep("resume"))
        rig.play(10..<15)
        rig.loop.finish(.streamEnded)
        #expect(rig.decoder.decodedFrames == Array(0..<5) + Array(10..<15))
        #expect(rig.values(rig.sightings) == ["A", "A"], "after resume the same code is a new track")
        let trackIds = rig.sightings.compactMap { $0["trackId"]?.stringValue }
        #expect(Set(trackIds).count == 2)
        #expect(replies["pause"]?["paused"] == .bool(true))
        #expect(replies["resume"]?["paused"] == .bool(false))
    }

    @Test("pause and resume are durable reading events on the camera's own subject, once per change")
    func readingEventsOnCommands() throws {
        let rig = Rig { _ in [] }
        let replies = ReplyBox()
        rig.play(0..<2)
        rig.loop.inbox.post(.resume, reply: replies.keep("early"))  // not paused: nothing to say
        rig.play(2..<3)
        for tag in ["p1", "p2"] { rig.loop.inbox.post(.pause, reply: replies.keep(tag)) }
        rig.play(3..<5)
        rig.loop.inbox.post(.resume, reply: replies.keep("r"))
        rig.play(5..<6)
        let readings = rig.durable.filter { ($0["type"]?.stringValue ?? "").hasPrefix("reading.") }
        #expect(readings.map { $0["type"]?.stringValue } == ["reading.paused", "reading.resumed"])
        #expect(readings.allSatisfy { $0["reason"] == .string("command") && $0["lane"] == .string("in-1") })
        #expect(readings.map { $0["eventId"]?.stringValue } == ["cam-1-r1.reading.1", "cam-1-r1.reading.2"])
        #expect(
            rig.sink.appended.filter { $0.eventId.contains(".reading.") }.map(\.subject)
                == Array(repeating: "scantrack.v1.reading.dc1.cam-1", count: 2))
    }

    @Test("a camera lost is reading.paused with its error, back is reading.resumed; a clip is never lost")
    func readingEventsOnCameraLoss() throws {
        let rig = Rig { _ in [] }
        rig.play(0..<2)
        func readings(_ rig: Rig) -> [JSONValue] {
            rig.durable.filter { ($0["type"]?.stringValue ?? "").hasPrefix("reading.") }
        }
        rig.loop.watchSource()
        #expect(readings(rig).isEmpty, "starting is not lost")
        rig.source.lose(error: "rtsp://cam:***@h/s: connection refused")
        for _ in 0..<3 { rig.loop.watchSource() }
        rig.source.back()
        for _ in 0..<3 { rig.loop.watchSource() }
        let sent = readings(rig)
        #expect(sent.map { $0["type"]?.stringValue } == ["reading.paused", "reading.resumed"])
        #expect(sent.first?["reason"] == .string("camera"))
        #expect(sent.first?["detail"] == .string("rtsp://cam:***@h/s: connection refused"))
        #expect(sent.last?["detail"] == nil)

        let clip = Rig(kind: .clip) { _ in [] }
        clip.source.lose(error: "x")
        clip.loop.watchSource()
        #expect(readings(clip).isEmpty)
    }

    @Test("a ruleset swapped between frames decides the tracks confirmed after it, not the ones before")
    func rulesSwap() throws {
        let rig = Rig { frame in
            (frame >= 2 ? [Self.code("X-1", at: frame)] : [])
                + (frame >= 8 ? [Self.code("X-2", at: frame, y: 300)] : [])
        }
        let board = rig.loop.board
        let watcher = RulesWatcher(
            feed: ScriptedRules(), inbox: rig.loop.inbox, board: board, cache: nil, origin: "rules/current",
            clock: rig.clock,
            logger: Logger(label: "test"))
        rig.play(0..<6)
        watcher.apply(
            PublishedRules(
                bytes: Array(
                    #"{"version": 1, "rules": [{"id": "no-x", "action": "reject", "match": {"prefix": "X-"}}]}"#.utf8),
                revision: 7))
        rig.play(6..<7)
        #expect(rig.loop.rulesRevision == "7", "the new ruleset runs from the next frame")
        // A broken revision is refused: the running ruleset stays and the status says why.
        watcher.apply(PublishedRules(bytes: Array(#"{"version": 1, "rules": [{"id": "bad"}]}"#.utf8), revision: 8))
        rig.play(7..<14)
        rig.loop.finish(.streamEnded)
        #expect(rig.loop.rulesRevision == "7")
        #expect(board.current.rulesError?.hasPrefix("revision 8: ") == true)
        let statuses = Dictionary(
            uniqueKeysWithValues: rig.sightings.compactMap { event in
                event["value"]?.stringValue.map { ($0, event["status"]?.stringValue ?? "") }
            })
        #expect(statuses == ["X-1": "accepted", "X-2": "rejected"])
    }

    @Test("session time limits run while no frame arrives (a camera's clock, not the frames')")
    func sessionTimerWithoutFrames() throws {
        var session = SessionConfig()
        session.start = .command
        session.stopAfter = .seconds(30)
        let rig = Rig(session: session) { _ in [] }
        rig.play(0..<3)
        let replies = ReplyBox()
        rig.loop.inbox.post(.sessionStart(orderId: "SO-1"), reply: replies.keep("start"))
        rig.loop.applyInbox()
        let sessionId = try #require(replies["start"]?["sessionId"]?.stringValue)
        rig.clock.advance(by: .seconds(29))
        rig.loop.idle()
        #expect(rig.loop.currentSessionId == sessionId, "29 s: still running")
        rig.clock.advance(by: .seconds(2))
        rig.loop.idle()
        #expect(rig.loop.currentSessionId == nil)
        let completed = try #require(rig.durable.first { $0["type"]?.stringValue == "session.completed" })
        #expect(completed["sessionId"]?.stringValue == sessionId)
        #expect(completed["reason"]?.stringValue == "duration")
        #expect(completed["orderId"]?.stringValue == "SO-1")
    }

    @Test("a clip's session timers follow the clip's time: waiting for frames does not end a session")
    func clipTimeStandsStill() throws {
        var session = SessionConfig()
        session.start = .command
        session.stopAfter = .seconds(30)
        let rig = Rig(kind: .clip, session: session) { _ in [] }
        rig.play(0..<3)
        rig.loop.inbox.post(.sessionStart(orderId: nil), reply: { _ in })
        rig.loop.applyInbox()
        rig.clock.advance(by: .seconds(60))
        rig.loop.idle()
        #expect(rig.loop.currentSessionId != nil)
    }

    @Test("heartbeats every heartbeatSeconds on the manual clock, with failed frames counted")
    func heartbeats() throws {
        let rig = Rig { frame in [Self.code("A", at: frame)] }
        rig.decoder.failing = [3, 4]
        rig.play(0..<49)  // 4.9 s
        #expect(rig.heartbeats.isEmpty)
        rig.play(49..<51)
        let first = try #require(rig.heartbeats.first)
        #expect(rig.heartbeats.count == 1)
        #expect(first["framesProcessed"]?.intValue == 48, "50 frames, 2 failed")
        #expect(first["decodeFailures"]?.intValue == 2)
        #expect(first["liveTracks"]?.intValue == 1)
        #expect(first["eventId"]?.stringValue == "cam-1-r1.status.1")
        rig.play(51..<101)
        #expect(rig.heartbeats.count == 2)
    }
}

/// Replies to posted commands, by tag.
final class ReplyBox: @unchecked Sendable {
    // @unchecked: guarded by the lock.
    private let lock = NSLock()
    private var replies: [String: JSONValue] = [:]

    func keep(_ tag: String) -> @Sendable ([UInt8]) -> Void {
        { [self] bytes in
            let parsed = try? JSONValue.parse(bytes)
            lock.withLock { replies[tag] = parsed }
        }
    }

    subscript(tag: String) -> JSONValue? { lock.withLock { replies[tag] } }
}
