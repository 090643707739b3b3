import ArgumentParser
import Foundation
import Logging
import ScanAgentRuntime
import ScanCore
import ScanJPEG
import ScanRTSP
import ScanMetrics
import ScanNATS
import ScanServices
import ScanV4L2
import ScanAgentConfig
import ScanRules

/// `scan-agent run --config FILE.json`: one camera (or clip) until SIGTERM/SIGINT or the end of
/// the clip. See docs/agent-config.md and docs/walkthrough.md's "Running an agent". The agent is one
/// `ServiceGroup` (AgentServices): capture, decoding, rules, commands and the publisher.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run one camera: capture, decode, track, and publish to NATS JetStream.",
        discussion: """
            Exit codes: 0 stopped by SIGTERM/SIGINT or at the end of a clip (open tracks and the \
            session ended, events flushed to JetStream or kept in the spool); 1 runtime failure \
            (spool folder unusable); 2 bad config, ruleset or clip.
            """)

    @Option(help: "Agent config file (JSON; see docs/agent-config.md).")
    var config: String

    @Option(help: "Seconds to keep sending the spool at shutdown before leaving the rest for the next start.")
    var drainSeconds: Double = 5

    @Option(
        help:
            "Log level: trace, debug, info, notice, warning, error, critical (default: $SCANTRACK_LOG_LEVEL, else info)."
    )
    var logLevel: String?

    @Option(
        help: "Log lines: text, or json, one object a line for Loki or ELK (default: $SCANTRACK_LOG_FORMAT, else text)."
    )
    var logFormat: String?

    func validate() throws {
        do {
            _ = try LogChoice.resolve(level: logLevel, format: logFormat)
        } catch {
            throw ValidationError(error.description)
        }
        guard drainSeconds >= 0 && drainSeconds <= 3600 else {
            throw ValidationError("--drain-seconds must be 0 to 3600, not \(drainSeconds)")
        }
    }

    func run() async throws {
        let logs = (try? LogChoice.resolve(level: logLevel, format: logFormat)) ?? LogChoice()
        ScanLogging.format = logs.format
        var logger = ScanLogging.logger("scan-agent", level: logs.level)
        let agentConfig: AgentConfig
        do {
            agentConfig = try AgentConfigLoader.load(path: config)
        } catch {
            writeStandardError(error.description)
            throw ExitCode(2)
        }
        logger[metadataKey: LogKey.camera] = "\(agentConfig.camera.id)"
        // The level: --log-level, else SCANTRACK_LOG_LEVEL, else the config's logLevel (which
        // SIGHUP may change), else info.
        let levelPinned = logs.levelGiven
        ScanLogging.setRunningLevel(levelPinned ? logs.level : AgentReload.level(file: agentConfig.logLevel))

        // Rules: the cache of the bucket's last good ruleset, else the config's file, else accept all.
        var ruleset = Ruleset.acceptAll
        var rulesSource = "default"
        let ruleCache = RuleCache(directory: agentConfig.spool.dir)
        if let cached = ruleCache.load() {
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
            spool = try Spool(
                directory: agentConfig.spool.dir, maxBytes: agentConfig.spool.maxBytes,
                whenFull: agentConfig.spool.whenFull)
        } catch {
            writeStandardError("scan-agent run: \(error)")
            throw ExitCode(1)
        }
        if spool.depth > 0 {
            logger.info(
                "spool holds events from an earlier run; they are sent first",
                metadata: ["depth": .stringConvertible(spool.depth)])
        }
        if spool.damaged > 0 {
            logger.warning(
                "spool had damaged lines (a crash mid-write); they were cut",
                metadata: ["lines": .stringConvertible(spool.damaged)])
        }

        let clock = SystemClock()
        var runId = makeRunID()
        var checkpoint: ClipCheckpoint?
        let source: any FrameSource
        switch agentConfig.source.kind {
        case .clip:
            let path = agentConfig.source.path ?? ""
            let now = clock.now
            var start = agentConfig.source.startAt ?? now
            var resumeFrame = 0
            var lead = Duration.milliseconds(start.milliseconds - now.milliseconds)
            if let saved = ClipCheckpoint.load(directory: agentConfig.spool.dir, clip: path) {
                runId = saved.runId
                start = saved.start
                resumeFrame = saved.frame
                lead = .zero
                logger.info(
                    "resuming an unfinished run on this clip",
                    metadata: [LogKey.run: "\(runId)", "frame": .stringConvertible(saved.frame)])
            }
            if lead > .zero && agentConfig.source.realtime {
                logger.info("the clip starts at source.startAt", metadata: ["startAt": "\(start)"])
            }
            do {
                source = try ClipSource(
                    path: path, realtime: agentConfig.source.realtime, dropLate: agentConfig.source.dropLate,
                    start: start, resumeFrame: resumeFrame, lead: lead, logger: logger)
            } catch {
                writeStandardError("scan-agent run: \(error)")
                throw ExitCode(2)
            }
            checkpoint = ClipCheckpoint(directory: agentConfig.spool.dir, clip: path, runId: runId, start: start)
        case .genicam:
            source = GenICamSource(
                camera: agentConfig.source.camera, expect: agentConfig.source.expect,
                controls: agentConfig.source.controls, clock: clock, logger: logger)
        case .rtsp:
            guard let address = agentConfig.source.url else { throw ExitCode(2) }  // the config requires it
            var url: String?
            if let file = agentConfig.source.passwordFile {
                guard let data = FileManager.default.contents(atPath: file), let password = SecretText.firstLine(data)
                else {
                    writeStandardError(
                        "scan-agent run: source.passwordFile \(TerminalText.escaped(file)): cannot be read, or empty")
                    throw ExitCode(2)
                }
                url = address.withCredentials(user: address.user ?? "", password: password)
            }
            source = RTSPSource(
                address: address, url: url,
                transport: RTSPStream.Transport(rawValue: agentConfig.source.transport) ?? .tcp,
                policy: RTSPGuardPolicy(
                    allowBasicAuth: agentConfig.source.allowBasicAuth, tlsCA: agentConfig.source.tlsCA),
                clock: clock, logger: logger)
        case .v4l2:
            source = CameraSource(
                request: CaptureRequest(
                    device: agentConfig.source.device, width: agentConfig.source.width,
                    height: agentConfig.source.height,
                    fps: agentConfig.source.fps),
                controls: agentConfig.source.controls, clock: clock, logger: logger)
        }
        logger[metadataKey: LogKey.run] = "\(runId)"

        let link: NATSAgentLink
        let decoder: CameraDecoder
        var images: NoReadImageFolder?
        do {
            link = try NATSAgentLink(config: agentConfig)
            decoder = try CameraDecoder(
                config: agentConfig.decoder, camera: agentConfig.camera.id, locate: agentConfig.noread.enabled)
            if agentConfig.noread.enabled {
                images = try NoReadImageFolder(
                    path: agentConfig.noread.imageDir ?? agentConfig.spool.dir + "/noreads",
                    maxImages: agentConfig.noread.maxImages, maxBytes: agentConfig.noread.maxImageBytes)
            }
        } catch {
            writeStandardError("scan-agent run: \(error)")
            throw ExitCode(2)
        }
        // Before any metric is made: a metric made earlier would stay unrecorded.
        if agentConfig.metricsListen != nil { BuildInfo.record(program: "scan-agent") }  // bootstraps metrics
        var parts = AgentParts(
            source: source, sink: spool, bus: link, commands: link, rules: link, clock: clock, ruleCache: ruleCache)
        parts.belt = link
        parts.previews = JPEGPreviews()
        parts.imageEncoder = JPEGPreviews()
        let agent = AgentServices(
            settings: AgentLoop.Settings(config: agentConfig, runId: runId, rulesSource: rulesSource), ruleset: ruleset,
            parts: parts, decoder: decoder, images: images, checkpoint: checkpoint, drain: .seconds(drainSeconds),
            logger: logger)
        logger.info(
            "scan-agent running",
            metadata: [
                LogKey.site: "\(agentConfig.camera.site)", "camera.source": "\(source.kind.rawValue)",
                "nats": "\(link.address)",
                "spool": "\(spool.directory)", "rules": .stringConvertible(ruleset.revision),
            ])
        var services = agent.services
        if let listen = agentConfig.metricsListen, let address = ListenAddress.parse(listen) {
            // First in, last out. Ready: connected to NATS (events are spooled meanwhile).
            let readiness = Readiness([]) { [link] in
                [
                    HealthCheck(
                        name: "nats", ok: link.isConnected, detail: link.isConnected ? "connected" : "disconnected")
                ]
            }
            services.insert(
                .init(
                    service: ScanMetrics.endpoint(
                        host: address.host, port: address.port, readiness: readiness, logger: logger),
                    serviceName: "metrics"), at: 0)
        }
        // SIGHUP: the config file read again; its log level and ruleset file applied (AgentReload).
        let reload = AgentReload(
            path: config, levelPinned: levelPinned, started: agentConfig, inbox: agent.loop.inbox,
            board: agent.loop.board, logger: logger)
        services.insert(.init(service: HangupService { reload.reload() }, serviceName: "reload"), at: 0)
        // Under systemd (Type=notify): ready once decoding runs; the watchdog fed while frames
        // flow or the camera is being reopened. First in: it says STOPPING=1 as the stop begins.
        let loop = agent.loop
        services.insert(
            .init(
                service: SupervisorService(
                    notifier: SystemdNotifier(environment: ProcessInfo.processInfo.environment), logger: logger
                ) { loop.supervisorReport() }, serviceName: "systemd"), at: 0)
        do {
            try await programGroup(services, stopsOnSignals: true, logger: logger).run()
        } catch {
            logger.error("scan-agent failed", metadata: [LogKey.error: "\(error)"])
            throw ExitCode(1)
        }
        logger.info(
            "scan-agent stopped",
            metadata: [
                "frames": .stringConvertible(loop.framesProcessed), "sightings": .stringConvertible(loop.sightings),
                "noReads": .stringConvertible(loop.noReads),
                "published": .stringConvertible(agent.delivery.published),
                "duplicates": .stringConvertible(agent.delivery.duplicates), "spool": .stringConvertible(spool.depth),
                "spoolDropped": .stringConvertible(spool.dropped),
                "framesDropped": .stringConvertible(agent.queue.dropped),
                "decodeFailures": .stringConvertible(loop.decodeFailures),
                "decoding": "\(loop.decodingSummary)",
                "images": "\(loop.imageBucket?.summary ?? "off")",
            ])
    }
}

/// `snapshot` pictures as JPEG (libjpeg-turbo).
struct JPEGPreviews: PreviewEncoder, ImageEncoder {
    func jpeg(_ image: RGBImage) throws -> [UInt8] { try JPEGImage.encode(image, quality: 80) }
    /// The images bucket's pictures: grey JPEG.
    func jpeg(_ image: GrayImage, quality: Int) throws -> [UInt8] { try JPEGImage.encode(image, quality: quality) }
}
