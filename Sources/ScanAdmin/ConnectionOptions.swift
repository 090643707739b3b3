import ArgumentParser
import Foundation
import ScanCore
import ScanNATS
import ScanPostgres
import ScanServices

/// Server settings shared by every subcommand: flag, then environment, then a config file
/// (`--config`, else `$SCANTRACK_CONFIG`, else `~/.config/scantrack/scanadmin.json`, if it
/// exists): `{"pg": "host=… dbname=…", "nats": "nats://…", "shifts": "early=06:00-14:00,…"}`.
struct ConnectionOptions: ParsableArguments {
    @Option(
        name: .customLong("pg"),
        help: "libpq connection string (default: $SCANTRACK_PG, the config file, then libpq's PG* variables).")
    var postgres: String?

    @Option(
        name: .customLong("pg-password-file"),
        help: "A file whose first line is the PostgreSQL password (default: $SCANTRACK_PG_PASSWORD_FILE).")
    var postgresPasswordFileFlag: String?

    @Option(
        name: .customLong("nats"),
        help: "NATS URL (default: $SCANTRACK_NATS, $NATS_URL, the config file, else nats://127.0.0.1:4222).")
    var nats: String?

    @Option(
        name: .customLong("config"),
        help: "scanadmin config file (default: $SCANTRACK_CONFIG or ~/.config/scantrack/scanadmin.json).")
    var configFile: String?

    static let keys = ["pg", "nats", "shifts"]

    /// Copies of the rules bucket when scanadmin creates it in a JetStream cluster
    /// (`$SCANTRACK_NATS_REPLICAS`, 1 to 5; else 1).
    static var streamReplicas: Int {
        let value = (try? SettingResolver().int(variable: "SCANTRACK_NATS_REPLICAS"))??.value ?? 1
        return min(max(value, 1), 5)
    }

    /// The config file's settings; a file that was asked for but cannot be read or parsed is an error.
    func fileSettings() throws -> [String: String] {
        let environment = ProcessInfo.processInfo.environment
        let explicit = configFile ?? environment["SCANTRACK_CONFIG"].flatMap { $0.isEmpty ? nil : $0 }
        let path = explicit ?? (environment["HOME"].map { $0 + "/.config/scantrack/scanadmin.json" } ?? "")
        guard let data = FileManager.default.contents(atPath: path) else {
            if let explicit { throw ConfigFileError(description: "cannot read the config file \(explicit)") }
            return [:]
        }
        let document: JSONValue
        do {
            document = try ConfigReader.document(Array(data), file: path)
        } catch {
            throw ConfigFileError(description: "\(error)")
        }
        var reader = ConfigReader()
        let members = reader.object(document, at: "$", allowed: Self.keys) ?? [:]
        var settings: [String: String] = [:]
        for key in Self.keys { if let value = reader.string(members[key], at: key) { settings[key] = value } }
        if !reader.issues.isEmpty {
            throw ConfigFileError(description: ConfigErrors(file: path, issues: reader.issues).description)
        }
        return settings
    }

    func postgresDSN() throws -> String {
        // The config file is read only when neither the flag nor the environment gives the value.
        var resolver = SettingResolver()
        if let dsn = resolver.string(flag: ("pg", postgres), variable: "SCANTRACK_PG") { return dsn.value }
        resolver.file = try fileSettings()
        guard let dsn = resolver.postgres(flag: ("pg", nil), key: "pg") else {
            throw ValidationError(
                "no PostgreSQL connection: pass --pg, set SCANTRACK_PG, put \"pg\" in the config file, or set libpq's PGHOST, PGSERVICE, …"
            )
        }
        return dsn.value
    }

    /// The password file for PostgreSQL: flag, then environment (nil: the DSN's or libpq's own).
    var postgresPasswordFile: String? {
        SettingResolver().string(
            flag: ("pg-password-file", postgresPasswordFileFlag), variable: PGConnection.passwordFileVariable)?.value
    }

    /// A connection to PostgreSQL with the resolved DSN and password file.
    func connectPostgres() throws -> PGConnection {
        try PGConnection(dsn: try postgresDSN(), passwordFile: postgresPasswordFile)
    }

    var natsURL: String {
        var resolver = SettingResolver()
        if let url = resolver.nats(flag: ("nats", nats)) { return url.value }
        resolver.file = (try? fileSettings()) ?? [:]
        return resolver.string(key: "nats")?.value ?? "nats://127.0.0.1:4222"
    }

    /// A connection to NATS at `natsURL`, with the credentials and TLS of the SCANTRACK_NATS_*
    /// environment.
    func connectNATS() throws(NATSError) -> NATSConnection {
        try NATSConnection(
            url: natsURL,
            options: NATSConnection.Options(security: .fromEnvironment(ProcessInfo.processInfo.environment)))
    }
}

/// A scanadmin config file that cannot be read or breaks its format: exit 2 with the problem
/// (the file, and the JSON path), not the usage (`ScanAdminCommand.run`).
struct ConfigFileError: Error, CustomStringConvertible {
    var description: String
}

/// One message on stderr; values in it that came from a label, a camera or a file have their
/// control characters shown escaped.
func printError(_ message: String) { ScanLogging.writeError(message) }

/// `--progress/--no-progress` for long database work (migrations, retention): a line on stderr as
/// each step starts, by default when stderr is a terminal; stdout keeps only the result.
struct ProgressOptions: ParsableArguments {
    @Flag(inversion: .prefixedNo, help: "Say each step on stderr as it starts (default: when stderr is a terminal).")
    var progress: Bool?

    /// What to call with each step (nil: say nothing). `command`: the line's prefix.
    func reporter(_ command: String) -> ((String) -> Void)? {
        guard progress ?? (isatty(STDERR_FILENO) == 1) else { return nil }
        return { printError("scanadmin \(command): \($0)") }
    }
}

/// Flags that become subject tokens (`--site`, `--camera`) and the dotted `--prefix`, checked in
/// `validate()` so a bad one is a usage error naming the flag.
func checkSubjectFlags(_ flags: [(name: String, value: String?)], prefix: String) throws {
    for (name, value) in flags {
        if let value, !SubjectToken.isValid(value) {
            throw ValidationError(
                "\(name) '\(TerminalText.escaped(value))' is not a subject token: letters, digits, '-' and '_', 1 to \(SubjectToken.maxLength)"
            )
        }
    }
    if !SubjectToken.isValidSubject(prefix) {
        throw ValidationError(SubjectTokenError(field: "--prefix", value: prefix, dotted: true).description)
    }
}
