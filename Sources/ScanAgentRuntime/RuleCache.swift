import Foundation
import ScanCore
import ScanRules

#if canImport(Glibc)
    import Glibc
#endif

/// Writes `bytes` to `path` through a temporary file and a rename, so a reader sees the old
/// file or the new one, never half of one.
public func writeAtomically(_ bytes: [UInt8], to path: String) -> Bool {
    let temporary = path + ".tmp"
    guard FileManager.default.createFile(atPath: temporary, contents: Data(bytes)) else { return false }
    return rename(temporary, path) == 0
}

/// The last good ruleset from the rules bucket, kept beside the spool so that an agent started
/// while NATS is unreachable runs what it ran before: `rules.json` (the bucket's bytes) and
/// `rules.revision`.
public struct RuleCache: Sendable {
    public let directory: String

    public init(directory: String) { self.directory = directory }

    var rulesPath: String { directory + "/rules.json" }
    var revisionPath: String { directory + "/rules.revision" }

    public var revision: UInt64? {
        FileManager.default.contents(atPath: revisionPath)
            .flatMap { String(data: $0, encoding: .utf8) }
            .flatMap { UInt64($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// The cached ruleset, or nil when none is cached (or the cache does not parse).
    public func load() -> Ruleset? {
        guard let revision, let data = FileManager.default.contents(atPath: rulesPath) else { return nil }
        return try? Ruleset.parse(Array(data), file: rulesPath, revision: String(revision))
    }

    public func save(_ bytes: [UInt8], revision: UInt64) {
        _ = writeAtomically(bytes, to: rulesPath)
        _ = writeAtomically(Array("\(revision)\n".utf8), to: revisionPath)
    }
}
