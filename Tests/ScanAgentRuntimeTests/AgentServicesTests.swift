import Foundation
import Logging
import ScanAgentRuntime
import ScanCore
import ScanEvents
import ScanMetrics
import ScanServices
import ScanTestTiming
import ScanTesting
import ServiceLifecycle
import Testing
import ScanAgentConfig
import ScanVision

/// The agent's services in one in-process ServiceGroup over fakes: how it ends, in what order,
/// and how the publisher drains the spool.
@Suite("agent services", .timed)
struct AgentServicesTests {
    struct Rig {
        let clock = ManualClock()
        let sink = MemorySpool()
        let bus = RecordingBus()
        let commands = ScriptedCommands()
        let rules = ScriptedRules()
        let source: ScriptedFrameSource
        let decoder: ScriptedDecoder
        let agent: AgentServices

        init(
            frames: Int, endsStream: Bool, drain: Duration = .seconds(5), queueFrames: Int = 2,
            script: @escaping (Int) -> [Detection]
        ) {
            var config = AgentConfig(camera: CameraIdentity(id: "cam-1", site: "dc1"))
            config.tracking.maxMissedFrames = 3
            config.source.queueFrames = queueFrames
            source = ScriptedFrameSource(kind: .clip, count: frames, start: clock.now, endsStream: endsStream)
            decoder = ScriptedDecoder(script)
            let parts = AgentParts(
                source: source, sink: sink, bus: bus, commands: commands, rules: rules, clock: clock, ruleCache: nil)
            agent = AgentServices(
                settings: AgentLoop.Settings(config: config, runId: "r1", rulesSource: "default"), ruleset: .acceptAll,
                parts: parts,
                decoder: decoder, checkpoint: nil, drain: drain, logger: Logger(label: "test"))
        }

        func kinds(_ published: [RecordingBus.Published]) -> [String] {
            published.compactMap { $0.json?["type"]?.stringValue }
        }
    }

    static func waitUntil(_ condition: () -> Bool) async -> Bool { await ScanTesting.waitUntil(condition) }

    /// The reply to a command sent with `tag`, once it has come.
    static func reply(_ commands: ScriptedCommands, _ tag: String) async -> JSONValue? {
        _ = await waitUntil { commands.reply(tag) != nil }
        return commands.reply(tag)
    }

    @Test("the end of a clip ends the group by itself: every durable event published in order, then the last heartbeat")
    func clipEnds() async throws {
        let rig = Rig(frames: 30, endsStream: true) { frame in
            (frame < 12 ? [ScriptedDecoder.code("A", x: frame * 5, y: 20)] : [])
                + (frame >= 8 ? [ScriptedDecoder.code("B", x: frame * 5, y: 300)] : [])
        }
        try await rig.agent.group(stopsOnSignals: false).run()
        let durable = rig.bus.durable
        #expect(
            durable.map(\.messageID) == rig.sink.appended.map { $0.subject + "/" + $0.eventId },
            "sent in spool order, each once, the message id naming the subject")
        #expect(rig.kinds(durable) == ["session.started", "sighting", "sighting", "session.completed"])
        #expect(durable.compactMap { $0.json?["value"]?.stringValue } == ["A", "B"])
        #expect(rig.sink.depth == 0)
        let last = try #require(rig.bus.published.last?.json)
        #expect(last["type"]?.stringValue == "status", "the run closes with a heartbeat")
        #expect(last["spool"]?["depth"]?.intValue == 0)
        #expect(last["source"]?["state"]?.stringValue == "ended")
        #expect(rig.bus.flushCount == 1)
        #expect(rig.decoder.decodedFrames == Array(0..<30))
    }

    @Test("the frame queue is source.queueFrames deep")
    func queueDepth() {
        #expect(Rig(frames: 1, endsStream: true) { _ in [] }.agent.queue.capacity == 2)
        #expect(Rig(frames: 1, endsStream: true, queueFrames: 4) { _ in [] }.agent.queue.capacity == 4)
    }

    @Test(
        "graceful shutdown in reverse order: capture stops, decoding ends the open track, the publisher sends it, then the heartbeat"
    )
    func shutdownOrder() async throws {
        let rig = Rig(frames: 20, endsStream: false) { frame in [ScriptedDecoder.code("A", x: frame * 5, y: 20)] }
        let group = rig.agent.group(stopsOnSignals: false)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            #expect(await Self.waitUntil { rig.decoder.decodedFrames.count == 20 })
            #expect(await Self.waitUntil { rig.bus.durable.count == 1 }, "session.started")
            #expect(rig.kinds(rig.bus.durable) == ["session.started"], "A is still in view: no sighting yet")
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(rig.kinds(rig.bus.durable) == ["session.started", "sighting", "session.completed"])
        let published = rig.bus.published
        let sighting = try #require(published.firstIndex { $0.json?["type"]?.stringValue == "sighting" })
        let lastHeartbeat = try #require(published.lastIndex { $0.json?["type"]?.stringValue == "status" })
        #expect(
            sighting < lastHeartbeat, "the publisher drained what decoding wrote at the end before the last heartbeat")
        #expect(published[lastHeartbeat].json?["spool"]?["depth"]?.intValue == 0)
        #expect(rig.source.state == .ended)
    }

    @Test("commands reach the decoding thread through the command service and are answered")
    func commandsInProcess() async throws {
        let rig = Rig(frames: 5, endsStream: false) { _ in [] }
        let group = rig.agent.group(stopsOnSignals: false)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            rig.commands.send("pause", tag: "p")
            rig.commands.send("bogus", tag: "b")
            rig.commands.send("status", tag: "s")
            #expect(await Self.reply(rig.commands, "p")?["paused"] == .bool(true))
            #expect(await Self.reply(rig.commands, "b")?["ok"] == .bool(false))
            let status = try #require(await Self.reply(rig.commands, "s"))
            #expect(status["paused"] == .bool(true))
            #expect(status["source"]?["type"]?.stringValue == "clip")
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    @Test("a ruleset published while running is picked up by the rules service and swapped in")
    func rulesInProcess() async throws {
        let rig = Rig(frames: 5, endsStream: false) { _ in [] }
        let group = rig.agent.group(stopsOnSignals: false)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            rig.rules.publish(#"{"version": 1, "defaultAction": "reject"}"#, revision: 3)
            #expect(await Self.waitUntil { rig.agent.loop.rulesRevision == "3" })
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(rig.clock.sleeps.contains(.seconds(2)), "the rules feed is polled every 2 s")
    }
}

/// The publisher's loop alone: order, retries and the bounded drain.
@Suite("spool publisher", .timed)
struct SpoolPublisherTests {
    static func filled(_ count: Int) -> MemorySpool {
        let sink = MemorySpool()
        for n in 0..<count {
            _ = sink.append(subject: "st.v1.sighting.dc1.cam-1", eventId: "e\(n)", payload: Array("{\"n\":\(n)}".utf8))
        }
        return sink
    }

    @Test("failures are retried with a doubling backoff (with jitter); every event goes out once, in spool order")
    func retriesInOrder() async throws {
        let sink = Self.filled(250)
        let bus = RecordingBus()
        let clock = ManualClock()
        let delivery = DeliveryState()
        bus.failNext(4)
        let publisher = SpoolPublisher(
            sink: sink, bus: bus, delivery: delivery, clock: clock, drain: .seconds(5), logger: Logger(label: "test"))
        let stop = StopToken()
        let worker = BackgroundWorker.running("publisher") { publisher.run(stop: stop) }
        #expect(await AgentServicesTests.waitUntil { sink.depth == 0 })
        stop.stop()
        worker.wait()
        #expect(bus.durable.map(\.messageID) == (0..<250).map { "st.v1.sighting.dc1.cam-1/e\($0)" })
        #expect(delivery.published == 250)
        // 0.25, 0.5, 1 and 2 s, each moved by up to ±20 % (RetryPolicy.backoff's jitter).
        let expected: [Duration] = [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2)]
        let waits = Array(clock.sleeps.prefix(4))
        #expect(waits.count == 4, "\(clock.sleeps)")
        for (wait, nominal) in zip(waits, expected) {
            #expect(wait >= nominal * 0.8 && wait <= nominal * 1.2, "\(waits)")
        }
        #expect(sink.cursorSaves >= 3, "the cursor is saved after every round")
    }

    @Test(
        "a spooled event for a subject not the agent's own (another camera's, another prefix) is logged and never sent")
    func foreignSubjects() throws {
        let sink = MemorySpool()
        let own = "st.v1.sighting.dc1.cam-1"
        for (n, subject) in [own, "st.v1.sighting.dc1.cam-2", "st.v1.decision.dc1.L9", "$JS.API.STREAM.DELETE.X", own]
            .enumerated()
        {
            _ = sink.append(subject: subject, eventId: "e\(n)", payload: Array("{\"n\":\(n)}".utf8))
        }
        let bus = RecordingBus()
        let logs = LogRecorder()
        let publisher = SpoolPublisher(
            sink: sink, bus: bus, delivery: DeliveryState(), clock: ManualClock(), drain: .seconds(5),
            logger: logs.logger(), subjects: [own, "st.v1.decision.dc1.L1"])
        let stop = StopToken()
        stop.stop()
        publisher.run(stop: stop)
        #expect(bus.durable.map(\.subject) == [own, own])
        #expect(sink.depth == 0, "the foreign ones are stepped over, not retried")
        #expect(logs.messages.filter { $0.contains("not this agent's") }.count == 3, "\(logs.messages)")
    }

    @Test("each decision sent is counted by action and by whether it went out past its deadline")
    func decisionsCounted() throws {
        ScanMetrics.bootstrap()
        let camera = CameraIdentity(id: "cam-decisions", site: "dcm", lane: "L1")
        let subject = "st.v1.decision.dcm.L1"
        let clock = ManualClock()
        let sink = MemorySpool()
        // Two diverts whose deadline passed while they waited in the spool, one pass still in time.
        for (n, (action, deadline)) in [
            (DecisionEvent.Action.divert, -1_000), (.divert, -10), (.pass, 60_000),
        ].enumerated() {
            let decision = DecisionEvent(
                envelope: EventEnvelope(
                    type: "decision", eventId: "p\(n).decision", site: "dcm", camera: camera.id,
                    time: clock.now.adding(milliseconds: -2_000)),
                lane: "L1", parcelId: "p\(n)", action: action, reasons: action == .divert ? [.noRead] : [], codes: [],
                lastSeen: clock.now.adding(milliseconds: -2_000), closedAt: clock.now.adding(milliseconds: -2_000),
                deadline: clock.now.adding(milliseconds: Int64(deadline)), divertAt: nil, beltSpeed: nil, late: false,
                decidedBy: "agent")
            _ = sink.append(subject: subject, eventId: decision.eventId, payload: decision.json)
        }
        let bus = RecordingBus()
        let publisher = SpoolPublisher(
            sink: sink, bus: bus, delivery: DeliveryState(), clock: clock, drain: .seconds(5),
            logger: Logger(label: "test"), metrics: AgentMetrics(camera: camera), decisions: subject,
            subjects: [subject])
        let stop = StopToken()
        stop.stop()
        publisher.run(stop: stop)
        #expect(bus.durable.count == 3)
        let exposition = ScanMetrics.text()
        func count(_ action: String, late: Bool) -> Double? {
            let series =
                #"scantrack_agent_decisions_total{site="dcm",camera="cam-decisions",action="\#(action)",late="\#(late)"} "#
            return exposition.split(separator: "\n").first { $0.hasPrefix(series) }.flatMap {
                Double($0.dropFirst(series.count))
            }
        }
        #expect(
            count("divert", late: true) == 2, "\(exposition.split(separator: "\n").filter { $0.contains("decisions") })"
        )
        #expect(count("pass", late: false) == 1)
        #expect(count("divert", late: false) == nil && count("pass", late: true) == nil)
    }

    @Test("at shutdown with the bus down the drain gives up after its time; the events stay in the spool")
    func boundedDrain() throws {
        let sink = Self.filled(10)
        let bus = RecordingBus()
        bus.setDown(true)
        let clock = ManualClock()
        let closed = Flag()
        let publisher = SpoolPublisher(
            sink: sink, bus: bus, delivery: DeliveryState(), clock: clock, drain: .seconds(3),
            logger: Logger(label: "test"),
            afterDrain: { closed.set() })
        let stop = StopToken()
        stop.stop()
        publisher.run(stop: stop)
        #expect(sink.depth == 10)
        #expect(bus.durable.isEmpty)
        #expect(closed.isSet, "the run is closed even when the drain gave up")
        #expect(clock.elapsed >= .seconds(3) && clock.elapsed < .seconds(4))
        // It waited by the backoff, not in a spin: a handful of pauses (0.25, 0.5, 1, 2 s, cut to
        // what was left), not one every few microseconds.
        #expect(clock.sleeps.count <= 8, "\(clock.sleeps)")
    }

    @Test(
        "with the bus not connected the log says the server refused or cannot be reached, not the client's error of the moment"
    )
    func unreachableSaysSo() throws {
        let sink = Self.filled(3)
        let bus = RecordingBus()
        bus.setDown(true)
        let logs = LogRecorder()
        let publisher = SpoolPublisher(
            sink: sink, bus: bus, delivery: DeliveryState(), clock: ManualClock(), drain: .seconds(1),
            logger: logs.logger())
        let stop = StopToken()
        stop.stop()
        publisher.run(stop: stop)
        let warnings = logs.messagesWithMetadata.filter { $0.contains("unavailable") }
        #expect(!warnings.isEmpty, "\(logs.messagesWithMetadata)")
        for warning in warnings {
            #expect(warning.contains("refused the connection or cannot be reached"), "\(warning)")
            #expect(warning.contains(bus.address), "\(warning)")
        }
    }
}

final class Flag: @unchecked Sendable {
    // @unchecked: guarded by the lock.
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

@Suite("the agent's watchdog rule", .timed)
struct AgentWatchdogRuleTests {
    @Test(
        "fed when the loop went round and frames came, or the camera is being reopened or waits for triggers; not when frames stopped on a streaming free-running camera or the loop is stuck"
    )
    func rule() {
        typealias Case = (looped: Bool, framed: Bool, source: SourceStatus, frameDriven: Bool, fed: Bool)
        let cases: [Case] = [
            (true, true, .streaming, true, true),
            (true, false, .streaming, true, false),
            (true, false, .reconnecting, true, true),
            (true, false, .starting, true, true),
            (true, false, .streaming, false, true),
            (false, true, .streaming, true, false),
            (false, false, .reconnecting, true, false),
        ]
        for c in cases {
            #expect(
                AgentLoop.doingItsJob(looped: c.looped, framed: c.framed, source: c.source, frameDriven: c.frameDriven)
                    == c.fed, "\(c)")
        }
    }
}
