import Foundation
import ScanCore
import ScanTestSupport
import ScanTestTiming
import Testing

/// docs/schema's schemas of the files people write (topology, ruleset, order, agent config) against every example
/// the repository ships, with the Python `jsonschema` package (Draft 2020-12) a user's editor or CI
/// would use; and against broken copies, so that a schema that accepts anything fails too.
@Suite("file schemas: every shipped example validates", .timed)
struct FileSchemaTests {
    static let script = #"""
        import glob, json, sys
        import jsonschema
        root = sys.argv[1]
        def schema(name):
            document = json.load(open(f"{root}/docs/schema/{name}.schema.json"))
            jsonschema.Draft202012Validator.check_schema(document)
            return jsonschema.Draft202012Validator(document)
        schemas = {name: schema(name) for name in ["topology", "ruleset", "order", "agent-config"]}
        def kind(document):
            if "sites" in document: return "topology"
            if "rules" in document or "defaultAction" in document: return "ruleset"
            if document.get("type") == "order": return "order"
            if "camera" in document and isinstance(document["camera"], dict): return "agent-config"
            return None
        result = {"checked": {}, "errors": {}, "refused": {}}
        files = sorted(set(glob.glob(f"{root}/docs/**/*.json", recursive=True) + glob.glob(f"{root}/scripts/**/*.json", recursive=True)
                           + glob.glob(f"{root}/docker/**/*.json", recursive=True)))
        for path in files:
            if "/docs/schema/" in path or "/scripts/fuzz/" in path: continue  # the fuzz corpus is arbitrary input
            document = json.load(open(path))
            name = kind(document) if isinstance(document, dict) else None
            if name is None: continue
            relative = path[len(root) + 1:]
            result["checked"][relative] = name
            errors = [f"{'/'.join(map(str, e.path))}: {e.message}" for e in schemas[name].iter_errors(document)]
            if errors: result["errors"][relative] = errors
        broken = {
            "topology": {"sites": [{"id": "dc1", "lanes": [{"id": "L1", "cameras": [{"id": "a"}, {"id": "b"}]}]}]},
            "topology-decision": {"sites": [{"id": "dc1", "lanes": [{"id": "L1", "cameras": [{"id": "a"}],
                                  "decision": {"divertOn": ["lunch"]}}]}]},
            "ruleset": {"version": 1, "rules": [{"id": "r", "action": "drop", "match": {"prefix": "40"}}]},
            "ruleset-no-condition": {"version": 1, "rules": [{"id": "r", "action": "reject"}]},
            "order": {"type": "order"},
            "agent-config": {"camera": {"id": "cam-01"}, "source": {"type": "usb"}},
            "agent-config-unknown-key": {"camera": {"id": "cam-01"}, "decoder": {"symbology": ["EAN-13"]}},
        }
        for label, document in broken.items():
            name = next(n for n in ["agent-config", "topology", "ruleset", "order"] if label.startswith(n))
            result["refused"][label] = not schemas[name].is_valid(document)
        print(json.dumps(result))
        """#

    @Test(
        "topologies, rulesets, orders and agent configs in docs/, scripts/ and docker/ are valid; broken ones are not")
    func examples() throws {
        let python = try AsyncAPIDocumentTests.python()
        let run = try ProcessRunner.run(python, ["-c", Self.script, TestEnvironment.repoRoot])
        #expect(run.status == 0, "\(run.stderr)")
        let result = try JSONValue.parse(run.stdout)
        guard case .object(let checked)? = result["checked"] else {
            Issue.record("no result: \(run.stdoutText)")
            return
        }
        let kinds = Set(checked.compactMap { $0.1.stringValue })
        #expect(kinds == ["topology", "ruleset", "order", "agent-config"], "\(checked)")
        #expect(checked.count >= 9, "\(checked)")
        #expect(result["errors"] == .object([]), "\(run.stdoutText)")
        guard case .object(let refused)? = result["refused"] else {
            Issue.record("no refusals: \(run.stdoutText)")
            return
        }
        #expect(refused.count == 7 && refused.allSatisfy { $0.1 == .bool(true) }, "\(refused)")
    }
}
