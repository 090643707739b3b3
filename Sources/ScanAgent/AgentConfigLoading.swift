import Foundation
import ScanCore
import ScanServices
import ScanZXing
import ScanAgentConfig
import ScanRules

/// Reads a config file from disk, applying `SCANTRACK_NATS`, else `NATS_URL` (the nats CLI's),
/// over the file's NATS URL.
enum AgentConfigLoader {
    static func load(path: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(ConfigErrors) -> AgentConfig
    {
        var config = try AgentConfig.parse(try ConfigFile.read(path), file: path)
        // AgentConfig knows no engines; which symbologies zxing-cpp reads is known here.
        let unreadable = config.decoder.zxingSweep.enumerated().filter { !ZXingReader.reads($0.element) }.map {
            ConfigIssue(
                path: "decoder.zxingSweep[\($0.offset)]", message: "zxing-cpp does not read \($0.element.rawValue)")
        }
        if !unreadable.isEmpty { throw ConfigErrors(file: path, issues: unreadable) }
        // The environment over the file (the programs' one order: flag, environment, file).
        if let url = SettingResolver(environment: environment).nats(flag: ("nats", nil)) { config.nats.url = url.value }
        return config
    }
}

/// Reads a ruleset file.
enum RulesetLoader {
    static func load(path: String) throws(ConfigErrors) -> Ruleset {
        try Ruleset.parse(try ConfigFile.read(path), file: path)
    }
}

/// A run id that makes track and event ids unique across restarts and unguessable by another
/// camera (which could otherwise publish an id first and have this camera's event dropped as its
/// duplicate): milliseconds since the epoch, then 128 bits from the system's random source, in
/// base 36. Not shown on the dashboard.
func makeRunID() -> String {
    let now = Int64(Date().timeIntervalSince1970 * 1000)
    var random = SystemRandomNumberGenerator()
    func part(_ value: UInt64) -> String {
        let digits = String(value, radix: 36)
        return String(repeating: "0", count: 13 - digits.count) + digits  // 36^13 > 2^64
    }
    return String(now, radix: 36) + part(random.next()) + part(random.next())
}

func writeStandardError(_ text: String) { ScanLogging.writeError(text) }
