import Foundation

/// Where the SQL migrations are: flag, `SCANTRACK_MIGRATIONS`, `./migrations`, then beside the
/// installed binary (`../share/scantrack/migrations`) and `/usr/share/scantrack/migrations`.
public enum MigrationsFolder {
    public static func candidates(_ flag: String?) -> [String] {
        if let flag { return [flag] }
        if let fromEnvironment = ProcessInfo.processInfo.environment["SCANTRACK_MIGRATIONS"], !fromEnvironment.isEmpty {
            return [fromEnvironment]
        }
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent()
        return [
            "migrations", executable.appendingPathComponent("../share/scantrack/migrations").standardized.path,
            "/usr/share/scantrack/migrations",
        ]
    }

    public static func resolve(_ flag: String?) -> String? {
        candidates(flag).first { path in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
        }
    }
}
