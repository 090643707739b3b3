import Foundation
import ScanCore
import ScanSynth
import ScanTestSupport
import Testing

/// Runs the built `scan-agent replay` on clips and reads its events back.
enum ReplayHarness {
    static var agent: String { TestEnvironment.productsDirectory + "/scan-agent" }

    static func temporaryDirectory() throws -> String { try TestEnvironment.temporaryDirectory() }

    struct Replay {
        var result: ProcessResult
        var events: [JSONValue]
        var sightings: [JSONValue] { events.filter { $0["type"] == .string("sighting") } }
    }

    /// Replays a clip; every stdout line must be one JSON object (the contract).
    static func replay(_ clip: String, arguments: [String] = []) throws -> Replay {
        let result = try ProcessRunner.run(agent, ["replay", clip] + arguments)
        var events: [JSONValue] = []
        for line in result.stdoutText.split(separator: "\n", omittingEmptySubsequences: false) where !line.isEmpty {
            let value = try JSONValue.parse(String(line))
            guard case .object = value else { throw ReplayError(message: "stdout line is not an object: \(line)") }
            events.append(value)
        }
        return Replay(result: result, events: events)
    }

    struct ReplayError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// Renders a scene to a clip in a new temporary folder.
    static func clip(of scene: SynthScene, name: String) throws -> (path: String, expected: [ExpectedCode]) {
        let renderer = try SceneRenderer(scene: scene)
        let path = try temporaryDirectory() + "/\(name).y4m"
        try renderer.writeClip(to: path)
        return (path, renderer.expectedCodes())
    }

    /// Every code wholly in view is reported exactly once; codes cut by the frame edge at most
    /// once; nothing else is reported. Returns a description of what differs (empty when right).
    static func compare(_ sightings: [JSONValue], with expected: [ExpectedCode]) -> [String] {
        var reported: [String: Int] = [:]
        for sighting in sightings { reported[sighting["value"]?.stringValue ?? "?", default: 0] += 1 }
        var whole: [String: Int] = [:]
        var partial: [String: Int] = [:]
        for code in expected {
            if code.partial { partial[code.value, default: 0] += 1 } else { whole[code.value, default: 0] += 1 }
        }
        var problems: [String] = []
        for (value, count) in whole
        where !(count...(count + partial[value, default: 0])).contains(reported[value, default: 0]) {
            problems.append("\(value): expected \(count), reported \(reported[value, default: 0])")
        }
        for (value, count) in reported where count > whole[value, default: 0] + partial[value, default: 0] {
            problems.append("\(value): reported \(count), not that many in view")
        }
        return problems
    }
}
