import Foundation
import ScanCore

#if canImport(Glibc)
import Glibc
#endif

/// Writes `bytes` to `path` through a temporary file and a rename, so a reader sees the old
/// file or the new one, never half of one.
func writeAtomically(_ bytes: [UInt8], to path: String) -> Bool {
    let temporary = path + ".tmp"
    guard FileManager.default.createFile(atPath: temporary, contents: Data(bytes)) else { return false }
    return rename(temporary, path) == 0
}

/// The last good ruleset from the rules bucket, kept beside the spool so that an agent started
/// while NATS is unreachable runs what it ran before: `rules.json` (the bucket's bytes) and
/// `rules.revision`.
struct RuleCache {
    let directory: String
    var rulesPath: String { directory + "/rules.json" }
    var revisionPath: String { directory + "/rules.revision" }

    var revision: UInt64? {
        FileManager.default.contents(atPath: revisionPath)
            .flatMap { String(data: $0, encoding: .utf8) }
            .flatMap { UInt64($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// The cached ruleset, or nil when none is cached (or the cache does not parse).
    func load() -> Ruleset? {
        guard let revision, let data = FileManager.default.contents(atPath: rulesPath) else { return nil }
        return try? Ruleset.parse(Array(data), file: rulesPath, revision: String(revision))
    }

    func save(_ bytes: [UInt8], revision: UInt64) {
        _ = writeAtomically(bytes, to: rulesPath)
        _ = writeAtomically(Array("\(revision)\n".utf8), to: revisionPath)
    }
}

/// Where a clip source stands, so that an agent killed mid-clip and started again resumes the
/// same run: same run id and start time, so the frames before the crash give the same event ids
/// (JetStream drops the repeats by `Nats-Msg-Id`) and the tracks open at the crash are finished.
/// Written about once a second, removed when the clip ends. Only clips resume: a camera's
/// frames during the downtime are gone, and a restarted camera agent starts a new run.
struct ClipCheckpoint {
    let path: String
    let clip: String
    let clipBytes: Int64
    let runId: String
    let start: Timestamp

    struct Saved {
        var runId: String
        var start: Timestamp
        var frame: Int
    }

    /// The saved position for this clip, when the last run on it did not finish.
    static func load(directory: String, clip: String) -> Saved? {
        guard let data = FileManager.default.contents(atPath: directory + "/clip-checkpoint.json"),
            let document = try? JSONValue.parse(Array(data)),
            document["clip"]?.stringValue == clip, document["clipBytes"]?.intValue.map(Int64.init) == fileSize(clip),
            let runId = document["runId"]?.stringValue, let start = document["start"]?.stringValue.flatMap(Timestamp.init(rfc3339:)),
            let frame = document["frame"]?.intValue
        else { return nil }
        return Saved(runId: runId, start: start, frame: frame)
    }

    init(directory: String, clip: String, runId: String, start: Timestamp) {
        self.path = directory + "/clip-checkpoint.json"
        self.clip = clip
        self.clipBytes = Self.fileSize(clip)
        self.runId = runId
        self.start = start
    }

    func save(frame: Int) {
        var writer = JSONWriter()
        writer.field("clip", clip)
        writer.field("clipBytes", Int(clipBytes))
        writer.field("runId", runId)
        writer.field("start", start.description)
        writer.field("frame", frame)
        _ = writeAtomically(writer.finished(), to: path)
    }

    func remove() { unlink(path) }

    static func fileSize(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : -1
    }
}
