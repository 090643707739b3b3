import Foundation
import ScanCore
import ScanSynth
import ScanTestSupport
import ScanTestTiming
import Testing

/// Rules and session policies on synthetic clips, through `scan-agent replay`, and the rules CLI.
@Suite("rules and sessions in replay", .timed)
struct RulesAndSessionsReplayTests {
    static let examples = TestEnvironment.repoRoot + "/docs/examples"

    static func write(_ text: String, to name: String) throws -> String {
        let path = try ReplayHarness.temporaryDirectory() + "/" + name
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test(
        "weekend: 40… codes rejected by the weekend rule; the session stops after 3 accepted codes",
        arguments: [
            ("2026-11-21T08:00:00Z", "41", "weekends-only-41"), ("2026-11-23T08:00:00Z", "40", "weekdays-only-40"),
        ])
    func weekendPrefixes(start: String, wanted: String, rejecting: String) throws {
        let (clip, _) = try ReplayHarness.clip(of: Scenarios.prefixes(), name: "prefixes")
        let replay = try ReplayHarness.replay(
            clip,
            arguments: [
                "--rules", Self.examples + "/weekday-weekend.json", "--config", Self.examples + "/session-3-codes.json",
                "--start", start,
            ])
        #expect(replay.result.status == 0, "\(replay.result.stderr)")
        let sightings = replay.sightings
        #expect(sightings.count == 6)
        for sighting in sightings {
            let value = sighting["value"]?.stringValue ?? ""
            if value.hasPrefix(wanted) {
                #expect(sighting["status"] == .string("accepted"))
                #expect(sighting["ruleId"] == nil)
                #expect(sighting["sessionId"]?.stringValue?.hasSuffix("-s1") == true)
            } else {
                #expect(sighting["status"] == .string("rejected"))
                #expect(sighting["ruleId"] == .string(.init(rejecting)))
                #expect(sighting["sessionId"] == nil, "rejected codes count in no session")
            }
        }
        let completed = replay.events.filter { $0["type"] == .string("session.completed") }
        let started = replay.events.filter { $0["type"] == .string("session.started") }
        #expect(started.count == 2 && completed.count == 2)
        #expect(completed.first?["reason"] == .string("count"))
        guard case .array(let codes)? = completed.first?["codes"] else {
            Issue.record("session.completed without codes")
            return
        }
        #expect(codes.count == 3)
        #expect(codes.allSatisfy { $0["value"]?.stringValue?.hasPrefix(wanted) == true && $0["count"] == .number(1) })
        #expect(completed.last?["reason"] == .string("end-of-stream"))
        // Exactly one completion per session.
        let ids = completed.compactMap { $0["sessionId"]?.stringValue }
        #expect(Set(ids).count == ids.count)
    }

    @Test("identical items in one session are counted by tracks")
    func identicalCountedByTracks() throws {
        let config = try Self.write(
            #"{"camera": {"id": "pack"}, "session": {"start": "firstCode", "stopAfterIdleSeconds": 30}}"#, to: "s.json")
        let (clip, _) = try ReplayHarness.clip(of: Scenarios.backToBack(), name: "b2b")
        let replay = try ReplayHarness.replay(clip, arguments: ["--config", config])
        let completed = replay.events.filter { $0["type"] == .string("session.completed") }
        #expect(completed.count == 1)
        guard case .array(let codes)? = completed.first?["codes"] else {
            Issue.record("no codes")
            return
        }
        #expect(codes.count == 1)
        #expect(codes.first?["count"] == .number(3))
        guard case .array(let trackIds)? = codes.first?["trackIds"] else { return }
        #expect(Set(trackIds.compactMap(\.stringValue)).count == 3)
        #expect(completed.first?["items"] == .number(3))
    }

    @Test("stop after T seconds on a clip: times come from the clip's frame rate")
    func durationStop() throws {
        let config = try Self.write(
            #"{"camera": {"id": "c"}, "session": {"start": "continuous", "stopAfterSeconds": 2}}"#, to: "d.json")
        let (clip, _) = try ReplayHarness.clip(of: Scenarios.covered(), name: "dur")  // 100 frames at 30 fps
        let replay = try ReplayHarness.replay(clip, arguments: ["--config", config, "--start", "2026-11-21T08:00:00Z"])
        let completed = replay.events.filter { $0["type"] == .string("session.completed") }
        #expect(completed.map { $0["reason"]?.stringValue ?? "" } == ["duration", "end-of-stream"])
        #expect(completed.first?["time"] == .string("2026-11-21T08:00:02.000Z"))
    }

    @Test("rules check: a good file lists its rules; a broken one exits 2 with every error")
    func rulesCheck() throws {
        let good = try ProcessRunner.run(
            ReplayHarness.agent, ["rules", "check", Self.examples + "/weekday-weekend.json"])
        #expect(good.status == 0)
        #expect(good.stdoutText.contains("4 rules"))
        let broken = try Self.write(
            #"{"version": 1, "rules": [{"id": "x", "action": "reject", "match": {"regex": "(("}, "when": {"days": ["someday"]}}]}"#,
            to: "bad.json")
        let result = try ProcessRunner.run(ReplayHarness.agent, ["rules", "check", broken])
        #expect(result.status == 2)
        #expect(result.stderr.contains("rules[0].match.regex"))
        #expect(result.stderr.contains("rules[0].when.days[0]: 'someday' is not a day"))
    }

    @Test("rules test explains the decision; exit 0 accepted, 1 rejected")
    func rulesTest() throws {
        let file = Self.examples + "/weekday-weekend.json"
        let saturday = try ProcessRunner.run(
            ReplayHarness.agent,
            ["rules", "test", file, "--code", "4006381333931", "--symbology", "EAN-13", "--at", "2026-11-21T10:00:00Z"])
        #expect(saturday.status == 1)
        #expect(saturday.stdoutText.contains("decision: rejected by rule weekends-only-41"))
        let friday = try ProcessRunner.run(
            ReplayHarness.agent,
            ["rules", "test", file, "--code", "4006381333931", "--symbology", "ean13", "--at", "2026-11-20T10:00:00Z"])
        #expect(friday.status == 0)
        #expect(friday.stdoutText.contains("outside its schedule at fri 11:00 Europe/Zurich"))
        let order = try ProcessRunner.run(
            ReplayHarness.agent, ["rules", "test", file, "--code", "ORD-42", "--symbology", "CODE-128"])
        #expect(order.stdoutText.contains("role order"))
        let bad = try ProcessRunner.run(
            ReplayHarness.agent, ["rules", "test", file, "--code", "1", "--symbology", "telepen"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--symbology 'telepen'"))
    }
}
