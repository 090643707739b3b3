import Foundation
import ScanTestSupport
import ScanTestTiming
import Testing

@testable import ScanCore
@testable import ScanAgentConfig
@testable import ScanEvents
@testable import ScanFuzz
@testable import ScanMedia
@testable import ScanReconciliation
@testable import ScanRules

/// Every input of the fuzzers' committed corpus (scripts/fuzz/corpus/TARGET/, seeds and the
/// crashes `make fuzz` found, kept as regression inputs) through its target again.
@Suite("fuzz corpus", .timed)
struct FuzzCorpusTests {
    @Test("every corpus input of every target is read without a crash", arguments: FuzzTarget.allCases)
    func replay(_ target: FuzzTarget) throws {
        let folder = TestEnvironment.repoRoot + "/scripts/fuzz/corpus/" + target.rawValue
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(!names.isEmpty, "a seed corpus for \(target.rawValue)")
        for name in names {
            let bytes = try #require(FileManager.default.contents(atPath: folder + "/" + name))
            target.run(Array(bytes))
        }
    }

    @Test("the seeds reach past the first checks: each parses as what it stands for")
    func seedsAreValid() throws {
        let root = TestEnvironment.repoRoot + "/scripts/fuzz/corpus/"
        func read(_ path: String) throws -> [UInt8] {
            Array(try #require(FileManager.default.contents(atPath: root + path)))
        }
        _ = try AgentConfig.parse(try read("agent-config/conveyor-lane.json"), file: "seed")
        _ = try Ruleset.parse(try read("ruleset/weekday-weekend.json"), file: "seed")
        _ = try Topology.parse(try read("topology/topology.json"), file: "seed")
        _ = try PGM.parse(try read("clip-headers/pgm"))
        #expect(try BMP.parse(try read("clip-headers/bmp")).width == 5)
        #expect(try BMP.parse(try read("clip-headers/bmp32")).pixels == [UInt8](repeating: 255, count: 8))
        let (pattern, text) = FuzzTarget.firstLine(try read("regex/order"))
        #expect(
            try LinearRegex(String(decoding: pattern, as: UTF8.self)).matches(String(decoding: text, as: UTF8.self)))
        var kinds: Set<String> = []
        for name in try FileManager.default.contentsOfDirectory(atPath: root + "events") {
            let event = try EventValidator.parse(try read("events/" + name), maxBytes: EventValidator.maxNoReadBytes)
            kinds.insert(event["type"]?.stringValue ?? "")
        }
        #expect(kinds.isSuperset(of: ["sighting", "noread", "status"]), "\(kinds)")
    }
}
