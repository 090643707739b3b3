import ArgumentParser
import Foundation
import Logging
import ScanAgentRuntime
import ScanCore
import ScanZBar
import ScanAgentConfig
import ScanEvents
import ScanPipeline
import ScanRules
import ScanVision

#if canImport(Glibc)
    import Glibc
#endif

/// `scan-agent replay CLIP.y4m [--config FILE] [--start TIME]`: decode a recorded clip and print
/// every event as one JSON line on stdout (nothing else there); diagnostics go to stderr.
struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Decode a recorded clip (YUV4MPEG2) and print every event as one JSON line.",
        discussion: """
            Frame times come from the clip's frame rate, starting at --start (default: now). On a \
            terminal (or with --progress) a line on stderr shows the frames done of the clip's, the \
            frames/s and the time left; --no-progress turns it off. Needs no NATS or PostgreSQL.

            Turn any recording into a clip with: ffmpeg -i in.mp4 -pix_fmt gray out.y4m

            Exit codes: 0 done; 1 the clip is damaged part way (the \
            events of the frames before the damage are printed, the error names file and frame); \
            2 bad config or unreadable clip.
            """)

    @Argument(help: "The clip (YUV4MPEG2: Cmono, 4:2:0, 4:2:2 or 4:4:4; only luma is used).")
    var clip: String

    @Option(help: "Agent config file (camera, decoder, tracking, session).")
    var config: String?

    @Option(help: "Ruleset file (unwanted-code rules); overrides the config's \"rules\".")
    var rules: String?

    @Option(help: "Time of the first frame, RFC 3339 (default: now).")
    var start: String?

    @Option(help: "Run id in track IDs (default: unique per run).")
    var runId: String?

    @Option(help: "Write each no-read's picture (PNG) into this folder; the noread event names the file.")
    var images: String?

    @Flag(help: "Print only sightings, session events and no-reads (no track.* events).")
    var sightingsOnly = false

    @Flag(help: "Print every frame's detections (one per code, after splitting and checks) on stderr (diagnostics).")
    var traceDetections = false

    @Flag(help: "Print every frame's decoding regions (tracked, discovery, sweep) on stderr (diagnostics).")
    var traceRegions = false

    @Flag(
        inversion: .prefixedNo,
        help: "Show frames, frames/s and time left on stderr while it runs (default: when stderr is a terminal).")
    var progress: Bool?

    @Flag(help: "Print the time per stage (localise, zbar, zxing-cpp, tracking and events) on stderr at the end.")
    var profile = false

    func validate() throws {
        if let start, Timestamp(rfc3339: start) == nil {
            throw ValidationError("--start '\(start)' is not an RFC 3339 time (e.g. 2026-11-21T08:00:00Z)")
        }
    }

    func run() throws {
        let agentConfig: AgentConfig
        if let config {
            do {
                agentConfig = try AgentConfigLoader.load(path: config)
            } catch {
                writeStandardError(error.description)
                throw ExitCode(2)
            }
        } else {
            let stem = URL(fileURLWithPath: clip).deletingPathExtension().lastPathComponent
            let id = String(stem.map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "-" })
            agentConfig = AgentConfig(camera: CameraIdentity(id: id.isEmpty ? "replay" : id))
        }
        let startTime =
            start.flatMap { Timestamp(rfc3339: $0) }
            ?? Timestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))

        let reader: ClipReader
        do {
            reader = try ClipReader(path: clip)
        } catch {
            writeStandardError("scan-agent replay: \(error)")
            throw ExitCode(2)
        }
        var ruleset = Ruleset.acceptAll
        if let rulesPath = rules ?? agentConfig.rulesFile {
            do {
                ruleset = try RulesetLoader.load(path: rulesPath)
            } catch {
                writeStandardError(error.description)
                throw ExitCode(2)
            }
        }
        let decoder = try CameraDecoder(
            config: agentConfig.decoder, camera: agentConfig.camera.id, locate: agentConfig.noread.enabled)
        if traceRegions { decoder.traceRegions = { writeStandardError($0) } }
        var pipeline = ScanPipeline(
            camera: agentConfig.camera, tracking: agentConfig.tracking,
            normalizer: CodeNormalizer(upcAsEAN13: agentConfig.decoder.upcAsEAN13), session: agentConfig.session,
            rules: ruleset, noread: agentConfig.noread, grouping: agentConfig.grouping, decision: agentConfig.decision,
            symbologies: agentConfig.decoder.symbologies, idPrefix: "\(agentConfig.camera.id)-\(runId ?? makeRunID())")

        var output = EventOutput(sightingsOnly: sightingsOnly)
        if let images {
            do {
                // Every picture of the clip is kept: the folder is the replay's output.
                output.images = try NoReadImageFolder(path: images, maxImages: Int.max, maxBytes: Int.max)
            } catch {
                writeStandardError("scan-agent replay: \(error)")
                throw ExitCode(2)
            }
        }
        var image = GrayImage(width: reader.header.width, height: reader.header.height, fill: 0)
        var frame = 0
        var lastTime = startTime
        let began = ContinuousClock.now
        var tracking: Duration = .zero
        var damaged: ClipError?
        var meter = ReplayProgress(
            clip: clip, frameBytes: reader.header.frameBytes, show: progress ?? (isatty(STDERR_FILENO) == 1))
        while true {
            do {
                guard try reader.readFrame(into: &image) else { break }
            } catch {
                damaged = error
                break
            }
            let time = startTime.adding(milliseconds: reader.header.offsetMilliseconds(frame: frame))
            lastTime = time
            let detections = try decoder.decode(image, expected: pipeline.tracker.expected(at: frame))
            if traceDetections { traceFrame(frame, detections) }
            let decoded = ContinuousClock.now
            let events = pipeline.process(frame: frame, time: time, detections: detections, located: decoder.located)
            tracking += ContinuousClock.now - decoded
            output.write(events)
            frame += 1
            meter.update(frames: frame)
        }
        meter.finish(frames: frame)
        output.write(pipeline.finish(time: lastTime))
        output.flush()
        let seconds = (ContinuousClock.now - began).seconds
        writeStandardError(
            "scan-agent replay: \(frame) frames, \(output.sightings) sightings, \(output.noReadSummary), "
                + "\(pipeline.tracker.discarded) unconfirmed reads dropped, \(decoder.rejectedParts) unverified parts rejected "
                + "(\(decoder.rescans) rescans), \(decoder.secondOpinionReads) second-opinion reads in \(decoder.secondOpinionsAsked) regions, "
                + "\(decoder.sweepReads) sweep reads, "
                + String(format: "%.1f", seconds > 0 ? Double(frame) / seconds : 0) + " frames/s, peak memory "
                + "\(peakResidentKilobytes() / 1024) MiB; \(decoder.planner.config.mode.rawValue) decoding on \(decoder.threads) "
                + "thread(s): \(decoder.profile.summary)")
        if profile {
            let frames = Double(max(frame, 1))
            writeStandardError(
                [
                    decoder.stages,
                    DecodeProfile.line("tracking", perFrame: tracking.seconds / frames * 1000)
                        + "  (events, outside decoding)",
                    DecodeProfile.line("total", perFrame: seconds / frames * 1000) + "  (reading the clip included)",
                ].joined(separator: "\n"))
        }
        if let damaged {
            writeStandardError("scan-agent replay: \(damaged) (the \(frame) frames before it were processed)")
            throw ExitCode(1)
        }
    }
}

private func traceFrame(_ frame: Int, _ detections: [Detection]) {
    for detection in detections {
        let box = detection.box.map { "[\($0.minX),\($0.minY)-\($0.maxX),\($0.maxY)]" } ?? "[]"
        let points =
            ProcessInfo.processInfo.environment["SCANTRACK_TRACE_POINTS"] != nil
            ? " " + detection.points.map { "(\($0.x),\($0.y))" }.joined() : ""
        writeStandardError(
            "frame \(frame): \(detection.symbology.rawValue) \(detection.text ?? "<binary>") \(detection.engine) points=\(detection.points.count) \(box)\(points)"
        )
    }
}

/// The process's peak resident memory, in KiB (Linux reports ru_maxrss in kilobytes).
func peakResidentKilobytes() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_maxrss
}

/// Writes event lines to stdout through one buffered stream.
struct EventOutput {
    var sightingsOnly: Bool
    var sightings = 0
    var noReads = 0
    /// No-reads by reason.
    var noReadReasons: [String: Int] = [:]
    /// Where no-read pictures go (`--images`); nil: events without pictures.
    var images: NoReadImageFolder?
    private let logger = Logger(label: "scan-agent.replay")
    /// Our own stream on descriptor 1, fully buffered (C's `stdout` global is not concurrency-safe).
    private let stream: UnsafeMutablePointer<FILE>?

    init(sightingsOnly: Bool) {
        self.sightingsOnly = sightingsOnly
        stream = fdopen(STDOUT_FILENO, "w")
        if let stream { setvbuf(stream, nil, _IOFBF, 1 << 16) }
    }

    mutating func write(_ events: [AgentEvent]) {
        for var event in events {
            if event.kind == .sighting { sightings += 1 }
            if let unsaved = event.unsavedNoRead {
                noReads += 1
                noReadReasons[unsaved.event.reason ?? "", default: 0] += 1
                event = NoReadPictures.save(unsaved, into: images, logger: logger)
            }
            if sightingsOnly && !event.isDurable { continue }
            guard let stream else { continue }
            event.json.withUnsafeBytes { raw in _ = fwrite(raw.baseAddress, 1, raw.count, stream) }
            fputc(0x0A, stream)
        }
    }

    func flush() { if let stream { fflush(stream) } }

    /// "3 no-reads (2 undecoded, 1 clip-ended)", the reasons in their documented order.
    var noReadSummary: String {
        let reasons = NoReadReason.allCases.compactMap { reason in
            noReadReasons[reason.rawValue].map { "\($0) \(reason.rawValue)" }
        }
        return "\(noReads) no-reads" + (reasons.isEmpty ? "" : " (" + reasons.joined(separator: ", ") + ")")
    }
}

/// `replay --progress`: a line on stderr, rewritten at most twice a second, with the frames done,
/// their rate and the time left (the total from the clip's size: its frames are all one size).
struct ReplayProgress {
    let show: Bool
    let total: Int?
    private let began = ContinuousClock.now
    private var shown = ContinuousClock.now
    private var wrote = false

    init(clip: String, frameBytes: Int, show: Bool) {
        self.show = show
        let size = (try? FileManager.default.attributesOfItem(atPath: clip)[.size] as? Int) ?? nil
        // Each frame is "FRAME\n" and its bytes; the stream header is small beside them.
        total = size.map { $0 / (frameBytes + 6) }.flatMap { $0 > 0 ? $0 : nil }
    }

    mutating func update(frames: Int, last: Bool = false) {
        guard show, last || ContinuousClock.now - shown >= .milliseconds(500) else { return }
        shown = ContinuousClock.now
        let seconds = (shown - began).seconds
        let rate = seconds > 0 ? Double(frames) / seconds : 0
        var line = "scan-agent replay: \(frames)"
        if let total {
            line += " of \(total) frames (\(min(100, frames * 100 / total)) %)"
        } else {
            line += " frames"
        }
        line += String(format: ", %.1f frames/s", rate)
        if let total, rate > 0 { line += String(format: ", %.0f s left", Double(max(0, total - frames)) / rate) }
        FileHandle.standardError.write(Data(("\r" + line + "\u{1B}[K").utf8))
        wrote = true
    }

    /// Shows where the replay ended (a clip shorter than half a second shows only this), and ends
    /// the line, so that what follows starts on a line of its own.
    mutating func finish(frames: Int) {
        update(frames: frames, last: true)
        if wrote { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
