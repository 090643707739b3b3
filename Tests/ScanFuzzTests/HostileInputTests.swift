import ScanTestTiming
import Testing

@testable import ScanCore
@testable import ScanAgentConfig
@testable import ScanEvents
@testable import ScanReconciliation
@testable import ScanRules

/// What a printed label, a compromised camera or a careless file can put into ScanTrack: refused
/// where it enters, or shown escaped where it leaves (issue: no label, camera or neighbour can
/// take anything over).
@Suite("hostile input", .timed)
struct HostileInputTests {
    static let hostile = [
        "pack-01\r\nPUB $JS.API.STREAM.DELETE.SCANTRACK_AGENT 0\r\n", "pack 01", "a.b", "*", ">", "", "ü",
        String(repeating: "a", count: SubjectToken.maxLength + 1), "x\u{0}y", "tab\there",
    ]

    @Test("a subject token is letters, digits, '-' and '_' up to the documented length; anything else is refused")
    func tokens() throws {
        for good in ["dc1", "cam-01", "L_3", String(repeating: "a", count: SubjectToken.maxLength)] {
            #expect(SubjectToken.isValid(good), "\(good)")
        }
        for bad in Self.hostile { #expect(!SubjectToken.isValid(bad), "\(bad.debugDescription)") }
        #expect(SubjectToken.isValidSubject("_INBOX.dc1.cam-01") && !SubjectToken.isValidSubject("_INBOX.>"))
        #expect(!SubjectToken.isValidSubject("a..b") && !SubjectToken.isValidSubject("scantrack\r\n"))
        let error = #expect(throws: SubjectTokenError.self) { try SubjectToken("a\u{1B}[31mred", field: "station") }
        #expect(error?.description.hasPrefix("station: 'a\\x1B[31mred'") == true, "\(error?.description ?? "")")
    }

    @Test("every subject builder refuses a token that is not one: no CR, LF, space, dot or wildcard reaches a subject")
    func builders() throws {
        let subjects = ContractSubjects()
        for bad in Self.hostile {
            #expect(throws: SubjectTokenError.self) { try subjects.pack(site: "dc1", station: bad) }
            #expect(throws: SubjectTokenError.self) { try subjects.item(site: "dc1", lane: bad) }
            #expect(throws: SubjectTokenError.self) { try subjects.agent(.sighting, site: bad, camera: "cam-1") }
            #expect(throws: SubjectTokenError.self) { try subjects.command(site: "dc1", camera: bad, verb: "pause") }
            #expect(throws: SubjectTokenError.self) { try subjects.commands(site: bad, camera: "cam-1") }
            #expect(throws: SubjectTokenError.self) { try subjects.deadLetter(bad) }
            #expect(throws: SubjectTokenError.self) { try subjects.watch(family: nil, site: bad, camera: nil) }
        }
        #expect(throws: SubjectTokenError.self) { try ContractSubjects(prefix: "a b").item(site: "dc1", lane: "L1") }
        #expect(throws: SubjectTokenError.self) {
            try subjects.command(site: "dc1", camera: "cam-1", verb: "session.start\r\nPUB x 0")
        }
        #expect(try subjects.pack(site: "dc1", station: "pack-01") == "scantrack.v1.pack.dc1.pack-01")
        #expect(try subjects.watch(family: "item", site: nil, camera: nil) == "scantrack.v1.item.*.*")
        #expect(try subjects.deadLetter("bad-token") == "scantrack.v1.deadletter.bad-token")
    }

    static func session(station: String?, lane: String? = nil, camera: String = "cam-10") -> JSONValue {
        var writer = JSONWriter()
        writer.field("type", "session.completed")
        writer.field("eventId", "\(camera)-r-1.session.completed")
        writer.field("site", "dc1")
        writer.field("camera", camera)
        writer.field("time", "2026-11-21T08:00:00.000Z")
        writer.field("sessionId", "s-1")
        writer.field("reason", "command")
        writer.field("station", station)
        writer.field("lane", lane)
        writer.raw("codes", Array("[]".utf8))
        return (try? JSONValue.parse(writer.finished())) ?? .null
    }

    @Test("an event whose site, camera, lane or station is not a token is a bad-token dead letter naming the field")
    func badTokenEvents() throws {
        for bad in Self.hostile where !bad.isEmpty && !bad.contains("\u{0}") {
            let letter = #expect(throws: DeadLetter.self) { try SessionEvent.parse(Self.session(station: bad)) }
            #expect(letter?.reason == .badToken && letter?.detail.hasPrefix("station:") == true, "\(letter as Any)")
            let lane = #expect(throws: DeadLetter.self) {
                try SessionEvent.parse(Self.session(station: nil, lane: bad))
            }
            #expect(lane?.reason == .badToken)
            let camera = #expect(throws: DeadLetter.self) {
                try SessionEvent.parse(Self.session(station: "pack-01", camera: bad))
            }
            #expect(camera?.reason == .badToken)
        }
        #expect(try SessionEvent.parse(Self.session(station: "pack-01")).station == "pack-01")
    }

    @Test(
        "a lane or station other than the topology's for the sending camera is a mismatch; an unknown site is not checked"
    )
    func placeAgainstTopology() throws {
        let topology = try Topology.parse(
            Array(
                #"""
                {"version": 1, "sites": [{"id": "dc1",
                  "lanes": [{"id": "L1", "cameras": [{"id": "cam-01"}]}, {"id": "L2", "cameras": [{"id": "cam-02"}]}],
                  "stations": [{"id": "pack-01", "cameras": ["cam-10"]}]}]}
                """#.utf8), file: "topology.json")
        func check(_ camera: String, lane: String?, station: String?, site: String = "dc1") throws(DeadLetter) {
            try EventValidator.checkPlace(site: site, camera: camera, lane: lane, station: station, topology: topology)
        }
        try check("cam-01", lane: "L1", station: nil)
        try check("cam-01", lane: nil, station: nil)
        try check("cam-10", lane: nil, station: "pack-01")
        try check("cam-99", lane: "L1", station: "pack-01", site: "dc9")
        let lane = #expect(throws: DeadLetter.self) { try check("cam-01", lane: "L2", station: nil) }
        #expect(lane?.reason == .laneMismatch && lane?.detail.contains("on lane 'L1'") == true)
        let nowhere = #expect(throws: DeadLetter.self) { try check("cam-77", lane: "L2", station: nil) }
        #expect(nowhere?.reason == .laneMismatch && nowhere?.detail.contains("on no lane") == true)
        let station = #expect(throws: DeadLetter.self) { try check("cam-01", lane: "L1", station: "pack-01") }
        #expect(station?.reason == .stationMismatch && station?.detail.contains("at no station") == true)
    }

    @Test("an agent config or topology with a lane, station or prefix that is not a token is refused by path")
    func configTokens() {
        let config = #"{"camera": {"id": "cam-1", "lane": "L 1", "station": "p.1"}, "nats": {"prefix": "a b"}}"#
        let errors = #expect(throws: ConfigErrors.self) { try AgentConfig.parse(Array(config.utf8), file: "a.json") }
        let paths = Set(errors?.issues.map(\.path) ?? [])
        #expect(paths == ["camera.lane", "camera.station", "nats.prefix"], "\(errors?.description ?? "")")
        let topology =
            #"{"version": 1, "sites": [{"id": "dc1", "stations": [{"id": "pack\r\n01", "cameras": ["c"]}]}]}"#
        let refused = #expect(throws: ConfigErrors.self) {
            try Topology.parse(Array(topology.utf8), file: "t.json")
        }
        #expect(refused?.issues.map(\.path) == ["sites[0].stations[0].id"])
        #expect(
            refused?.description.contains("pack\\x0D\\x0A01") == true, "shown escaped: \(refused?.description ?? "")")
        let url = #"{"camera": {"id": "cam-1"}, "nats": {"url": "http://user:hunter2@host"}}"#
        let bad = #expect(throws: ConfigErrors.self) { try AgentConfig.parse(Array(url.utf8), file: "a.json") }
        #expect(bad?.description.contains("hunter2") == false, "a refused URL is not echoed")
    }

    @Test("control characters, ESC and bidi overrides are shown escaped; plain text, tabs and other scripts are not")
    func terminalText() {
        #expect(TerminalText.escaped("4006381333931") == "4006381333931")
        #expect(TerminalText.escaped("a\u{1B}[2Jb") == "a\\x1B[2Jb")
        #expect(TerminalText.escaped("x\ry\nz") == "x\\x0Dy\\x0Az")
        #expect(TerminalText.escaped("\u{7F}\u{85}\u{9B}") == "\\x7F\\x85\\x9B")
        #expect(TerminalText.escaped("abc\u{202E}fed") == "abc\\u{202E}fed")
        #expect(TerminalText.escaped("\u{2066}\u{2069}") == "\\u{2066}\\u{2069}")
        #expect(TerminalText.escaped("Grüße\tカメラ") == "Grüße\tカメラ")
        #expect(TerminalText.escapedLines("one\u{1B}\ntwo") == "one\\x1B\ntwo")
    }

    @Test("CSV cells a spreadsheet would run as a formula get a leading quote; numbers and plain text do not")
    func spreadsheetCells() {
        #expect(SpreadsheetCell.csv("=HYPERLINK(\"http://x\")") == "\"'=HYPERLINK(\"\"http://x\"\")\"")
        #expect(SpreadsheetCell.csv("+1+2") == "'+1+2")
        #expect(SpreadsheetCell.csv("-2+3") == "'-2+3")
        #expect(SpreadsheetCell.csv("@SUM(A1)") == "'@SUM(A1)")
        #expect(SpreadsheetCell.csv("\tx") == "'\tx")
        #expect(SpreadsheetCell.csv("\rx") == "'\\x0Dx")
        #expect(SpreadsheetCell.csv("-12") == "-12" && SpreadsheetCell.csv("-0.25") == "-0.25")
        #expect(SpreadsheetCell.csv("4006381333931") == "4006381333931")
        #expect(SpreadsheetCell.csv("a,b") == "\"a,b\"")
    }

    @Test("JSON objects: a duplicate key is refused, members are capped, and 120,000 keys parse without a scan per key")
    func jsonObjects() throws {
        #expect(throws: JSONParseError.self) { try JSONValue.parse(#"{"a":1,"b":2,"a":3}"#) }
        let keys = (0..<300).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        let document = Array(("{" + keys + "}").utf8)
        let capped = #expect(throws: JSONParseError.self) { try JSONValue.parse(document, maxMembers: 256) }
        #expect(capped?.reason.contains("more than 256 members") == true)
        let letter = #expect(throws: DeadLetter.self) { try EventValidator.parse(document) }
        #expect(letter?.reason == .invalidJSON)
        let many = Array(("{" + (0..<120_000).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}").utf8)
        guard case .object(let members) = try JSONValue.parse(many, maxMembers: .max) else {
            Issue.record("not an object")
            return
        }
        #expect(members.count == 120_000)
    }

    @Test("a pattern nested 50,000 deep, longer than the limit or with stacked quantifiers is refused, not a crash")
    func regexLimits() throws {
        let deep = #expect(throws: LinearRegex.Unsupported.self) {
            try LinearRegex(String(repeating: "(", count: 50_000) + "a" + String(repeating: ")", count: 50_000))
        }
        #expect(deep?.message.contains("longer than") == true)
        let nested = #expect(throws: LinearRegex.Unsupported.self) {
            try LinearRegex(String(repeating: "(", count: 33) + "a" + String(repeating: ")", count: 33))
        }
        #expect(nested?.message.contains("nested deeper than 32") == true)
        let atLimit = try LinearRegex(String(repeating: "(", count: 32) + "a" + String(repeating: ")", count: 32))
        #expect(atLimit.matches("a"))
        #expect(
            try LinearRegex("[(((((((((((((((((((((((((((((((((((((]x").matches("(x"),
            "parentheses in a class are not groups")
        let stacked = #expect(throws: LinearRegex.Unsupported.self) {
            try LinearRegex("a" + String(repeating: "{1}", count: 600))
        }
        #expect(stacked?.message.contains("quantifiers in a row") == true)
        let ruleset =
            #"{"version": 1, "rules": [{"id": "r1", "action": "reject", "match": {"regex": "\#(String(repeating: "(", count: 40_000))"}}]}"#
        let refused = #expect(throws: ConfigErrors.self) { try Ruleset.parse(Array(ruleset.utf8), file: "rules.json") }
        #expect(refused?.issues.first?.path.hasPrefix("rules[0]") == true, "\(refused?.description ?? "")")
    }
}
