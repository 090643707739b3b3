import ArgumentParser
import Foundation
import ScanCore
import ScanServices
import ScanAgentConfig
import ScanEvents
import ScanPipeline
import ScanVision

/// `scan-agent tune CLIP [--write FILE]`: the set-up step for a new line (docs/cameras.md).
struct TuneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tune",
        abstract:
            "Measure a clip of the line and suggest the agent's settings: symbologies, module size, speed, exposure.",
        discussion: """
            Replays CLIP with every symbology on and measures what it read: the symbologies present, the module size \
            in pixels (linear codes), how far codes move a frame, how many frames each is in view, and the band of the \
            frame they crossed. It suggests the longest exposure that keeps motion blur under half a module at that \
            speed (blur in modules = speed × exposure ÷ module size), the symbologies to enable, the region of \
            interest and noread.minFrames. --write FILE writes the suggestion as an agent config (source: the clip). \
            With --camera ID --seconds N instead of CLIP: records N seconds of what the camera (a GenICam id, a \
            /dev/videoN or an RTSP URL) sees into --record FILE (default tune-recording.y4m), measures that, and the \
            written config reads the camera with the exposure bound set.

            Exit codes: 0 measured, 1 nothing was read or the camera sent nothing, 2 an unreadable clip, 64 bad usage.
            """)

    @Argument(help: "A YUV4MPEG2 clip recorded on the line (ffmpeg -i in.mp4 -pix_fmt gray out.y4m).") var clip: String?
    @Option(help: "Record from this camera instead (GenICam id, /dev/videoN or RTSP URL).") var camera: String?
    @Option(help: "With --camera: seconds to record.") var seconds: Double = 10
    @Option(help: "With --camera: where the recording goes.") var record = "tune-recording.y4m"
    @Option(help: "Write the suggested agent config to FILE.") var write: String?
    @Option(help: "The camera id in the written config.") var cameraId = "cam-01"
    @Option(help: "text or json.") var format = "text"

    /// What the measuring replay reads: every symbology an agent decodes on conveyors and tunnels.
    static let everySymbology: [Symbology] = [
        .ean13, .ean8, .upcA, .upcE, .code128, .code39, .code93, .interleaved2of5, .codabar, .dataBar,
        .dataBarExpanded, .qrCode, .dataMatrix, .pdf417,
    ]

    func validate() throws {
        guard ["text", "json"].contains(format) else { throw ValidationError("--format '\(format)': use text or json") }
        guard (clip == nil) != (camera == nil) else { throw ValidationError("give a CLIP or --camera ID, one of them") }
        guard seconds > 0 && seconds <= 600 else { throw ValidationError("--seconds: from more than 0 to 600") }
        if !SubjectToken.isValid(cameraId) {
            throw ValidationError(SubjectTokenError(field: "--camera-id", value: cameraId).description)
        }
    }

    func run() throws {
        var recordedFrom: TuneRecording.Camera?
        var clip = self.clip ?? record
        if let id = camera {
            let logger = ScanLogging.logger("scan-agent", level: .warning)
            do {
                let opened = try TuneRecording.camera(id, logger: logger)
                let frames = try TuneRecording.record(opened, seconds: seconds, to: record, logger: logger)
                if format == "text" { print("recorded \(frames) frames into \(TerminalText.escaped(record))") }
                recordedFrom = opened
                clip = record
            } catch {
                writeStandardError("scan-agent tune: \(error)")
                throw ExitCode.failure
            }
        }
        let reader: ClipReader
        do {
            reader = try ClipReader(path: clip)
        } catch {
            writeStandardError("scan-agent tune: \(error)")
            throw ExitCode(2)
        }
        var config = AgentConfig(camera: CameraIdentity(id: cameraId))
        config.decoder.symbologies = Self.everySymbology
        // Decoded as replay decodes (the localiser's regions guide both engines and mark what is
        // unread), so that tune counts what replay counts.
        let decoder = try CameraDecoder(config: config.decoder, camera: cameraId, locate: config.noread.enabled)
        var pipeline = ScanPipeline(
            camera: config.camera, tracking: config.tracking,
            normalizer: CodeNormalizer(upcAsEAN13: false), session: config.session, rules: .acceptAll,
            noread: config.noread, idPrefix: "\(cameraId)-tune")
        var image = GrayImage(width: reader.header.width, height: reader.header.height, fill: 0)
        var frame = 0
        var codes: [LineSetup.Code] = []
        func collect(_ events: [AgentEvent]) {
            for event in events where event.kind == .sighting {
                guard let json = try? JSONValue.parse(event.json), let sighting = try? SightingEvent.parse(json),
                    let symbology = Symbology(rawValue: sighting.symbology), let first = sighting.firstBox,
                    let last = sighting.lastBox
                else { continue }
                codes.append(
                    LineSetup.Code(
                        symbology: symbology, value: sighting.value, firstFrame: sighting.firstFrame,
                        lastFrame: sighting.lastFrame, firstBox: first, lastBox: last))
            }
        }
        let start = Timestamp(milliseconds: 0)
        while true {
            do {
                guard try reader.readFrame(into: &image) else { break }
            } catch {
                writeStandardError("scan-agent tune: \(error)")
                throw ExitCode(2)
            }
            let time = start.adding(milliseconds: reader.header.offsetMilliseconds(frame: frame))
            let detections = try decoder.decode(image, expected: pipeline.tracker.expected(at: frame))
            collect(pipeline.process(frame: frame, time: time, detections: detections, located: decoder.located))
            frame += 1
        }
        collect(pipeline.finish(time: start.adding(milliseconds: reader.header.offsetMilliseconds(frame: frame))))
        let fps = Double(reader.header.frameRateNumerator) / Double(max(1, reader.header.frameRateDenominator))
        guard let setup = LineSetup.analyse(codes, width: image.width, height: image.height, framesPerSecond: fps)
        else {
            writeStandardError("scan-agent tune: no code was read in \(frame) frames of \(clip)")
            throw ExitCode.failure
        }
        let suggested = Self.config(setup, cameraId: cameraId, clip: clip, recordedFrom: recordedFrom)
        if let write {
            do {
                try Data(suggested.utf8).write(to: URL(fileURLWithPath: write))
            } catch {
                writeStandardError("scan-agent tune: cannot write \(write): \(error.localizedDescription)")
                throw ExitCode.failure
            }
        }
        if format == "json" {
            var writer = JSONWriter()
            writer.field("frames", frame)
            writer.field("framesPerSecond", fps, decimals: 2)
            writer.field("codes", setup.codes)
            writer.strings("symbologies", setup.symbologies.map(\.rawValue))
            if let module = setup.modulePixels { writer.field("modulePixels", module, decimals: 2) }
            writer.field("pixelsPerFrame", setup.pixelsPerFrame, decimals: 2)
            writer.field("framesInView", setup.framesInView)
            if let exposure = setup.longestExposureMicroseconds {
                writer.field("longestExposureMicroseconds", exposure, decimals: 0)
            }
            writer.raw("config", Array(suggested.utf8))
            print(writer.text)
        } else {
            print(
                """
                \(clip): \(frame) frames at \(JSONWriter.format(fps, decimals: 2)) frames/s, \(setup.codes) code(s) read
                symbologies present: \(setup.symbologies.map(\.rawValue).joined(separator: ", "))
                module size:         \(setup.modulePixels.map { JSONWriter.format($0, decimals: 2) + " px" } ?? "not measured (no linear code)")
                motion:              \(JSONWriter.format(setup.pixelsPerFrame, decimals: 2)) px a frame
                frames in view:      \(setup.framesInView) (median)
                longest exposure:    \(setup.longestExposureMicroseconds.map { JSONWriter.format($0, decimals: 0) + " µs (blur under half a module)" } ?? "not measured")
                suggested config\(write.map { " (written to \($0))" } ?? ""):
                \(suggested)
                """)
        }
    }

    /// The suggestion as an agent config: the symbologies seen, the band they crossed, no-reads
    /// after a third of the frames a code is in view; the clip as its source, or the camera it was
    /// recorded from with the exposure bound (not for RTSP, whose exposure is the camera's page's).
    static func config(_ setup: LineSetup, cameraId: String, clip: String, recordedFrom: TuneRecording.Camera? = nil)
        -> String
    {
        var decoder = JSONWriter()
        decoder.strings("symbologies", setup.symbologies.map(\.rawValue))
        var region = JSONWriter()
        region.field("x", 0)
        // Three decimals, rounded so that the band stays inside the frame.
        let y = (setup.region.y * 1000).rounded(.down) / 1000
        let height = min(0.999 - y, (setup.region.height * 1000).rounded(.up) / 1000)
        region.field("y", y, decimals: 3)
        region.field("width", 1)
        region.field("height", height, decimals: 3)
        decoder.raw("regionOfInterest", region.finished())
        var camera = JSONWriter()
        camera.field("id", cameraId)
        var source = JSONWriter()
        if let camera = recordedFrom {
            var recorded = camera.source
            if let exposure = setup.longestExposureMicroseconds, camera.frames.kind != .rtsp {
                var controls = JSONWriter()
                controls.field("exposureMicroseconds", max(1, exposure.rounded(.down)), decimals: 0)
                recorded.raw("controls", controls.finished())
            }
            source = recorded
        } else {
            source.field("type", "clip")
            source.field("path", clip)
            source.field("realtime", false)
        }
        var noread = JSONWriter()
        noread.field("minFrames", max(2, min(setup.framesInView / 3, 30)))
        var top = JSONWriter()
        top.raw("camera", camera.finished())
        top.raw("source", source.finished())
        top.raw("decoder", decoder.finished())
        top.raw("noread", noread.finished())
        return top.text
    }
}
