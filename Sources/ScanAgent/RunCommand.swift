import ArgumentParser
import Dispatch
import Foundation
import Logging
import ScanCore
import ScanNATS
import ScanV4L2

/// `scan-agent run --config FILE.json`: one camera (or clip) until SIGTERM/SIGINT or the end of
/// the clip. See docs/agent-config.md and the README's "Running an agent".
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run one camera: capture, decode, track, and publish to NATS JetStream.",
        discussion: """
            Exit codes: 0 stopped by SIGTERM/SIGINT or at the end of a clip (open tracks and the
            session ended, events flushed to JetStream or kept in the spool); 1 runtime failure
            (spool folder unusable); 2 bad config, ruleset or clip.
            """)

    @Option(help: "Agent config file (JSON; see docs/agent-config.md).")
    var config: String

    @Option(help: "Seconds to keep sending the spool at shutdown before leaving the rest for the next start.")
    var drainSeconds: Double = 5

    @Option(help: "Log level: trace, debug, info, notice, warning, error.")
    var logLevel: String = "info"

    func run() throws {
        var logger = Logger(label: "scan-agent")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        let agentConfig: AgentConfig
        do {
            agentConfig = try AgentConfigLoader.load(path: config)
        } catch {
            writeStandardError(error.description)
            throw ExitCode(2)
        }
        logger[metadataKey: "camera"] = "\(agentConfig.camera.id)"

        // Rules: the cache of the bucket's last good ruleset, else the config's file, else accept all.
        var ruleset = Ruleset.acceptAll
        var rulesSource = "default"
        if let cached = RuleCache(directory: agentConfig.spool.dir).load() {
            ruleset = cached
            rulesSource = "cache"
        } else if let path = agentConfig.rulesFile {
            do {
                ruleset = try RulesetLoader.load(path: path)
                rulesSource = "file"
            } catch {
                writeStandardError(error.description)
                throw ExitCode(2)
            }
        }

        let spool: Spool
        do {
            spool = try Spool(directory: agentConfig.spool.dir, maxBytes: agentConfig.spool.maxBytes, whenFull: agentConfig.spool.whenFull)
        } catch {
            writeStandardError("scan-agent run: \(error)")
            throw ExitCode(1)
        }
        if spool.depth > 0 {
            logger.info("spool holds events from an earlier run; they are sent first", metadata: ["depth": "\(spool.depth)"])
        }
        if spool.damaged > 0 {
            logger.warning("spool had damaged lines (a crash mid-write); they were cut", metadata: ["lines": "\(spool.damaged)"])
        }

        var runId = makeRunID()
        var checkpoint: ClipCheckpoint?
        let source: any FrameSource
        switch agentConfig.source.kind {
        case .clip:
            let path = agentConfig.source.path ?? ""
            var start = wallClock()
            var resumeFrame = 0
            if let saved = ClipCheckpoint.load(directory: agentConfig.spool.dir, clip: path) {
                runId = saved.runId
                start = saved.start
                resumeFrame = saved.frame
                logger.info("resuming an unfinished run on this clip", metadata: ["runId": "\(runId)", "frame": "\(saved.frame)"])
            }
            do {
                source = try ClipSource(
                    path: path, realtime: agentConfig.source.realtime, dropLate: agentConfig.source.dropLate, start: start,
                    resumeFrame: resumeFrame, logger: logger)
            } catch {
                writeStandardError("scan-agent run: \(error)")
                throw ExitCode(2)
            }
            checkpoint = ClipCheckpoint(directory: agentConfig.spool.dir, clip: path, runId: runId, start: start)
        case .v4l2:
            source = CameraSource(
                request: CaptureRequest(
                    device: agentConfig.source.device, width: agentConfig.source.width, height: agentConfig.source.height,
                    fps: agentConfig.source.fps),
                logger: logger)
        }

        let publisher: Publisher
        do {
            publisher = try Publisher(config: agentConfig, spool: spool, logger: logger)
        } catch {
            writeStandardError("scan-agent run: \(error)")
            throw ExitCode(2)
        }
        let runtime = try AgentRuntime(
            config: agentConfig, ruleset: ruleset, rulesSource: rulesSource, spool: spool, publisher: publisher, source: source,
            runId: runId, checkpoint: checkpoint, drainSeconds: drainSeconds, logger: logger)
        let signals = [SIGTERM, SIGINT].map { number -> any DispatchSourceSignal in
            signal(number, SIG_IGN)
            let handler = DispatchSource.makeSignalSource(signal: number, queue: .global())
            handler.setEventHandler {
                logger.info("signal received; ending tracks and the session, flushing events")
                runtime.requestStop()
            }
            handler.resume()
            return handler
        }
        runtime.run()
        signals.forEach { $0.cancel() }
    }
}
