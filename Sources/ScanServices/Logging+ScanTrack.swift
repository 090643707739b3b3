import Foundation
import Logging

/// Logging the same way in every program: lines on stderr (stdout is for output scripts read),
/// the level from `--log-level`, metadata under the dotted keys below.
public enum ScanLogging {
    /// Sends log lines to stderr. Call once, first thing in `main`.
    public static func bootstrap() {
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
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
