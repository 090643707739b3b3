import Foundation
import ScanCore
import ScanMetrics
import ScanSynth

/// scan-synth SCENE OUT.y4m [--width W] [--height H] [--frames N] [--codes N] [--seed S] [--noise N]
///     [--angles LOW-HIGH] [--scale F] [--slats N] [--truth FILE.json]
/// Renders a synthetic conveyor clip (tests, benchmarks, demo) and optionally its ground truth.
let usage =
    "usage: scan-synth SCENE OUT.y4m [--width W --height H --frames N --codes N --seed S --noise N --angles LOW-HIGH --scale F --slats N --truth FILE]\nscenes: \(Scenarios.names.joined(separator: ", "))\n"
var arguments = Array(CommandLine.arguments.dropFirst())
BuildInfo.answerHelpAndVersion(program: "scan-synth", usage: usage, arguments: arguments)
/// A bad option: its text escaped for the terminal, what it should be, exit 2.
func refuse(_ option: String, _ text: String?, _ expected: String) -> Never {
    FileHandle.standardError.write(
        Data("scan-synth: \(option) '\(TerminalText.escaped(text ?? ""))' is not \(expected)\n".utf8))
    exit(2)
}
@MainActor func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    let value = arguments[index + 1]
    arguments.removeSubrange(index...index + 1)
    return value
}
let width = option("--width").flatMap(Int.init) ?? 1280
let height = option("--height").flatMap(Int.init) ?? 720
let framesGiven = option("--frames").flatMap(Int.init)
let frames = framesGiven ?? 300
let codes = option("--codes").flatMap(Int.init) ?? 10
let seed = option("--seed").flatMap(UInt64.init) ?? 7
let noise = option("--noise").flatMap(Int.init)
let truth = option("--truth")
let angles = option("--angles")
let scaleText = option("--scale")
/// `--scale 0.625`: every label drawn that many times as large (2 px a module becomes 1.25).
let scale = scaleText.flatMap(Double.init).flatMap { $0 >= 0.1 && $0 <= 4 ? $0 : nil }
let slatsText = option("--slats")
/// `--slats 64`: dark slats across the belt every 64 px (0: a plain belt).
let slats = slatsText.flatMap(Int.init).flatMap { $0 == 0 || ($0 >= 8 && $0 <= 10_000) ? $0 : nil }
/// `--angles 0-360`: degrees, low to high (each -720…720).
let angleRange: ClosedRange<Double>? = angles.flatMap { text in
    // The dash between the two (after the first character: LOW may be negative, -20-20).
    guard let dash = text.dropFirst().firstIndex(of: "-") else { return nil }
    let parts = [text[..<dash], text[text.index(after: dash)...]]
    guard let low = Double(parts[0]), let high = Double(parts[1]), low <= high,
        abs(low) <= 720, abs(high) <= 720
    else { return nil }
    return low...high
}
if angles != nil && angleRange == nil { refuse("--angles", angles, "LOW-HIGH in degrees (e.g. 0-360)") }
if scaleText != nil && scale == nil { refuse("--scale", scaleText, "a factor from 0.1 to 4 (e.g. 0.625)") }
if slatsText != nil && slats == nil { refuse("--slats", slatsText, "0 or a spacing in pixels from 8 to 10000") }
guard arguments.count == 2,
    var scene = Scenarios.named(
        arguments[0], width: width, height: height, frames: frames, codesInView: codes, seed: seed)
else {
    FileHandle.standardError.write(Data(usage.utf8))
    exit(2)
}
if let noise { scene.noise = noise }
// Scenes of a set length are cut (or run on) to the frames asked for.
if let framesGiven, framesGiven > 0 { scene.frameCount = framesGiven }
if let angleRange { scene.turnLabels(within: angleRange, seed: seed) }
if let scale { scene.scaleLabels(by: scale) }
if let slats { scene.beltSlats = slats }
do {
    let renderer = try SceneRenderer(scene: scene)
    try renderer.writeClip(to: arguments[1])
    FileHandle.standardError.write(
        Data(
            "scan-synth: \(arguments[1]): \(scene.frameCount) frames \(scene.width)x\(scene.height), \(String(format: "%.1f", renderer.averageCodesInView())) codes in view on average\n"
                .utf8))
    if let truth {
        var lines: [String] = []
        for code in renderer.expectedCodes() {
            var writer = JSONWriter()
            writer.field("item", scene.items[code.item].name)
            writer.field("value", code.value)
            writer.field("symbology", code.symbology.rawValue)
            writer.field("firstFrame", code.framesInView.lowerBound)
            writer.field("lastFrame", code.framesInView.upperBound)
            writer.field("partial", code.partial)
            lines.append(writer.text)
        }
        // Unreadable labels (torn, out of focus, overexposed): each should be one no-read, never a
        // sighting.
        for unread in renderer.expectedNoReads() {
            let label = scene.items[unread.item].labels[unread.label]
            var writer = JSONWriter()
            writer.field("item", scene.items[unread.item].name)
            writer.field("value", renderer.labelValues[unread.item][unread.label])
            writer.field("unreadable", true)
            if label.torn { writer.field("torn", true) }
            writer.field("fault", label.fault?.rawValue)
            writer.field("partial", false)
            lines.append(writer.text)
        }
        try (lines.joined(separator: "\n") + "\n").write(toFile: truth, atomically: true, encoding: .utf8)
    }
} catch {
    FileHandle.standardError.write(Data("scan-synth: \(error)\n".utf8))
    exit(1)
}
