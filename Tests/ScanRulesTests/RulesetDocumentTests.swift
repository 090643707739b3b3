import ScanTestTiming
import Testing

@testable import ScanCore
@testable import ScanRules

@Suite("ruleset document", .timed)
struct RulesetDocumentTests {
    static func document(_ text: String) throws -> RulesetDocument {
        RulesetDocument(try JSONValue.parse(Array(text.utf8)))
    }

    @Test("merge replaces rules by id in place, appends new ones, takes a given default action, keeps the version")
    func merge() throws {
        var current = try Self.document(
            #"{"version": 1, "defaultAction": "accept", "rules": [{"id": "a", "action": "reject", "match": {"prefix": "1"}}, {"id": "b", "action": "reject", "match": {"prefix": "2"}}]}"#
        )
        let incoming = try Self.document(
            #"{"version": 1, "defaultAction": "reject", "rules": [{"id": "b", "action": "accept", "match": {"prefix": "3"}}, {"id": "c", "action": "reject", "match": {"prefix": "4"}}]}"#
        )
        let result = current.merge(incoming)
        #expect(result.added == ["c"])
        #expect(result.replaced == ["b"])
        #expect(result.description == "added c; replaced b; default action reject")
        #expect(current.rules.compactMap { $0["id"]?.stringValue } == ["a", "b", "c"])
        #expect(current.rules[1]["action"]?.stringValue == "accept")
        #expect(current.document["defaultAction"]?.stringValue == "reject")
        #expect(current.document["version"] == .number(1))
        let parsed = try Ruleset.parse(Array(current.document.serialized.utf8), file: "merged")
        #expect(parsed.rules.count == 3)
    }

    @Test("without a default action in the file, the current one stays; remove drops one rule or reports none")
    func keepDefaultAndRemove() throws {
        var current = try Self.document(
            #"{"version": 1, "defaultAction": "reject", "rules": [{"id": "a", "action": "accept", "match": {"prefix": "1"}}]}"#
        )
        let result = current.merge(
            try Self.document(#"{"version": 1, "rules": [{"id": "z", "action": "accept", "match": {"prefix": "9"}}]}"#))
        #expect(result.description == "added z")
        #expect(current.document["defaultAction"]?.stringValue == "reject")
        let removed = current.remove(id: "a")
        let again = current.remove(id: "a")
        #expect(removed)
        #expect(!again)
        #expect(current.rules.compactMap { $0["id"]?.stringValue } == ["z"])
        var empty = RulesetDocument.empty
        let removedFromEmpty = empty.remove(id: "a")
        #expect(!removedFromEmpty)
        #expect(empty.rules.isEmpty)
    }
}
