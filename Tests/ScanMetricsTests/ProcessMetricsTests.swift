import Foundation
import ScanTestSupport
import ScanTestTiming
import Testing

@testable import ScanMetrics

@Suite("process metrics from /proc", .timed)
struct ProcessMetricsTests {
    @Test("the fields are counted from the last ')': a program name with spaces and parentheses does not shift them")
    func parsesAroundTheName() {
        // pid (comm) state ppid … utime(14) stime(15) … threads(20) … starttime(22) vsize(23) rss(24)
        var fields = (3...52).map { String($0 * 10) }
        fields[0] = "S"
        fields[14 - 3] = "250"  // utime: 2.5 s at 100 ticks a second
        fields[15 - 3] = "50"  // stime: 0.5 s
        fields[20 - 3] = "7"
        fields[22 - 3] = "12345"  // 123.45 s after boot
        fields[23 - 3] = "987654321"
        fields[24 - 3] = "1000"  // pages
        let stat = "4242 (scan agent) (x)) " + fields.joined(separator: " ") + "\n"
        let sample = ProcessMetrics.parse(
            stat: stat, procStat: "cpu  1 2 3\nbtime 1795800000\nprocesses 9\n", ticksPerSecond: 100,
            pageBytes: 4096, openFileDescriptors: 12, maxFileDescriptors: 1024)
        #expect(sample.cpuSeconds == 3.0)
        #expect(sample.threads == 7)
        #expect(sample.startTimeSeconds == 1_795_800_123.45)
        #expect(sample.virtualBytes == 987_654_321)
        #expect(sample.residentBytes == 4_096_000)
        #expect(sample.openFileDescriptors == 12 && sample.maxFileDescriptors == 1024)
    }

    @Test("a damaged or missing /proc text gives no figure rather than a wrong one, and the text leaves it out")
    func damagedText() {
        let sample = ProcessMetrics.parse(
            stat: "4242 (no closing paren S 1 2", procStat: "", ticksPerSecond: 100, pageBytes: 4096,
            openFileDescriptors: nil, maxFileDescriptors: nil)
        #expect(sample == ProcessMetrics.Sample())
        #expect(ProcessMetrics.text(sample).isEmpty)
        let short = ProcessMetrics.parse(
            stat: "1 (x) S 1 2 3", procStat: "btime 5\n", ticksPerSecond: 100, pageBytes: 4096,
            openFileDescriptors: 3, maxFileDescriptors: nil)
        #expect(short.cpuSeconds == nil && short.startTimeSeconds == nil)
        #expect(
            ProcessMetrics.text(short)
                == "# HELP process_open_fds open file descriptors\n# TYPE process_open_fds gauge\nprocess_open_fds 3\n")
    }

    @Test("this test process, read live: it used CPU and memory, holds descriptors, started before now")
    func liveSample() throws {
        // Burn a little CPU so the counter is above zero even on a coarse tick.
        var x = 0.0
        for i in 0..<3_000_000 { x += Double(i).squareRoot() }
        #expect(x > 0)
        let sample = ProcessMetrics.sample()
        #expect((sample.cpuSeconds ?? 0) > 0)
        #expect((sample.residentBytes ?? 0) > 1_000_000)
        #expect((sample.virtualBytes ?? 0) >= (sample.residentBytes ?? .infinity))
        #expect((sample.openFileDescriptors ?? 0) >= 3)
        #expect((sample.threads ?? 0) >= 1)
        let started = try #require(sample.startTimeSeconds)
        let now = Date().timeIntervalSince1970
        #expect(started <= now + 1 && started > now - 86_400, "\(started) vs \(now)")
        let text = ProcessMetrics.text(sample)
        for (name, type, words) in ProcessMetrics.help {
            #expect(text.contains("# HELP \(name) \(words)\n# TYPE \(name) \(type)\n\(name) "), "\(name)")
        }
    }

    @Test("the endpoint's text ends with the process figures after the registry's")
    func inTheExposition() {
        let text = ScanMetrics.text()
        #expect(text.contains("\nprocess_cpu_seconds_total ") || text.hasPrefix("# HELP process_cpu_seconds_total"))
        #expect(!text.contains("\n\n# HELP process_"), "one exposition, no blank line inside")
    }
}

@Suite("metric HELP texts", .timed)
struct MetricHelpTests {
    @Test("every metric's HELP text is its docs/metrics.md row's words, and every documented metric has one")
    func helpIsTheDocs() throws {
        let doc = try String(contentsOfFile: TestEnvironment.repoRoot + "/docs/metrics.md", encoding: .utf8)
        var documented: [String: String] = [:]
        for line in doc.split(separator: "\n") where line.hasPrefix("| `scantrack_") || line.hasPrefix("| `process_") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 3 else { continue }
            documented[cells[0].replacingOccurrences(of: "`", with: "")] = cells[2].replacingOccurrences(
                of: "`", with: "")
        }
        var helped = ScanMetrics.help
        for (name, _, text) in ProcessMetrics.help { helped[name] = text }
        #expect(Set(helped.keys) == Set(documented.keys))
        for (name, text) in helped { #expect(documented[name] == text, "\(name)") }
    }
}
