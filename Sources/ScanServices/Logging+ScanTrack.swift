import Foundation
import Logging
import ScanCore
import Synchronization

/// Logging the same way in every program: lines on stderr (stdout is for output scripts read),
/// the level from `--log-level`, the form from `--log-format` (`text`, or `json` for Loki or
/// ELK), metadata under the dotted keys below.
public enum ScanLogging {
    /// Who writes the lines, for JSON lines (`service.name`, `service.version`, `host.name`, as
    /// OpenTelemetry names them): set once by `ProgramStart.begin`.
    public struct Resource: Sendable, Equatable {
        public var service: String
        public var version: String
        public var host: String

        public init(service: String, version: String, host: String) {
            self.service = service
            self.version = version
            self.host = host
        }
    }

    public static var resource: Resource? {
        get { formatLock.withLock { chosenResource } }
        set { formatLock.withLock { chosenResource = newValue } }
    }
    nonisolated(unsafe) private static var chosenResource: Resource?

    /// The machine's host name (gethostname), "unknown" if it has none.
    public static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "unknown" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "unknown" : name
    }

    /// Sends log lines to stderr. Call once, first thing in `main`.
    public static func bootstrap() {
        LoggingSystem.bootstrap { label in EscapingLogHandler(LineLogHandler(label: label)) }
    }

    /// The level every logger of the program logs at from now on, whatever level it was made
    /// with (nil: each its own again). For a level that changes while the program runs.
    public static func setRunningLevel(_ level: Logger.Level?) {
        runningLevelIndex.store(level.flatMap { Logger.Level.allCases.firstIndex(of: $0) } ?? -1, ordering: .relaxed)
    }

    /// The level `setRunningLevel` set, if any.
    public static var runningLevel: Logger.Level? {
        let index = runningLevelIndex.load(ordering: .relaxed)
        return Logger.Level.allCases.indices.contains(index) ? Logger.Level.allCases[index] : nil
    }
    private static let runningLevelIndex = Atomic<Int>(-1)

    /// Lines begin with their syslog priority (`<6>` info … `<2>` critical): set when standard
    /// error is the journal.
    public static var priorityPrefixes: Bool {
        get { formatLock.withLock { chosenPrefixes } }
        set { formatLock.withLock { chosenPrefixes = newValue } }
    }
    nonisolated(unsafe) private static var chosenPrefixes = false

    /// True when standard error is the stream systemd connected to the journal: `JOURNAL_STREAM`
    /// names its device and inode (`DEV:INODE`), and they are standard error's (not merely
    /// inherited by a child whose stderr was redirected elsewhere).
    public static func standardErrorIsJournal(environment: [String: String]) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var status = stat()
        guard fstat(2, &status) == 0 else { return false }
        return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
    }

    /// A program's own error message on stderr (a refused config, a failed start): its control
    /// characters shown escaped, and under the journal each line at the error priority.
    public static func writeError(_ text: String) {
        var lines = TerminalText.escapedLines(text)
        if priorityPrefixes {
            lines = lines.split(separator: "\n", omittingEmptySubsequences: false).map { "<3>" + $0 }
                .joined(separator: "\n")
        }
        FileHandle.standardError.write(Data((lines + "\n").utf8))
    }

    /// syslog's priority of a level, as sd-daemon(3)'s prefixes give it.
    public static func syslogPriority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// How lines are written from now on: set by a program once its `--log-format` is read.
    public static var format: LogFormat {
        get { formatLock.withLock { chosenFormat } }
        set { formatLock.withLock { chosenFormat = newValue } }
    }
    private static let formatLock = NSLock()
    nonisolated(unsafe) private static var chosenFormat = LogFormat.text

    /// Parses a `--log-format` value; the error names the flag and lists the forms.
    public static func format(_ text: String, flag: String = "--log-format") throws(LogLevelError) -> LogFormat {
        guard let format = LogFormat(rawValue: text.lowercased()) else {
            throw LogLevelError(flag: flag, value: text, expected: "a log format (text, json)")
        }
        return format
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

/// `text`: `2026-11-26T08:00:01.250Z info scan-agent: key=value [source] message`; `json`: one
/// object a line with `time` (RFC 3339, milliseconds), `level`, `logger`, `source`, `message`
/// and each metadata key.
public enum LogFormat: String, Sendable, CaseIterable {
    case text, json
}

/// A program's log level and form: its flags, else `SCANTRACK_LOG_LEVEL` and
/// `SCANTRACK_LOG_FORMAT`, else info and text (a unit file or a container sets them once for
/// every program). A bad value's error names where it came from.
public struct LogChoice: Sendable, Equatable {
    public var level: Logger.Level
    public var format: LogFormat
    /// The level came from the flag or the variable (not the default): a config file's own
    /// level gives way to it.
    public var levelGiven = false

    public static let variables = (level: "SCANTRACK_LOG_LEVEL", format: "SCANTRACK_LOG_FORMAT")

    public init(level: Logger.Level = .info, format: LogFormat = .text, levelGiven: Bool = false) {
        self.level = level
        self.format = format
        self.levelGiven = levelGiven
    }

    /// `level` / `format`: the flags' values (nil: not given).
    public static func resolve(
        level: String?, format: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(LogLevelError) -> LogChoice {
        let resolver = SettingResolver(environment: environment)
        var choice = LogChoice()
        if let (text, origin) = resolver.string(flag: ("log-level", level), variable: variables.level) {
            choice.level = try ScanLogging.level(text, flag: origin.description)
            choice.levelGiven = true
        }
        if let (text, origin) = resolver.string(flag: ("log-format", format), variable: variables.format) {
            choice.format = try ScanLogging.format(text, flag: origin.description)
        }
        return choice
    }
}

/// A `--log-level` or `--log-format` value that is not one.
public struct LogLevelError: Error, CustomStringConvertible {
    public let flag: String
    public let value: String
    public var expected: String = "a log level (\(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")))"
    public var description: String { "\(flag): '\(value)' is not \(expected)" }
}

/// Writes each log event as one line on stderr, in `ScanLogging.format`. Its level is the one it
/// was given, unless the program set a running level (`ScanLogging.setRunningLevel`: SIGHUP's
/// reload), which every handler follows from then on.
public struct LineLogHandler: LogHandler {
    public let label: String
    private var ownLevel: Logger.Level = .info
    public var logLevel: Logger.Level {
        get { ScanLogging.runningLevel ?? ownLevel }
        set { ownLevel = newValue }
    }
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?

    public init(label: String) { self.label = label }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let provided = metadataProvider?.get() { all.merge(provided) { $1 } }
        if let given = event.metadata { all.merge(given) { $1 } }
        let line = Self.line(
            event: event, label: label, metadata: all, format: ScanLogging.format,
            time: Timestamp(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))),
            resource: ScanLogging.resource)
        let prefix = ScanLogging.priorityPrefixes ? "<\(ScanLogging.syslogPriority(event.level))>" : ""
        FileHandle.standardError.write(Data((prefix + line + "\n").utf8))
    }

    /// One event as a line (without its newline).
    public static func line(
        event: LogEvent, label: String, metadata: Logger.Metadata, format: LogFormat, time: Timestamp,
        resource: ScanLogging.Resource? = nil
    ) -> String {
        let keys = metadata.keys.sorted()
        switch format {
        case .text:
            let pairs = keys.map { "\($0)=\(metadata[$0].map { "\($0)" } ?? "")" }.joined(separator: " ")
            return "\(time) \(event.level) \(label):" + (pairs.isEmpty ? "" : " " + pairs)
                + " [\(event.source)] \(event.message)"
        case .json:
            var writer = JSONWriter()
            writer.field("time", time.description)
            writer.field("level", event.level.rawValue)
            writer.field("logger", label)
            writer.field("source", event.source)
            writer.field("message", event.message.description)
            if let resource {
                writer.field("service.name", resource.service)
                writer.field("service.version", resource.version)
                writer.field("host.name", resource.host)
            }
            let reserved: Set = [
                "time", "level", "logger", "source", "message", "service.name", "service.version", "host.name",
            ]
            for key in keys {
                guard let value = metadata[key] else { continue }
                writer.raw(reserved.contains(key) ? "metadata." + key : key, json(value))
            }
            return String(decoding: writer.finished(), as: UTF8.self)
        }
    }

    static func json(_ value: Logger.Metadata.Value) -> [UInt8] {
        switch value {
        case .string(let text): return string(text)
        case .stringConvertible(let item):
            // Numbers stay numbers (a count, a duration), flags flags; anything else is its text.
            if item is any BinaryInteger { return Array(item.description.utf8) }
            if let flag = item as? Bool { return Array((flag ? "true" : "false").utf8) }
            if let number = item as? Double, number.isFinite { return Array(number.description.utf8) }
            return string(item.description)
        case .array(let items): return JSONWriter.array(items.map(json))
        case .dictionary(let entries):
            var writer = JSONWriter()
            for key in entries.keys.sorted() { if let entry = entries[key] { writer.raw(key, json(entry)) } }
            return writer.finished()
        @unknown default: return string("\(value)")
        }
    }

    private static func string(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        JSONWriter.appendString(text, to: &bytes)
        return bytes
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
    /// The event a line is about (its `eventId`).
    public static let event = "event.id"
    /// The W3C trace id of that event (docs/integration.md, "Tracing"), as OpenTelemetry's log
    /// data model names it: the 32 hex digits of the message's `traceparent`.
    public static let trace = "trace_id"

    /// A log line's fields naming an event: its id (escaped: an id built from stored or received
    /// text may hold anything) and, when it has one, its trace id.
    public static func about(event id: String, trace: TraceContext?) -> Logger.Metadata {
        var metadata: Logger.Metadata = [event: "\(TerminalText.escaped(id))"]
        if let trace { metadata[Self.trace] = "\(trace.traceId)" }
        return metadata
    }

    /// The same for an event an agent sends: its trace is the one its id gives (`TraceContext.forEvent`).
    public static func about(agentEvent id: String) -> Logger.Metadata {
        about(event: id, trace: TraceContext.forEvent(id))
    }
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
