import Foundation
import ScanCore
import ScanTestSupport
import ScanTestTiming
import Testing
import ScanAgentConfig
import ScanEvents

/// docs/asyncapi.yaml describes the subjects the code publishes: its references resolve (checked by
/// the same Python consumer that validates live events against it in the agent and aggregator
/// tests), its addresses are the ones ContractSubjects builds, and its enums are the code's.
@Suite("AsyncAPI document", .timed)
struct AsyncAPIDocumentTests {
    static let path = TestEnvironment.repoRoot + "/docs/asyncapi.yaml"
    static let consumer = TestEnvironment.repoRoot + "/scripts/wms_consumer.py"

    static func python() throws -> String {
        let python = TestEnvironment.repoRoot + "/.cache/venv/bin/python"
        try #require(
            FileManager.default.isExecutableFile(atPath: python), "run scripts/install-deps.sh (make test does)")
        return python
    }

    /// The value of every `key: 'value'` or `key: [a, b]` line of the document, in order.
    static func values(of key: String, in text: String) -> [String] {
        text.split(separator: "\n").compactMap { line in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix(key + ": ") else { return nil }
            return trimmed.dropFirst(key.count + 2).trimmingCharacters(in: CharacterSet(charactersIn: "'"))
        }
    }

    @Test("every reference resolves and every event subject maps to its schema and place token")
    func resolves() throws {
        let result = try ProcessRunner.run(try Self.python(), [Self.consumer, "--check-asyncapi", Self.path])
        #expect(result.status == 0, "\(result.stderr)")
        let summary = try JSONValue.parse(result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(
            summary["subjects"]
                == .object([
                    ("belt", .string("lane")), ("coded", .string("lane")), ("decision", .string("lane")),
                    ("item", .string("lane")),
                    ("measure", .string("lane")), ("noread", .string("camera")),
                    ("order", .string("")),
                    ("orderack", .string("")), ("pack", .string("station")), ("parcel", .string("camera")),
                    ("parcelpass", .string("lane")), ("preview", .string("camera")),
                    ("reading", .string("camera")),
                    ("session", .string("camera")),
                    ("sighting", .string("camera")), ("status", .string("camera")), ("track", .string("camera")),
                ]))
    }

    @Test("a document with a dangling reference or a missing schema file is refused, naming the reference")
    func refusesBroken() throws {
        let python = try Self.python()
        let text = try String(contentsOfFile: Self.path, encoding: .utf8)
        let dir = NSTemporaryDirectory() + TestEnvironment.uniqueName("asyncapi")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cases = [
            ("#/components/messages/sighting'", "#/components/messages/sightings'", "#/components/messages/sightings"),
            ("./schema/pack.schema.json", "./schema/packs.schema.json", "./schema/packs.schema.json"),
        ]
        for (old, new, named) in cases {
            #expect(text.contains(old))
            let broken = dir + "/asyncapi.yaml"
            try text.replacingOccurrences(of: old, with: new).write(toFile: broken, atomically: true, encoding: .utf8)
            try? FileManager.default.removeItem(atPath: dir + "/schema")
            try FileManager.default.copyItem(atPath: TestEnvironment.repoRoot + "/docs/schema", toPath: dir + "/schema")
            let result = try ProcessRunner.run(python, [Self.consumer, "--check-asyncapi", broken])
            #expect(result.status != 0)
            #expect(result.stderr.contains(named), "\(result.stderr)")
        }
    }

    @Test("channel addresses are the subjects the code builds; dead-letter reasons and command verbs are the code's")
    func matchesCode() throws {
        let text = try String(contentsOfFile: Self.path, encoding: .utf8)
        let subjects = ContractSubjects()
        // Built with tokens, then the tokens named as the document's placeholders.
        func placeholders(_ subject: String) -> String {
            [
                "SITE": "{site}", "CAMERA": "{camera}", "LANE": "{lane}", "STATION": "{station}", "REASON": "{reason}",
                "VERB": "{verb}",
            ].reduce(subject) { $0.replacingOccurrences(of: $1.key, with: $1.value) }
        }
        let expected =
            try [SubjectFamily.sighting, .session, .noread, .track, .status, .reading, .parcel].map {
                placeholders(try subjects.agent($0, site: "SITE", camera: "CAMERA"))
            }
            + [
                placeholders(try subjects.decision(site: "SITE", lane: "LANE")),
                placeholders(try subjects.measure(site: "SITE", lane: "LANE")),
                placeholders(try subjects.belt(site: "SITE", lane: "LANE")),
                placeholders(try subjects.item(site: "SITE", lane: "LANE")),
                placeholders(try subjects.parcelPass(site: "SITE", lane: "LANE")),
                placeholders(try subjects.coded(site: "SITE", lane: "LANE")),
                placeholders(try subjects.pack(site: "SITE", station: "STATION")),
                placeholders(try subjects.order(site: "SITE")), placeholders(try subjects.orderAck(site: "SITE")),
                placeholders(try subjects.deadLetter("REASON")),
                placeholders(try subjects.command(site: "SITE", camera: "CAMERA", verb: "VERB")), "null",
                placeholders(try subjects.agent(.preview, site: "SITE", camera: "CAMERA")),
                // The images bucket's subjects, as the agent and the aggregator build them.
                placeholders(
                    try ImageObject(kind: .parcel, site: "SITE", camera: "CAMERA", id: "ID", size: 1, sha256: [])
                        .chunkSubject
                ).replacingOccurrences(of: ".ID", with: ".{id}"),
                ImageObject.metaPrefix + ".{name}",
            ]
        #expect(Self.values(of: "address", in: text) == expected)
        let enums = Self.values(of: "enum", in: text)
        #expect(enums.count == 2)
        #expect(enums.first == "[" + DeadLetterReason.allCases.map(\.rawValue).joined(separator: ", ") + "]")
        #expect(enums.last == "[" + AgentCommand.verbs.joined(separator: ", ") + "]")
    }
}
