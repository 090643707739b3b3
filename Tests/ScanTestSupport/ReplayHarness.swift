import Foundation
import ScanCore
import ScanSynth
import Testing

/// Runs the built `scan-agent replay` on clips and reads its events back.
public enum ReplayHarness {
    /// The scan-agent the tests run: SCANTRACK_TEST_AGENT when set (`make test` names the release
    /// build it has just made: the binary users run, and the scene replays at its speed, about ten
    /// times the debug build's), else the debug build beside the tests.
    public static let agent: String = {
        if let given = ProcessInfo.processInfo.environment["SCANTRACK_TEST_AGENT"], !given.isEmpty { return given }
        return TestEnvironment.productsDirectory + "/scan-agent"
    }()

    public static func temporaryDirectory() throws -> String { try TestEnvironment.temporaryDirectory() }

    public struct Replay {
        public var result: ProcessResult
        public var events: [JSONValue]
        public var sightings: [JSONValue] { events.filter { $0["type"] == .string("sighting") } }
    }

    /// Replays a clip; every stdout line must be one JSON object (the contract).
    public static func replay(_ clip: String, arguments: [String] = []) throws -> Replay {
        let result = try ProcessRunner.run(agent, ["replay", clip] + arguments)
        var events: [JSONValue] = []
        for line in result.stdoutText.split(separator: "\n", omittingEmptySubsequences: false) where !line.isEmpty {
            let value = try JSONValue.parse(String(line))
            guard case .object = value else { throw ReplayError(message: "stdout line is not an object: \(line)") }
            events.append(value)
        }
        return Replay(result: result, events: events)
    }

    public struct ReplayError: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// Renders a scene to a clip in a new temporary folder.
    public static func clip(of scene: SynthScene, name: String) throws -> (path: String, expected: [ExpectedCode]) {
        let renderer = try SceneRenderer(scene: scene)
        let path = try temporaryDirectory() + "/\(name).y4m"
        try renderer.writeClip(to: path)
        return (path, renderer.expectedCodes())
    }

    /// Every code wholly in view is reported exactly once; codes cut by the frame edge at most
    /// once; nothing else is reported. Returns a description of what differs (empty when right).
    public static func compare(_ sightings: [JSONValue], with expected: [ExpectedCode]) -> [String] {
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

    /// Products with one label each, moving `speed` px a frame, codes drawn at `module` px.
    public static func tuneScene(speed: Double, module: Int, symbology: SynthSymbology, values: [String], seed: UInt64)
        -> SynthScene
    {
        SynthScene(
            width: 640, height: 400, frameCount: Int(1000 / speed) + 60,
            items: values.enumerated().map { index, value in
                SynthItem(
                    name: "p\(index)", width: 300, height: 150, startX: -320 - Double(index) * 340,
                    startY: 60 + Double(index % 2) * 150, velocityX: speed,
                    labels: [SynthLabel(symbology, value, moduleSize: module, offsetX: 14, offsetY: 20)])
            }, seed: seed)
    }
}
