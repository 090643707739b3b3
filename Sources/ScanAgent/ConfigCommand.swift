import ArgumentParser
import Foundation
import ScanAgentConfig
import ScanCore
import ScanEvents
import ScanNATS
import ScanReconciliation
import ScanServices

/// `scan-agent config check|show FILE`: an agent config checked as `run` reads it, or shown with
/// every default filled in, without opening a camera, a server or the spool.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Check an agent config, or show it with its defaults, without starting the camera.",
        subcommands: [Check.self, Show.self])

    /// The config as `run` reads it, or exit 2 with every error by JSON path.
    static func load(_ file: String) throws -> AgentConfig {
        do {
            return try AgentConfigLoader.load(path: file)
        } catch {
            writeStandardError(error.description)
            throw ExitCode(2)
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Print the effective config as JSON: every setting with the value run uses, defaults filled in (exit 2 with every error by JSON path).",
            discussion: """
                The output is itself a valid agent config that reads back to the same settings, \
                except that a password in source.url is shown as ***. Settings with no value and no \
                default (a rules file, TLS files) are left out.
                """)
        @Argument(help: "Agent config file (JSON; see docs/agent-config.md).") var file: String

        func run() throws {
            print(try ConfigCommand.load(file).document.formatted())
        }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Validate an agent config as run reads it: exit 0 with what it sets up, 2 with every error by JSON path."
        )
        @Argument(help: "Agent config file (JSON; see docs/agent-config.md).") var file: String
        @Option(
            help: ArgumentHelp(
                "The aggregator's topology: the camera's site, lane and station checked against it (exit 2 where the aggregator would dead-letter its events).",
                valueName: "FILE"))
        var topology: String?

        func run() throws {
            let config = try ConfigCommand.load(file)
            var summary = Self.summary(config, file: file)
            if let topology {
                let place: String
                do {
                    let layout = try Topology.parse(try ConfigFile.read(topology), file: topology)
                    place = try Self.place(config.camera, topology: layout, file: topology)
                } catch {
                    writeStandardError(error.description)
                    throw ExitCode(2)
                }
                summary += place + "\n"
            }
            print(TerminalText.escapedLines(summary), terminator: "")
        }

        /// The camera's place against the topology, as the aggregator checks every event it sends
        /// (`EventValidator.checkPlace`): a lane or station the topology gives the camera otherwise
        /// is an error (every event would be dead-lettered); a camera or site the topology does not
        /// place is said (its sightings make no item passes), not refused.
        static func place(_ camera: CameraIdentity, topology: Topology, file: String) throws(ConfigErrors) -> String {
            do {
                try EventValidator.checkPlace(
                    site: camera.site, camera: camera.id, lane: camera.lane, station: camera.station, topology: topology
                )
            } catch {
                let key = error.reason == .laneMismatch ? "camera.lane" : "camera.station"
                throw ConfigErrors(
                    file: file,
                    issues: [
                        ConfigIssue(
                            path: key,
                            message:
                                "\(error.detail): the aggregator would dead-letter every event as \(error.reason.rawValue)"
                        )
                    ])
            }
            guard topology.site(camera.site) != nil else {
                return "topology  \(file): no site '\(camera.site)' (events are kept; no item passes or pack records)"
            }
            let lane = topology.lane(site: camera.site, camera: camera.id)?.id
            let station = topology.station(site: camera.site, camera: camera.id)?.id
            let place = [lane.map { "lane \($0)" }, station.map { "station \($0)" }].compactMap { $0 }
            guard !place.isEmpty else {
                return
                    "topology  \(file): camera '\(camera.id)' is on no lane or station of site '\(camera.site)' (its sightings make no item passes)"
            }
            return "topology  \(file): ok, " + place.joined(separator: ", ")
        }

        /// What the config sets up, a line a part.
        static func summary(_ config: AgentConfig, file: String) -> String {
            let camera = config.camera
            let place = [camera.lane.map { "lane \($0)" }, camera.station.map { "station \($0)" }].compactMap { $0 }
            var lines = [
                "\(file): ok",
                "camera    \(camera.site)/\(camera.id)"
                    + (place.isEmpty ? "" : " (" + place.joined(separator: ", ") + ")"),
                "source    \(config.source.kind.rawValue) " + Self.source(config.source),
                "decoder   \(config.decoder.mode.rawValue), "
                    + config.decoder.symbologies.map(\.rawValue).joined(separator: ", "),
                "no-reads  " + (config.noread.enabled ? "on, after \(config.noread.minFrames) frames" : "off"),
                "session   \(config.session.start.rawValue)",
                "grouping  "
                    + (config.grouping.enabled
                        ? "on, gap \(config.grouping.maxGapPixels) px"
                            + (config.grouping.require.isEmpty
                                ? "" : ", requires " + config.grouping.require.map(\.name).joined(separator: ", "))
                        : "off"),
                "decision  "
                    + (config.decision.enabled
                        ? "on, deadline \(config.decision.deadlineMilliseconds) ms"
                            + (config.decision.beltFromBus ? ", belt speed from the bus" : "")
                        : "off"),
                "nats      \(redactedURL(config.nats.url)), prefix \(config.nats.prefix)",
                "spool     \(config.spool.dir), at most \(config.spool.maxBytes) bytes, \(config.spool.whenFull.rawValue)",
            ]
            if let listen = config.metricsListen { lines.append("metrics   \(listen)") }
            if let rules = config.rulesFile { lines.append("rules     \(rules)") }
            return lines.joined(separator: "\n") + "\n"
        }

        static func source(_ source: SourceConfig) -> String {
            switch source.kind {
            case .v4l2: "\(source.device) \(source.width)x\(source.height) at \(source.fps) fps"
            case .clip: "\(source.path ?? "?")" + (source.realtime ? " at its frame rate" : " as fast as it decodes")
            case .genicam: source.camera ?? "the first camera found"
            case .rtsp: source.url.map { "\($0)" } ?? "?"
            }
        }
    }
}
