import Foundation
import ScanCore
import ScanGenICam
import ScanMedia
import ScanMetrics

#if canImport(Glibc)
    import Glibc
#endif

/// scan-fake-camera CLIP.y4m [--address 127.0.0.1] [--serial GV01] [--fps 25] [--gvsp-lost-ratio N] [--loop]
/// A GigE Vision camera on this machine that shows a recorded clip (Aravis's fake camera, real
/// GVCP and GVSP over UDP): each frame once, then white frames. Its Aravis id is `Aravis-<serial>`,
/// or use the address. Runs until SIGTERM or SIGINT. For tests and demonstrations.
/// The value after `name`, and the arguments without the two.
func option(_ name: String, _ fallback: String, in arguments: inout [String]) -> String {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return fallback }
    defer { arguments.removeSubrange(index...index + 1) }
    return arguments[index + 1]
}
let usage =
    "usage: scan-fake-camera CLIP.y4m [--address 127.0.0.1] [--serial GV01] [--fps 25] [--gvsp-lost-ratio N] [--loop]\n"
var arguments = Array(CommandLine.arguments.dropFirst())
BuildInfo.answerHelpAndVersion(program: "scan-fake-camera", usage: usage, arguments: arguments)
let address = option("--address", "127.0.0.1", in: &arguments)
let serial = option("--serial", "GV01", in: &arguments)
let fps = Double(option("--fps", "25", in: &arguments)) ?? 25
/// GVSP packets left out, per thousand (as arv-fake-gv-camera's --gvsp-lost-ratio).
let lostPerThousand = Double(option("--gvsp-lost-ratio", "0", in: &arguments)) ?? 0
/// Show the clip again and again (measurements) instead of once.
let loop = arguments.contains("--loop")
arguments.removeAll { $0 == "--loop" }
guard let path = arguments.first, let data = FileManager.default.contents(atPath: path) else {
    FileHandle.standardError.write(Data(usage.utf8))
    exit(64)
}
var frames: [GrayImage] = []
do {
    var stream = try Y4MStream(source: MemoryClipBytes(Array(data)))
    var image = GrayImage(width: stream.header.width, height: stream.header.height, fill: 0)
    while try stream.readFrame(into: &image) { frames.append(image) }
} catch {
    FileHandle.standardError.write(Data("scan-fake-camera: \(path): \(error)\n".utf8))
    exit(2)
}
let camera: ClipCamera
do {
    camera = try ClipCamera(
        clip: frames, address: address, serial: serial, framesPerSecond: fps, lostRatio: lostPerThousand / 1000,
        loop: loop)
} catch {
    FileHandle.standardError.write(Data("scan-fake-camera: \(error)\n".utf8))
    exit(1)
}
FileHandle.standardOutput.write(
    Data(
        "fake camera: Aravis-\(serial) on \(address), \(frames.count) frames of \(frames[0].width)x\(frames[0].height)\n"
            .utf8))
// A parent may have blocked these (the mask is inherited): unblock them, then end at once on
// either (exit() is not safe in a handler: Aravis's threads hold locks).
var signals = sigset_t()
sigemptyset(&signals)
sigaddset(&signals, SIGTERM)
sigaddset(&signals, SIGINT)
pthread_sigmask(SIG_UNBLOCK, &signals, nil)
signal(SIGTERM) { _ in _exit(0) }
signal(SIGINT) { _ in _exit(0) }
while true { sleep(1) }
