import Foundation

/// Where the SQL migrations are: the folder the program was given (its --migrations flag, else
/// `SCANTRACK_MIGRATIONS`, resolved by the program), else the migrations built into the program.
/// Nothing is looked for in the working directory or beside the binary: a `./migrations` planted
/// where an operator runs `scanadmin migrate` would run as the schema owner. A folder given is used
/// only when neither it, its `roles/` nor any file in them may be written by another user (group-
/// or world-writable, or owned by someone other than this user or root).
public enum MigrationsFolder {
    /// The environment variable programs read for `given`.
    public static let variable = "SCANTRACK_MIGRATIONS"

    /// Why `path` is not to be trusted with the schema owner's rights; nil when it may be.
    public static func untrusted(_ path: String) -> String? {
        let me = getuid()
        var paths = [path]
        for folder in [path, path + "/roles"] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            paths += names.filter { $0.hasSuffix(".sql") }.map { folder + "/" + $0 }
            if folder != path && FileManager.default.fileExists(atPath: folder) { paths.append(folder) }
        }
        for item in paths {
            var info = stat()
            guard lstat(item, &info) == 0 else { return "\(item): cannot be read" }
            if info.st_mode & S_IFMT == S_IFLNK { return "\(item) is a symbolic link" }
            if info.st_mode & (S_IWGRP | S_IWOTH) != 0 { return "\(item) may be written by other users" }
            if info.st_uid != me && info.st_uid != 0 { return "\(item) belongs to another user (uid \(info.st_uid))" }
        }
        return nil
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

    /// The source for `given` (a flag or SCANTRACK_MIGRATIONS): that folder, which must exist and
    /// be writable by nobody else; nil given, the built-in migrations.
    public static func source(_ given: String?) throws(PGError) -> Source {
        guard let given, !given.isEmpty else { return .embedded }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: given, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw PGError(code: .migrationFailed, function: "read migrations", input: given, message: "no such folder")
        }
        if let reason = untrusted(given) {
            throw PGError(
                code: .migrationFailed, function: "read migrations", input: given,
                message: "refused: \(reason) (the schema owner runs these files)")
        }
        return .folder(given)
    }
}
