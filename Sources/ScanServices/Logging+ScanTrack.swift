import Foundation
import Logging
import ScanCore

/// Logging the same way in every program: lines on stderr (stdout is for output scripts read),
/// the level from `--log-level`, metadata under the dotted keys below.
public enum ScanLogging {
    /// Sends log lines to stderr. Call once, first thing in `main`.
    public static func bootstrap() {
        LoggingSystem.bootstrap { label in EscapingLogHandler(StreamLogHandler.standardError(label: label)) }
    }

    /// A logger for `label` at `level`.
    public static func logger(_ label: String, level: Logger.Level) -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = level
        return logger
    }

    /// Parses a `--log-level` value; the error names the flag and lists the levels.
    public static func level(_ text: String, flag: String = "--log-level") throws(LogLevelError) -> Logger.Level {
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            throw LogLevelError(flag: flag, value: text)
        }
        return level
    }
}

/// A `--log-level` value that is not a level.
public struct LogLevelError: Error, CustomStringConvertible {
    public let flag: String
    public let value: String
    public var description: String {
        "\(flag): '\(value)' is not a log level (\(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")))"
    }
}

/// Metadata keys used in every program's log lines, so that a log pipeline can filter on them.
public enum LogKey {
    public static let camera = "camera.id"
    public static let site = "camera.site"
    public static let run = "run.id"
    public static let track = "track.id"
    public static let service = "service"
    public static let error = "error"
}

/// A log handler that shows control characters and bidi overrides in messages and metadata
/// escaped (`TerminalText`) before the handler it wraps writes them: a decoded value, a camera id
/// or a server's error text cannot move the cursor, clear a terminal or forge a log line.
public struct EscapingLogHandler<Inner: LogHandler>: LogHandler {
    public var inner: Inner

    public init(_ inner: Inner) { self.inner = inner }

    public var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    public var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    public var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    public func log(event: LogEvent) {
        var event = event
        let text = event.message.description
        if text.unicodeScalars.contains(where: TerminalText.needsEscape) {
            event.message = Logger.Message(stringLiteral: TerminalText.escaped(text))
        }
        event.metadata = event.metadata.map(Self.escaped)
        inner.log(event: event)
    }

    static func escaped(_ metadata: Logger.Metadata) -> Logger.Metadata {
        metadata.mapValues(escaped)
    }

    static func escaped(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): .string(TerminalText.escaped(text))
        case .stringConvertible(let item):
            item.description.unicodeScalars.contains(where: TerminalText.needsEscape)
                ? .string(TerminalText.escaped(item.description)) : value
        case .dictionary(let nested): .dictionary(escaped(nested))
        case .array(let items): .array(items.map(escaped))
        @unknown default: value
        }
    }
}
