import Foundation
import ScanCore
import ScanEvents
import ScanPipeline
import ScanRules
import ScanVision

#if canImport(Glibc)
    import Glibc
#endif

/// scan-bench tracker [--tracks N] [--frames N]
/// Time per frame of the pure core the agent runs after zbar (split zbar's symbols, normalise,
/// track, events) with N codes live, fed with hand-made detections: no decoding, no I/O.
/// scan-bench regex: time per decision of rule patterns, ScanTrack's LinearRegex against Swift's
/// backtracking Regex on the same texts (one line per case; the row format bench.sh prints).
func regexBench() {
    let clock = ContinuousClock()
    func perCall(_ repeats: Int, _ body: () -> Bool) -> (Double, Bool) {
        var outcome = false
        let elapsed = clock.measure { for _ in 0..<repeats { outcome = body() } }
        let (seconds, attoseconds) = elapsed.components
        return ((Double(seconds) + Double(attoseconds) * 1e-18) / Double(repeats) * 1e6, outcome)
    }
    let cases: [(label: String, pattern: String, text: String, swiftRepeats: Int)] = [
        ("an order code, 13 characters", "^ORD-[0-9]+$", "ORD-123456789", 100_000),
        ("an EAN-13 prefix", "^(40|41)[0-9]{11}$", "4006381333931", 100_000),
        ("^(a+)+$, 16 a then b", "^(a+)+$", String(repeating: "a", count: 16) + "b", 1),
        ("^(a+)+$, 10,000 a then b", "^(a+)+$", String(repeating: "a", count: 10_000) + "b", 0),
    ]
    for item in cases {
        guard let linear = try? LinearRegex(item.pattern), let swift = try? Regex(item.pattern) else { continue }
        let (linearMicros, outcome) = perCall(item.swiftRepeats > 1 ? 100_000 : 100) { linear.matches(item.text) }
        var swiftColumn = "not run (would not finish)"
        if item.swiftRepeats > 0 {
            let (micros, same) = perCall(item.swiftRepeats) { (try? swift.firstMatch(in: item.text)) != nil }
            swiftColumn = String(format: "%.3f", micros) + " µs" + (same == outcome ? "" : " (DIFFERENT OUTCOME)")
        }
        let linearColumn = String(format: "%.3f", linearMicros) + " µs"
        let pattern = item.pattern.replacingOccurrences(of: "|", with: "\\|")
        print("| \(item.label) | `\(pattern)` | \(outcome ? "match" : "no match") | \(linearColumn) | \(swiftColumn) |")
    }
}

/// scan-bench json: time to parse hostile JSON objects of about 1 MiB, one row each (the parser is
/// linear in the size; before, an object of many keys took seconds: a scan of the keys per key).
func jsonBench() {
    let clock = ContinuousClock()
    func milliseconds(_ body: () -> Void) -> Double {
        let (seconds, attoseconds) = clock.measure(body).components
        return Double(seconds) * 1e3 + Double(attoseconds) * 1e-15
    }
    let keys = (0..<120_000).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
    let manyKeys = Array(("{" + keys + "}").utf8)
    let longString = Array(("{\"v\":\"" + String(repeating: "x", count: 1 << 20) + "\"}").utf8)
    let deepArray = Array((String(repeating: "[", count: 1 << 19) + String(repeating: "]", count: 1 << 19)).utf8)
    let cases: [(label: String, bytes: [UInt8], maxMembers: Int)] = [
        ("object of 120,000 keys, no member cap", manyKeys, Int.max),
        ("object of 120,000 keys, refused at the cap (\(JSONValue.maxMembers))", manyKeys, JSONValue.maxMembers),
        ("event check: the same object (cap \(EventValidator.maxMembers))", manyKeys, EventValidator.maxMembers),
        ("one 1 MiB string", longString, JSONValue.maxMembers),
        ("524,288 nested arrays, refused at depth 64", deepArray, JSONValue.maxMembers),
    ]
    for item in cases {
        var outcome = ""
        let best =
            (0..<5).map { _ in
                milliseconds {
                    do {
                        _ = try JSONValue.parse(item.bytes, maxMembers: item.maxMembers)
                        outcome = "parsed"
                    } catch {
                        outcome = "refused"
                    }
                }
            }.min() ?? 0
        print("| \(item.label) | \(item.bytes.count) | \(outcome) | \(String(format: "%.2f", best)) ms |")
    }
}

var tracks = 40
var frames = 20_000
var index = 1
let arguments = CommandLine.arguments
if arguments.dropFirst().first == "regex" {
    regexBench()
    exit(0)
}
if arguments.dropFirst().first == "json" {
    jsonBench()
    exit(0)
}
while index + 1 < arguments.count {
    if arguments[index] == "--tracks", let value = Int(arguments[index + 1]) { tracks = value }
    if arguments[index] == "--frames", let value = Int(arguments[index + 1]) { frames = value }
    index += 2
}

/// Linear codes the way zbar reports them: alternate scan lines end at the left or right part.
func detections(frame: Int, tracks: Int) -> [Detection] {
    var result: [Detection] = []
    result.reserveCapacity(tracks)
    for code in 0..<tracks {
        let column = code % 8
        let row = code / 8
        let x = (column * 230 + frame * 4) % 1900
        let y = row * 130
        var points: [Point] = []
        for line in stride(from: y, to: y + 60, by: 2) {
            let leftToRight = (line / 2) % 2 == 0
            points +=
                leftToRight
                ? [Point(x: x + 98, y: line), Point(x: x + 190, y: line)]
                : [Point(x: x + 92, y: line), Point(x: x, y: line)]
        }
        let value = Array("40063813\(String(10000 + code))".utf8.prefix(13))
        result.append(Detection(symbology: .ean13, value: value, points: points))
    }
    return result
}

// Inputs are made before timing.
let liveCodes = tracks
let inputs = (0..<200).map { detections(frame: $0, tracks: liveCodes) }
var pipeline = ScanPipeline(camera: CameraIdentity(id: "bench"), idPrefix: "bench-1")
let splitter = DetectionSplitter(density: 2)
var events = 0
var clock = timespec()
clock_gettime(CLOCK_MONOTONIC, &clock)
let start = Double(clock.tv_sec) + Double(clock.tv_nsec) / 1e9
for frame in 0..<frames {
    let time = Timestamp(milliseconds: 1_795_800_000_000 + Int64(frame) * 33)
    let detections = inputs[frame % inputs.count].flatMap { splitter.split($0) }
    events += pipeline.process(frame: frame, time: time, detections: detections).count
}
clock_gettime(CLOCK_MONOTONIC, &clock)
let seconds = Double(clock.tv_sec) + Double(clock.tv_nsec) / 1e9 - start
let live = pipeline.tracker.live.count
print(
    "tracks=\(tracks) frames=\(frames) live_at_end=\(live) events=\(events) us_per_frame=\(JSONWriter.format(seconds / Double(frames) * 1e6, decimals: 1))"
)
