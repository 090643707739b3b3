import Foundation

/// The one order every program takes its settings in: the command-line flag, then the
/// environment variable, then the config file, then the default. An empty value counts as not
/// given at every level (an exported but empty variable does not hide the file). Adapters get the
/// resolved values as parameters; only the programs read the environment, through this.
public struct SettingResolver: Sendable {
    /// Where a value came from, for messages (`--pg`, `SCANTRACK_PG`, `the config file's "pg"`).
    public enum Origin: Sendable, Equatable, CustomStringConvertible {
        case flag(String), environment(String), file(String), fallback

        public var description: String {
            switch self {
            case .flag(let name): "--\(name)"
            case .environment(let name): name
            case .file(let key): "the config file's \"\(key)\""
            case .fallback: "the default"
            }
        }
    }

    public let environment: [String: String]
    /// The config file's values by key (read by the program, which knows its file).
    public var file: [String: String]

    public init(environment: [String: String] = ProcessInfo.processInfo.environment, file: [String: String] = [:]) {
        self.environment = environment
        self.file = file
    }

    /// The first of flag, environment variable `variable`, file key `key` that is given and not empty.
    public func string(flag: (name: String, value: String?)? = nil, variable: String? = nil, key: String? = nil)
        -> (value: String, origin: Origin)?
    {
        if let flag, let value = flag.value, !value.isEmpty { return (value, .flag(flag.name)) }
        if let variable, let value = environment[variable], !value.isEmpty { return (value, .environment(variable)) }
        if let key, let value = file[key], !value.isEmpty { return (value, .file(key)) }
        return nil
    }

    /// libpq's own variables (as psql reads them): with one set and no ScanTrack setting, the
    /// empty connection string lets libpq take them, its service file and `PGPASSFILE`.
    public static let libpqVariables = [
        "PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGUSER", "PGSERVICE", "PGSERVICEFILE", "PGPASSFILE",
    ]

    /// The PostgreSQL connection string: the flag, `SCANTRACK_PG`, the file's `key`, else (when one
    /// of libpq's own variables is set) the empty string, which libpq fills from them.
    public func postgres(flag: (name: String, value: String?), key: String? = nil) -> (value: String, origin: Origin)? {
        if let given = string(flag: flag, variable: "SCANTRACK_PG", key: key) { return given }
        guard let variable = Self.libpqVariables.first(where: { !(environment[$0] ?? "").isEmpty }) else {
            return nil
        }
        return ("", .environment(variable))
    }

    /// The NATS server: the flag, `SCANTRACK_NATS`, `NATS_URL` (the variable the nats CLI and
    /// clients read), then the file's `key`.
    public func nats(flag: (name: String, value: String?), key: String? = nil) -> (value: String, origin: Origin)? {
        string(flag: flag, variable: "SCANTRACK_NATS") ?? string(variable: "NATS_URL", key: key)
    }

    /// As `string`, read as a whole number; a value that is not one is an error naming where it came from.
    public func int(flag: (name: String, value: Int?)? = nil, variable: String? = nil, key: String? = nil)
        throws(SettingError) -> (value: Int, origin: Origin)?
    {
        if let flag, let value = flag.value { return (value, .flag(flag.name)) }
        guard let (text, origin) = string(variable: variable, key: key) else { return nil }
        guard let value = Int(text) else { throw SettingError("\(origin) '\(text)' is not a whole number") }
        return (value, origin)
    }
}

/// A setting that is given but wrong, naming where it came from.
public struct SettingError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
