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
}
