import Foundation
import ScanCore
import ScanServices
import ScanVision

/// What decoding costs: time per stage, how much of the frame each kind of region made zbar walk,
/// and per-frame latency. Kept for the whole run (replay's summary and `--profile`) and for a
/// window that the heartbeat reports and restarts.
struct DecodeProfile {
    var frames = 0
    var localize: Duration = .zero
    var zbar: Duration = .zero
    /// zxing-cpp on the tracked regions (`decoder.trackedEngine` zxing).
    var tracked: Duration = .zero
    /// zxing-cpp on the regions of DataMatrix, PDF417 … codes.
    var matrix: Duration = .zero
    /// zxing-cpp on the sweep's lines (`decoder.sweepEngine` zxing).
    var sweep: Duration = .zero
    /// Linear codes at an angle, straightened along their bars and read (`readAngled`).
    var angled: Duration = .zero
    /// zxing-cpp: its every-Nth-frame pass and the second opinions.
    var zxing: Duration = .zero
    /// Pixels zbar walked on its scan lines, per kind of region, and pixels in the frames' regions
    /// of interest (what a full scan at density 1 in both directions walks twice).
    var scanned: [DecodePlanner.Purpose: Int] = [:]
    var areaPixels = 0
    var regions = 0
    /// Seconds per frame over the whole run, in a bounded histogram (an agent runs for months).
    private(set) var latencies = LatencyHistogram()
    private(set) var window = Window()

    /// The heartbeat's share: frames, latencies and scan coverage since the last reset.
    struct Window {
        var frames = 0
        var latencies: [Double] = []
        var scanned: [DecodePlanner.Purpose: Int] = [:]
        var areaPixels = 0
        var began = ContinuousClock.now
    }

    mutating func record(regions planned: [DecodePlanner.Region], framePixels: Int) {
        regions += planned.count
        areaPixels += framePixels
        window.areaPixels += framePixels
        for region in planned {
            scanned[region.purpose, default: 0] += region.scannedPixels
            window.scanned[region.purpose, default: 0] += region.scannedPixels
        }
    }

    mutating func frame(took duration: Duration) {
        let seconds = duration.seconds
        frames += 1
        latencies.add(seconds)
        window.frames += 1
        window.latencies.append(seconds)
    }

    mutating func resetWindow() { window = Window() }

    /// Share of a both-ways density-1 scan of the area that each kind of region walked.
    static func coverage(_ scanned: [DecodePlanner.Purpose: Int], areaPixels: Int) -> [(DecodePlanner.Purpose, Double)]
    {
        guard areaPixels > 0 else { return [] }
        return [DecodePlanner.Purpose.tracked, .discovery, .sweep].map { purpose in
            (purpose, Double(scanned[purpose, default: 0]) / Double(2 * areaPixels))
        }
    }

    /// The q-quantile (0…1) of the values, nearest rank; 0 for none.
    static func quantile(_ values: [Double], _ q: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let rank = Int((q * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    /// Replay's closing summary: frames/s of decoding alone, latency, coverage.
    var summary: String {
        let decodeSeconds = latencies.total
        let fps = decodeSeconds > 0 ? Double(frames) / decodeSeconds : 0
        let coverage = Self.coverage(scanned, areaPixels: areaPixels)
            .map { "\($0.0.rawValue) \(String(format: "%.1f", $0.1 * 100)) %" }.joined(separator: ", ")
        return String(
            format: "decoding %.1f frames/s, latency p50 %.1f ms p99 %.1f ms", fps, latencies.quantile(0.5) * 1000,
            latencies.quantile(0.99) * 1000) + (coverage.isEmpty ? "" : ", frame scanned: " + coverage)
    }

    /// `replay --profile`: time per stage.
    var stages: String {
        let total = latencies.total
        var lines = ["stage       ms/frame  share of decoding (\(frames) frames, \(regions) regions)"]
        for (name, duration) in [
            ("localise", localize), ("tracked", tracked), ("zbar", zbar), ("sweep", sweep), ("matrix", matrix),
            ("angled", angled), ("zxing-cpp", zxing),
        ] {
            let perFrame = frames > 0 ? duration.seconds / Double(frames) * 1000 : 0
            let share = total > 0 ? duration.seconds / total * 100 : 0
            lines.append(Self.line(name, perFrame: perFrame) + String(format: " %5.1f %%", share))
        }
        return lines.joined(separator: "\n")
    }

    /// One profile line: the stage's name padded, then milliseconds per frame.
    static func line(_ name: String, perFrame milliseconds: Double) -> String {
        "  " + name.padding(toLength: 10, withPad: " ", startingAt: 0) + String(format: "%8.3f", milliseconds)
    }
}

/// Durations in buckets 2 % wide from 1 µs to 10 s: quantiles within 2 %, in fixed memory.
struct LatencyHistogram {
    private static let base = 1e-6
    private static let growth = log(1.02)
    private var counts = [Int](repeating: 0, count: Int(log(10 / 1e-6) / log(1.02)) + 2)
    private(set) var count = 0
    private(set) var total = 0.0

    mutating func add(_ seconds: Double) {
        let index = seconds <= Self.base ? 0 : Int(log(seconds / Self.base) / Self.growth) + 1
        counts[min(index, counts.count - 1)] += 1
        count += 1
        total += seconds
    }

    /// The upper bound of the bucket holding the q-quantile (nearest rank); 0 when empty.
    func quantile(_ q: Double) -> Double {
        guard count > 0 else { return 0 }
        let rank = max(1, Int((q * Double(count)).rounded(.up)))
        var seen = 0
        for (index, bucket) in counts.enumerated() {
            seen += bucket
            if seen >= rank { return Self.base * exp(Double(index) * Self.growth) }
        }
        return 10
    }
}

/// The cores this process may run on (its CPU affinity, which `taskset` narrows; Foundation's
/// processor counts ignore it), at least 1.
enum AvailableCores {
    static var count: Int {
        let fallback = max(1, ProcessInfo.processInfo.activeProcessorCount)
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") })
        else { return fallback }
        // A hexadecimal mask in comma-separated groups of 32 bits.
        let bits = line.dropFirst("Cpus_allowed:".count).filter(\.isHexDigit).reduce(0) { count, digit in
            count + (digit.hexDigitValue ?? 0).nonzeroBitCount
        }
        return bits > 0 ? min(bits, fallback) : fallback
    }
}
