import Foundation
import ScanCore

#if canImport(Glibc)
    import Glibc
#endif

/// Where a clip source stands, so that an agent killed mid-clip and started again resumes the
/// same run: same run id and start time, so the frames before the crash give the same event ids
/// (JetStream drops the repeats by `Nats-Msg-Id`) and the tracks open at the crash are finished.
/// Written about once a second, removed when the clip ends. Only clips resume: a camera's
/// frames during the downtime are gone, and a restarted camera agent starts a new run.
public struct ClipCheckpoint: Sendable {
    let path: String
    let clip: String
    let clipBytes: Int64
    let runId: String
    let start: Timestamp

    public struct Saved: Sendable {
        public var runId: String
        public var start: Timestamp
        public var frame: Int
    }

    /// The saved position for this clip, when the last run on it did not finish.
    public static func load(directory: String, clip: String) -> Saved? {
        guard let data = FileManager.default.contents(atPath: directory + "/clip-checkpoint.json"),
            let document = try? JSONValue.parse(Array(data)),
            document["clip"]?.stringValue == clip, document["clipBytes"]?.intValue.map(Int64.init) == fileSize(clip),
            let runId = document["runId"]?.stringValue,
            let start = document["start"]?.stringValue.flatMap(Timestamp.init(rfc3339:)),
            let frame = document["frame"]?.intValue
        else { return nil }
        return Saved(runId: runId, start: start, frame: frame)
    }

    public init(directory: String, clip: String, runId: String, start: Timestamp) {
        self.path = directory + "/clip-checkpoint.json"
        self.clip = clip
        self.clipBytes = Self.fileSize(clip)
        self.runId = runId
        self.start = start
    }

    public func save(frame: Int) {
        var writer = JSONWriter()
        writer.field("clip", clip)
        writer.field("clipBytes", Int(clipBytes))
        writer.field("runId", runId)
        writer.field("start", start.description)
        writer.field("frame", frame)
        _ = writeAtomically(writer.finished(), to: path)
    }

    public func remove() { unlink(path) }

    static func fileSize(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : -1
    }
}
