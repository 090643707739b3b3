import Foundation
import ScanTestSupport
import ScanTestTiming
import Testing

/// The figures in the docs: the architecture diagram says what the contracts say, and the
/// benchmark plots show BENCHMARKS.md's own tables.
@Suite("docs figures: the architecture diagram and the benchmark plots", .timed)
struct DocsFiguresTests {
    static func read(_ path: String) throws -> String {
        try String(contentsOfFile: TestEnvironment.repoRoot + "/" + path, encoding: .utf8)
    }

    @Test("the architecture diagram names every program and server, and each subject family it shows is a contract's")
    func diagram() throws {
        let page = try Self.read("docs/architecture.md")
        let diagram = try #require(
            page.components(separatedBy: "```mermaid\n").dropFirst().first?.components(separatedBy: "```").first)
        #expect(diagram.hasPrefix("flowchart"))
        for part in ["scan-agent", "scan-aggregator", "scanadmin", "NATS JetStream", "PostgreSQL", "Prometheus", "WMS"]
        {
            #expect(diagram.contains(part), "\(part)")
        }
        let asyncapi = try Self.read("docs/asyncapi.yaml")
        var families = Set<String>()
        for match in diagram.matches(of: /scantrack\.v1\.(?:\{([a-z,]+)\}|([a-z]+))\./) {
            let names = match.output.1.map { $0.split(separator: ",").map(String.init) } ?? []
            families.formUnion(names + [match.output.2.map(String.init)].compactMap { $0 })
        }
        #expect(families.count >= 15, "\(families.sorted())")
        for family in families {
            #expect(asyncapi.contains("'scantrack.v1.\(family)."), "\(family) is not a subject in docs/asyncapi.yaml")
        }
    }

    @Test("BENCHMARKS.md shows the plots make bench draws, and they are drawn from its own tables")
    func benchmarkPlots() throws {
        let python = try #require(ProcessRunner.which("python3"))
        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let drawn = try ProcessRunner.run(
            python,
            [TestEnvironment.repoRoot + "/scripts/bench/plot.py", TestEnvironment.repoRoot + "/BENCHMARKS.md", dir])
        #expect(drawn.status == 0, "\(drawn.stderr)")
        let benchmarks = try Self.read("BENCHMARKS.md")
        // Bars: the replay table's 6 clips × 3, the matrix scene's 2 baselines and 3 decoders, the
        // corpus's 17 groups and the total × 3.
        for (name, bars) in [("bench-replay.svg", 18), ("bench-matrix.svg", 5), ("bench-corpus.svg", 54)] {
            let fresh = try String(contentsOfFile: dir + "/" + name, encoding: .utf8)
            #expect(fresh.components(separatedBy: "<title>").count - 1 == bars, "\(name)")
            let committed = try Self.read("docs/images/" + name)
            #expect(committed == fresh, "docs/images/\(name) is not what BENCHMARKS.md's tables draw: run make bench")
            #expect(benchmarks.contains("](docs/images/\(name))"), "BENCHMARKS.md shows \(name)")
        }
        // A report without one of the sections is refused, not drawn half.
        try "# Benchmarks\n\nnothing measured\n".write(toFile: dir + "/empty.md", atomically: true, encoding: .utf8)
        let refused = try ProcessRunner.run(
            python, [TestEnvironment.repoRoot + "/scripts/bench/plot.py", dir + "/empty.md", dir + "/none"])
        #expect(refused.status == 1 && refused.stderr.contains("no section"), "\(refused.stderr)")
    }
}
