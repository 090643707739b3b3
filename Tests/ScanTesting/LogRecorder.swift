import Foundation
import Logging

/// Keeps every message logged through `logger`, in order (threads interleaved as they logged).
public final class LogRecorder: @unchecked Sendable {
    // @unchecked: guarded by the lock.
    private let lock = NSLock()
    private var lines: [String] = []
    private var detailed: [String] = []

    public init() {}

    public var messages: [String] { lock.withLock { lines } }
    /// Each message followed by its metadata, `key=value` sorted by key (the handler's and the call's).
    public var messagesWithMetadata: [String] { lock.withLock { detailed } }

    /// A logger that records into this recorder at `level` and above.
    public func logger(level: Logger.Level = .info) -> Logger {
        var logger = Logger(label: "test") { _ in Handler(recorder: self) }
        logger.logLevel = level
        return logger
    }

    fileprivate func append(_ line: String, metadata: Logger.Metadata) {
        let pairs = metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        lock.withLock {
            lines.append(line)
            detailed.append(([line] + pairs).joined(separator: " "))
        }
    }

    struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            recorder.append("\(event.message)", metadata: metadata.merging(event.metadata ?? [:]) { _, call in call })
        }
    }
}
