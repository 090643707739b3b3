import ScanAgentConfig
import ScanCore
import ScanEvents
import ScanPipeline
import ScanRules
import ScanTestTiming
import ScanVision
import Testing

/// The agent's divert decision for each of its parcels, from scripted reads: one per parcel,
/// right after it, `divert` with every reason found, the deadline and the divert point.
@Suite("divert decisions", .timed)
struct DecisionTests {
    typealias Code = ParcelGroupingTests

    static func pipeline(
        require: [String] = ["GS1-128"], divertOn: Set<DecisionReason>? = nil, rules: Ruleset = .acceptAll
    ) -> ScanPipeline {
        var grouping = GroupingConfig()
        grouping.enabled = true
        grouping.require = require.compactMap(GroupingConfig.Requirement.init(name:))
        var decision = DecisionConfig()
        decision.enabled = true
        decision.deadlineMilliseconds = 150
        decision.beltSpeed = 2
        decision.divertDistance = 3
        if let divertOn { decision.divertOn = divertOn }
        var tracking = TrackingConfig()
        tracking.maxMissedFrames = 3
        var noread = NoReadConfig()
        noread.minFrames = 3
        return ScanPipeline(
            camera: CameraIdentity(id: "cam-1", site: "dc1", lane: "L1"), tracking: tracking, rules: rules,
            noread: noread, grouping: grouping, decision: decision, idPrefix: "cam-1-r")
    }

    static func sscc(_ value: String, x: Int, y: Int, frame: Int) -> Detection {
        let left = x + frame * 6
        return Detection(
            symbology: .code128, value: Array(value.utf8),
            points: [
                Point(x: left, y: y), Point(x: left, y: y + 30), Point(x: left + 160, y: y + 30),
                Point(x: left + 160, y: y),
            ],
            isGS1: true, alongRows: true)
    }

    static func run(_ pipeline: inout ScanPipeline, frames: Int, _ script: (Int) -> [Detection]) -> [AgentEvent] {
        var events: [AgentEvent] = []
        for frame in 0..<frames {
            events += pipeline.process(frame: frame, time: Code.time(frame), detections: script(frame))
        }
        return events + pipeline.finish(time: Code.time(frames))
    }

    @Test(
        "each parcel gets one decision right after its parcel event: pass when complete, divert naming the missing code or the rejected one"
    )
    func decisions() throws {
        let rules = try Ruleset.parse(
            Array(
                #"{"version": 1, "defaultAction": "accept", "rules": [{"id": "no-x", "priority": 1, "action": "reject", "match": {"prefix": "X"}}]}"#
                    .utf8), file: "r.json")
        var pipeline = Self.pipeline(rules: rules)
        // P: an SSCC and a QR (complete); Q, 200 px below: a QR alone (no SSCC); R, 400 px below:
        // an SSCC and a rejected QR.
        let events = Self.run(&pipeline, frames: 40) { frame in
            [
                Self.sscc("00012345678901234567", x: 40, y: 40, frame: frame),
                Code.code("A1", x: 220, y: 40, frame: frame),
                Code.code("B1", x: 40, y: 240, frame: frame),
                Self.sscc("00012345678901234574", x: 40, y: 440, frame: frame),
                Code.code("X9", x: 220, y: 440, frame: frame),
            ]
        }
        let parcels = try events.filter { $0.kind == .parcel }.map { try ParcelEvent.parse(JSONValue.parse($0.json)) }
        let decisions = try events.filter { $0.kind == .decision }.map {
            try DecisionEvent.parse(JSONValue.parse($0.json))
        }
        #expect(parcels.count == 3 && decisions.count == 3)
        // Each decision follows its own parcel's event, and names it.
        for (index, event) in events.enumerated() where event.kind == .decision {
            let decision = try DecisionEvent.parse(JSONValue.parse(event.json))
            let before = try ParcelEvent.parse(JSONValue.parse(events[index - 1].json))
            #expect(events[index - 1].kind == .parcel && before.parcelId == decision.parcelId)
            #expect(decision.closedAt == before.time && decision.lastSeen == before.lastSeen)
            #expect(decision.deadline == before.time.adding(milliseconds: 150))
            #expect(decision.divertAt == before.lastSeen.adding(milliseconds: 1500))
            #expect(decision.lane == "L1" && decision.site == "dc1" && !decision.late && decision.decidedBy == "agent")
            #expect(Set(decision.codes.map(\.value)) == Set(before.codes.map(\.value)))
        }
        func decision(with value: String) -> DecisionEvent? {
            decisions.first { $0.codes.contains { $0.value == value } }
        }
        #expect(decision(with: "A1")?.action == .pass && decision(with: "A1")?.reasons == [])
        #expect(decision(with: "B1")?.action == .divert && decision(with: "B1")?.reasons == [.missingRequired])
        #expect(decision(with: "X9")?.action == .divert && decision(with: "X9")?.reasons == [.rejectedCode])
    }

    @Test("a no-read parcel is diverted as no-read; a reason left out of divertOn is reported on a pass")
    func noReadAndDivertOn() throws {
        var pipeline = Self.pipeline(require: [], divertOn: [.noRead])
        let rules = try Ruleset.parse(
            Array(
                #"{"version": 1, "defaultAction": "accept", "rules": [{"id": "no-x", "priority": 1, "action": "reject", "match": {"prefix": "X"}}]}"#
                    .utf8), file: "r.json")
        pipeline.rules = rules
        var events: [AgentEvent] = []
        for frame in 0..<30 {
            // An unreadable label 260 px under the read code, moving alike, in view 25 frames.
            let located = LocatedRegions(
                regions: frame < 25 ? [CandidateTrackerTests.bars(x: 40 + frame * 6, y: 300)] : [],
                area: CandidateTrackerTests.area, image: CandidateTrackerTests.frame)
            events += pipeline.process(
                frame: frame, time: Code.time(frame), detections: [Code.code("X1", x: 40, y: 40, frame: frame)],
                located: located)
        }
        events += pipeline.finish(time: Code.time(30))
        let decisions = try events.filter { $0.kind == .decision }.map {
            try DecisionEvent.parse(JSONValue.parse($0.json))
        }
        #expect(decisions.count == 2, "\(decisions)")
        #expect(decisions.contains { $0.action == .divert && $0.reasons == [.noRead] && $0.codes.isEmpty })
        #expect(decisions.contains { $0.action == .pass && $0.reasons == [.rejectedCode] })
    }

    @Test("decisions off, or grouping off: no decision events; the config refuses decisions without grouping or a lane")
    func offAndConfig() throws {
        var grouping = GroupingConfig()
        grouping.enabled = true
        var pipeline = ScanPipeline(
            camera: CameraIdentity(id: "cam-1", site: "dc1", lane: "L1"), grouping: grouping, idPrefix: "cam-1-r")
        let events = Self.run(&pipeline, frames: 30) { frame in [Code.code("A", x: 40, y: 40, frame: frame)] }
        #expect(events.contains { $0.kind == .parcel } && !events.contains { $0.kind == .decision })

        let good = try AgentConfig.parse(
            Array(
                #"{"camera": {"id": "c", "lane": "L1"}, "grouping": {"enabled": true}, "decision": {"enabled": true, "deadlineMs": 80, "beltSpeed": 1.5, "divertDistance": 2, "divertOn": ["no-read"]}}"#
                    .utf8), file: "c.json")
        #expect(
            good.decision.enabled && good.decision.deadlineMilliseconds == 80 && good.decision.divertOn == [.noRead])
        for (text, path) in [
            (#"{"camera": {"id": "c", "lane": "L1"}, "decision": {"enabled": true}}"#, "decision.enabled"),
            (
                #"{"camera": {"id": "c"}, "grouping": {"enabled": true}, "decision": {"enabled": true}}"#,
                "decision.enabled"
            ),
            (
                #"{"camera": {"id": "c", "lane": "L1"}, "decision": {"divertOn": ["short-pack"]}}"#,
                "decision.divertOn[0]"
            ),
            (#"{"camera": {"id": "c", "lane": "L1"}, "decision": {"deadlineMs": 0}}"#, "decision.deadlineMs"),
        ] {
            do {
                _ = try AgentConfig.parse(Array(text.utf8), file: "c.json")
                Issue.record("accepted: \(text)")
            } catch {
                #expect("\(error)".contains(path), "\(error)")
            }
        }
    }

    @Test(
        "a decision sent after its deadline goes out marked late, once; one in time and other events are left as they are"
    )
    func late() throws {
        var pipeline = Self.pipeline(require: [])
        let events = Self.run(&pipeline, frames: 30) { frame in [Code.code("A", x: 40, y: 40, frame: frame)] }
        let event = try #require(events.first { $0.kind == .decision })
        let decision = try DecisionEvent.parse(JSONValue.parse(event.json))
        #expect(DecisionEvent.sending(event.json, at: decision.deadline) == event.json)
        let late = DecisionEvent.sending(event.json, at: decision.deadline.adding(milliseconds: 1))
        let parsed = try DecisionEvent.parse(JSONValue.parse(late))
        #expect(parsed.late && parsed.eventId == decision.eventId && parsed.action == decision.action)
        #expect(DecisionEvent.sending(late, at: decision.deadline.adding(milliseconds: 5000)) == late)
        let parcel = try #require(events.first { $0.kind == .parcel })
        #expect(DecisionEvent.sending(parcel.json, at: decision.deadline.adding(milliseconds: 5000)) == parcel.json)
    }
}
