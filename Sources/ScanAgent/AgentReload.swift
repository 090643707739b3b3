import Logging
import ScanAgentConfig
import ScanAgentRuntime
import ScanCore
import ScanServices

/// What SIGHUP (`systemctl reload scan-agent@cam-07`) does to a running agent: its config file is
/// read again and checked whole, then
/// - `logLevel` applies at once, unless `--log-level` or `SCANTRACK_LOG_LEVEL` set the level (they
///   win over the file, at start as here);
/// - the ruleset file `rules` names is read again and replaces the running ruleset, unless the
///   rules bucket has given one (the bucket wins over the file, at start as here);
/// - any other key that changed takes effect at the next start, and the log line names them.
/// A config or ruleset that does not parse changes nothing: the error is logged and the agent
/// runs on as it was.
final class AgentReload: Sendable {
    let path: String
    let levelPinned: Bool
    let started: AgentConfig
    let inbox: Inbox
    let board: StatusBoard
    let logger: Logger

    init(path: String, levelPinned: Bool, started: AgentConfig, inbox: Inbox, board: StatusBoard, logger: Logger) {
        self.path = path
        self.levelPinned = levelPinned
        self.started = started
        self.inbox = inbox
        self.board = board
        self.logger = logger
    }

    /// The level a config file's `logLevel` gives (the config checked it is one), else info.
    static func level(file: String?) -> Logger.Level {
        file.flatMap(Logger.Level.init(rawValue:)) ?? .info
    }

    func reload() {
        let config: AgentConfig
        do {
            config = try AgentConfigLoader.load(path: path)
        } catch {
            logger.error(
                "reload refused: the config file does not parse; nothing changed",
                metadata: [LogKey.error: "\(error.description)"])
            return
        }
        var applied: [String] = []
        var kept: [String] = []
        if levelPinned {
            kept.append("logLevel (set by --log-level or SCANTRACK_LOG_LEVEL)")
        } else {
            let level = Self.level(file: config.logLevel)
            ScanLogging.setRunningLevel(level)
            applied.append("logLevel=\(level)")
        }
        if let file = config.rulesFile {
            let source = board.current.rulesSource
            if source == "bucket" || source == "cache" {
                kept.append("rules (the rules bucket's ruleset stands: it wins over the file)")
            } else {
                do {
                    let ruleset = try RulesetLoader.load(path: file)
                    inbox.post(ruleset: ruleset, source: "file")
                    applied.append("rules=\(file) (\(ruleset.rules.count) rules)")
                } catch {
                    logger.error(
                        "reload: the ruleset file does not parse; the running ruleset stays",
                        metadata: [LogKey.error: "\(error.description)"])
                }
            }
        }
        let restart = Self.changedKeys(started, config).filter { $0 != "logLevel" && $0 != "rules" }
        logger.notice(
            "configuration reloaded",
            metadata: [
                "applied": "\(applied.joined(separator: ", "))", "kept": "\(kept.joined(separator: ", "))",
                "nextStart": "\(restart.joined(separator: ", "))",
            ])
        logger.debug("debug lines are on", metadata: ["config": "\(path)"])
    }

    /// The top-level keys whose values differ between two configs (as `config show` writes them).
    static func changedKeys(_ old: AgentConfig, _ new: AgentConfig) -> [String] {
        guard case .object(let before) = old.document, case .object(let after) = new.document else { return [] }
        let keys = (before.map(\.0) + after.map(\.0)).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        return keys.filter { key in
            before.first { $0.0 == key }?.1 != after.first { $0.0 == key }?.1
        }
    }
}
