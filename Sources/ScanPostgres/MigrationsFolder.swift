import Foundation

/// Where the SQL migrations are: the folder the program was given (its --migrations flag, else
/// `SCANTRACK_MIGRATIONS`, resolved by the program), else `./migrations`, then beside the
/// installed binary (`../share/scantrack/migrations`) and `/usr/share/scantrack/migrations`.
public enum MigrationsFolder {
    /// The environment variable programs read for `given`.
    public static let variable = "SCANTRACK_MIGRATIONS"

    public static func candidates(_ given: String?) -> [String] {
        if let given, !given.isEmpty { return [given] }
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent()
        return [
            "migrations", executable.appendingPathComponent("../share/scantrack/migrations").standardized.path,
            "/usr/share/scantrack/migrations",
        ]
    }

    public static func resolve(_ given: String?) -> String? {
        candidates(given).first { path in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
        }
    }

    /// Where the schema comes from: the folder given (it must exist), else a folder found
    /// (`candidates`), else the migrations built into the program — so a program works from any
    /// directory, and a folder still wins for someone writing a new migration.
    public enum Source: Sendable, Equatable {
        case folder(String)
        case embedded

        /// The migrator over this source's migrations.
        public func migrator() throws(PGError) -> Migrator {
            switch self {
            case .folder(let path): return try Migrator(directory: path)
            case .embedded:
                var migrations: [Migration] = []
                for file in EmbeddedMigrations.files {
                    guard let version = Migration.version(ofFile: file.name) else {
                        throw PGError(
                            code: .migrationFailed, function: "read migrations", input: file.name,
                            message: "a migration file is named NNNN_description.sql")
                    }
                    migrations.append(Migration(version: version, name: file.name, sql: file.sql))
                }
                return try Migrator(migrations: migrations)
            }
        }

        /// roles/roles.sql of this source.
        public func rolesSQL() throws(PGError) -> String {
            switch self {
            case .embedded: return EmbeddedMigrations.roles
            case .folder(let path):
                guard let data = FileManager.default.contents(atPath: path + "/roles/roles.sql") else {
                    throw PGError(
                        code: .migrationFailed, function: "read roles", input: path + "/roles/roles.sql",
                        message: "cannot read the file")
                }
                return String(decoding: data, as: UTF8.self)
            }
        }

        public var description: String {
            switch self {
            case .folder(let path): path
            case .embedded: "the migrations built into the program"
            }
        }
    }

    /// The source for `given` (a flag or SCANTRACK_MIGRATIONS): that folder, which must exist;
    /// nil given, a folder found, else the built-in migrations.
    public static func source(_ given: String?) throws(PGError) -> Source {
        if let given, !given.isEmpty {
            guard let folder = resolve(given) else {
                throw PGError(
                    code: .migrationFailed, function: "read migrations", input: given, message: "no such folder")
            }
            return .folder(folder)
        }
        return resolve(nil).map(Source.folder) ?? .embedded
    }
}
