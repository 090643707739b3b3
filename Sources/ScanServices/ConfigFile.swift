import Foundation
import ScanCore

/// A config file's bytes (agent config, ruleset, topology), or the error every program gives for
/// one it cannot read.
public enum ConfigFile {
    public static func read(_ path: String) throws(ConfigErrors) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigErrors(file: path, issues: [ConfigIssue(path: "$", message: "cannot read the file")])
        }
        return Array(data)
    }
}
