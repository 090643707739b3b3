import ScanTestTiming
import Testing

@testable import ScanCore
@testable import ScanRules
@testable import ScanVision

@Suite("rules", .timed)
struct RulesetTests {
    static func ruleset(_ json: String) throws -> Ruleset {
        try Ruleset.parse(Array(json.utf8), file: "rules.json")
    }

    static let camera = CameraIdentity(id: "cam-07", site: "dc1", lane: "L3")

    static func subject(
        _ value: String, _ symbology: Symbology = .ean13, at time: String, camera: CameraIdentity = camera,
        gs1: Bool = false
    )
        -> RuleSubject
    {
        RuleSubject(
            value: value, symbology: symbology, gs1: gs1, camera: camera,
            time: Timestamp(rfc3339: time) ?? Timestamp(milliseconds: 0))
    }

    static let weekdayWeekend = """
        {"version": 1, "defaultAction": "accept", "rules": [
          {"id": "weekdays-40", "priority": 10, "action": "reject", "match": {"notPrefix": "40"},
           "when": {"days": ["mon","tue","wed","thu","fri"], "timeZone": "Europe/Zurich"}},
          {"id": "weekends-41", "priority": 20, "action": "reject", "match": {"notRegex": "^41"},
           "when": {"days": ["sat","sun"], "timeZone": "Europe/Zurich"}}]}
        """

    @Test(
        "a ruleset whose patterns together are over the budget is refused once, at the rule that crossed it, named; one within it is taken"
    )
    func regexBudget() throws {
        // Each pattern about 8,000 instructions, within a pattern's own limit (20,000): twelve
        // come to 96,098, the thirteenth crosses 100,000.
        let part = "[a-z]{0,1000}"
        func ruleset(_ count: Int) -> String {
            let rules = (0..<count).map { n in
                #"{"id": "long-\#(n)", "action": "reject", "match": {"regex": "^x\#(n)\#(part)-\#(part)-\#(part)-\#(part)$"}}"#
            }
            return #"{"version": 1, "rules": [\#(rules.joined(separator: ", "))]}"#
        }
        let within = try Ruleset.parse(Array(ruleset(10).utf8), file: "rules.json")
        #expect(within.rules.count == 10)
        do {
            _ = try Ruleset.parse(Array(ruleset(20).utf8), file: "rules.json")
            Issue.record("a ruleset over the budget was accepted")
        } catch {
            #expect(error.issues.count == 1, "\(error)")
            let issue = try #require(error.issues.first)
            #expect(issue.path == "rules[12].match.regex", "\(issue)")
            #expect(issue.message.contains("rule 'long-12'") && issue.message.contains("over 100000"), "\(issue)")
        }
    }

    @Test(
        "match.ai: a GS1 code is matched by its application identifiers' data (dates as YYYY-MM-DD); bad AIs are refused by path"
    )
    func applicationIdentifiers() throws {
        let rules = try Self.ruleset(
            #"""
            {"version": 1, "defaultAction": "accept", "rules": [
              {"id": "expired-2026", "action": "reject", "match": {"ai": {"17": "^2026-", "10": "^LOT"}}}]}
            """#)
        let gs = "\u{1D}"
        let expiring = "0104012345678901" + "17261130" + "10LOT-7" + gs + "21X"
        let at = "2026-11-29T10:00:00Z"
        #expect(rules.evaluate(Self.subject(expiring, .code128, at: at, gs1: true)).decision.accepted == false)
        let later = rules.evaluate(
            Self.subject("0104012345678901" + "17270101" + "10LOT-7", .code128, at: at, gs1: true))
        #expect(later.decision.accepted)
        #expect(later.explanation.first?.contains("AI (17) '2027-01-01' does not match /^2026-/") == true, "\(later)")
        let noBatch = rules.evaluate(Self.subject("0104012345678901" + "17261130", .code128, at: at, gs1: true))
        #expect(noBatch.decision.accepted && noBatch.explanation.first?.contains("no AI (10)") == true)
        // Not GS1 data (no FNC1), or not parsing whole: no AI to match.
        #expect(rules.evaluate(Self.subject(expiring, .code128, at: at, gs1: false)).decision.accepted)
        #expect(
            rules.evaluate(Self.subject("0104012345678900" + "17261130" + "10LOT", .code128, at: at, gs1: true))
                .decision.accepted)
        do {
            _ = try Self.ruleset(
                #"{"version": 1, "rules": [{"id": "x", "action": "reject", "match": {"ai": {"1x": "a", "17": "("}}}]}"#)
            Issue.record("bad AIs accepted")
        } catch let error as ConfigErrors {
            let paths = error.issues.map(\.path)
            #expect(paths.contains("rules[0].match.ai.1x") && paths.contains("rules[0].match.ai.17"), "\(error)")
        }
        #expect(throws: ConfigErrors.self) {
            try Self.ruleset(#"{"version": 1, "rules": [{"id": "x", "action": "reject", "match": {"ai": "17"}}]}"#)
        }
    }

    @Test("weekdays accept only 40…, weekends only 41… (local time decides)")
    func weekdayWeekend() throws {
        let rules = try Self.ruleset(Self.weekdayWeekend)
        // Friday 23:30 in Zurich (22:30 UTC): a weekday.
        #expect(rules.decide(Self.subject("4006381333931", at: "2026-11-20T22:30:00Z")).accepted)
        #expect(
            rules.decide(Self.subject("4100000000126", at: "2026-11-20T22:30:00Z"))
                == TrackDecision(accepted: false, ruleId: "weekdays-40"))
        // 23:30 UTC on Friday is already Saturday 00:30 in Zurich.
        #expect(rules.decide(Self.subject("4006381333931", at: "2026-11-20T23:30:00Z")).ruleId == "weekends-41")
        #expect(rules.decide(Self.subject("4100000000126", at: "2026-11-20T23:30:00Z")).accepted)
        // Monday 00:30 in Zurich.
        #expect(rules.decide(Self.subject("4006381333931", at: "2026-11-22T23:30:00Z")).accepted)
    }

    @Test("a window across midnight belongs to the day it starts on")
    func acrossMidnight() throws {
        let rules = try Self.ruleset(
            """
            {"version": 1, "rules": [{"id": "sat-night", "action": "reject", "match": {"prefix": "9"},
              "when": {"days": ["sat"], "from": "22:00", "to": "06:00", "timeZone": "UTC"}}]}
            """)
        #expect(!rules.decide(Self.subject("9001", at: "2026-11-21T23:00:00Z")).accepted, "Saturday 23:00")
        #expect(
            !rules.decide(Self.subject("9001", at: "2026-11-22T05:59:00Z")).accepted,
            "Sunday 05:59 is still Saturday night")
        #expect(rules.decide(Self.subject("9001", at: "2026-11-22T06:00:00Z")).accepted, "06:00 ends it")
        #expect(
            rules.decide(Self.subject("9001", at: "2026-11-21T05:00:00Z")).accepted, "Saturday 05:00 is Friday night")
        #expect(rules.decide(Self.subject("9001", at: "2026-11-21T21:59:00Z")).accepted)
    }

    @Test("daylight saving: the window follows local time on both sides of the change")
    func daylightSaving() throws {
        let rules = try Self.ruleset(
            """
            {"version": 1, "rules": [{"id": "early", "action": "reject", "match": {"prefix": "5"},
              "when": {"from": "06:00", "to": "08:00", "timeZone": "Europe/Zurich"}}]}
            """)
        // 2026-03-29: clocks go from 02:00 to 03:00 (UTC+1 → UTC+2).
        #expect(!rules.decide(Self.subject("5000", at: "2026-03-28T05:30:00Z")).accepted, "06:30 CET")
        #expect(!rules.decide(Self.subject("5000", at: "2026-03-29T05:30:00Z")).accepted, "07:30 CEST")
        #expect(!rules.decide(Self.subject("5000", at: "2026-03-29T04:30:00Z")).accepted, "06:30 CEST")
        #expect(rules.decide(Self.subject("5000", at: "2026-03-29T06:30:00Z")).accepted, "08:30 CEST")
        // 2026-10-25: back from UTC+2 to UTC+1.
        #expect(!rules.decide(Self.subject("5000", at: "2026-10-25T06:30:00Z")).accepted, "07:30 CET")
        #expect(rules.decide(Self.subject("5000", at: "2026-10-25T04:30:00Z")).accepted, "05:30 CET")
    }

    @Test("priority decides, then file order; the default action applies when nothing matches")
    func priorities() throws {
        let rules = try Self.ruleset(
            """
            {"version": 1, "defaultAction": "reject", "rules": [
              {"id": "b", "priority": 20, "action": "reject", "match": {"prefix": "40"}},
              {"id": "a", "priority": 10, "action": "accept", "role": "item", "match": {"prefix": "400"}},
              {"id": "c", "priority": 20, "action": "accept", "match": {"prefix": "4"}}]}
            """)
        #expect(rules.rules.map(\.id) == ["a", "b", "c"])
        #expect(
            rules.decide(Self.subject("4001", at: "2026-11-21T08:00:00Z"))
                == TrackDecision(accepted: true, ruleId: "a", role: "item"))
        #expect(rules.decide(Self.subject("4011", at: "2026-11-21T08:00:00Z")).ruleId == "b")
        #expect(rules.decide(Self.subject("4111", at: "2026-11-21T08:00:00Z")).ruleId == "c")
        #expect(rules.decide(Self.subject("5111", at: "2026-11-21T08:00:00Z")) == TrackDecision(accepted: false))
    }

    @Test("scopes, symbologies, lengths, check digits and GS1")
    func conditions() throws {
        let rules = try Self.ruleset(
            """
            {"version": 1, "rules": [
              {"id": "scoped", "action": "reject", "match": {"prefix": "1"}, "scope": {"sites": ["dc1"], "lanes": ["L3"]}},
              {"id": "short-code128", "action": "reject", "match": {"symbologies": ["CODE-128"], "maxLength": 5}},
              {"id": "bad-check", "action": "reject", "match": {"checkDigit": "invalid"}},
              {"id": "gs1-role", "action": "accept", "role": "tote", "match": {"gs1": true, "minLength": 10}}]}
            """)
        let elsewhere = CameraIdentity(id: "cam-9", site: "dc1", lane: "L4")
        #expect(rules.decide(Self.subject("1234", .code39, at: "2026-11-21T08:00:00Z")).ruleId == "scoped")
        #expect(
            rules.decide(Self.subject("1234", .code39, at: "2026-11-21T08:00:00Z", camera: elsewhere)).ruleId == nil)
        #expect(rules.decide(Self.subject("A12", .code128, at: "2026-11-21T08:00:00Z")).ruleId == "short-code128")
        #expect(rules.decide(Self.subject("A123456", .code128, at: "2026-11-21T08:00:00Z")).ruleId == nil)
        #expect(rules.decide(Self.subject("4006381333932", .ean13, at: "2026-11-21T08:00:00Z")).ruleId == "bad-check")
        #expect(rules.decide(Self.subject("4006381333931", .ean13, at: "2026-11-21T08:00:00Z")).ruleId == nil)
        #expect(
            rules.decide(Self.subject("ABC", .qrCode, at: "2026-11-21T08:00:00Z")).ruleId == nil,
            "no check digit to judge")
        let tote = rules.decide(Self.subject("0104012345678901", .code128, at: "2026-11-21T08:00:00Z", gs1: true))
        #expect(tote == TrackDecision(accepted: true, ruleId: "gs1-role", role: "tote"))
    }

    @Test("the explanation names the deciding rule and why the others did not match")
    func explanation() throws {
        let verdict = try Self.ruleset(Self.weekdayWeekend).evaluate(
            Self.subject("4006381333931", at: "2026-11-21T10:00:00Z"))
        #expect(verdict.explanation.count == 2)
        #expect(verdict.explanation[0].contains("weekdays-40") && verdict.explanation[0].contains("no match"))
        #expect(verdict.explanation[1].contains("weekends-41") && verdict.explanation[1].contains("reject"))
    }

    @Test("a broken ruleset is refused whole, every error with its path, value and what is allowed")
    func validation() {
        let text = """
            {"version": 1, "defaultAction": "maybe", "colour": 1, "rules": [
              {"id": "a", "action": "reject", "match": {"regex": "([unclosed", "prefx": "4"}},
              {"id": "b", "action": "drop", "when": {"days": ["sat", "sun day"], "from": "25:00", "timeZone": "Mars/Olympus"}},
              {"id": "a", "action": "accept"},
              {"action": "accept", "match": {"minLength": 9, "maxLength": 3}}]}
            """
        do {
            _ = try Ruleset.parse(Array(text.utf8), file: "rules.json")
            Issue.record("a broken ruleset was accepted")
        } catch {
            let text = error.description
            for expected in [
                "rules.json: defaultAction: 'maybe' is not one of accept, reject",
                "rules.json: colour: unknown key",
                "rules[0].match.regex: '([unclosed' is not supported at 1: unterminated '[': no ']'",
                "rules[0].match.prefx: unknown key (allowed: symbologies, prefix",
                "rules[1].action: 'drop' is not one of accept, reject",
                "rules[1].when.days[1]: 'sun day' is not a day (mon, tue, wed, thu, fri, sat, sun)",
                "rules[1].when.from: '25:00' is not a time of day",
                "rules[1].when.timeZone: 'Mars/Olympus' is not an IANA time zone",
                "rules[2].id: 'a' is used by an earlier rule",
                "rules[2]: a rule needs at least one condition",
                "rules[3].id: required",
                "rules[3].match.maxLength: 3 is below minLength 9",
            ] {
                #expect(text.contains(expected), "missing: \(expected)\n\(text)")
            }
        }
    }
}
