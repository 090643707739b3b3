import ArgumentParser
import Foundation
import ScanPostgres

/// `scanadmin migrate [--status]`
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply pending schema migrations, or show where the schema stands.")

    @OptionGroup var connection: ConnectionOptions

    @Option(help: "Folder of NNNN_name.sql files (default: $SCANTRACK_MIGRATIONS, ./migrations, or the installed copy).")
    var migrations: String?

    @Flag(help: "Only list the migrations and whether each is applied.")
    var status = false

    func run() throws {
        let folder = try MigrationsFolder.resolve(migrations)
        do {
            let migrator = try Migrator(directory: folder)
            let database = try PGConnection(dsn: try connection.postgresDSN())
            if status {
                for state in try migrator.status(database) {
                    let when = state.appliedAt ?? "pending"
                    let flag = state.checksumMismatch ? "  (file changed since it was applied)" : ""
                    print("\(state.migration.name)\t\(when)\(flag)")
                }
                return
            }
            let applied = try migrator.migrate(database)
            if applied.isEmpty {
                print("schema is up to date (\(migrator.migrations.count) migrations)")
            } else {
                for migration in applied { print("applied \(migration.name)") }
            }
        } catch let error as PGError {
            printError("scanadmin migrate: \(error)")
            throw ExitCode.failure
        }
    }
}

/// Finds the migrations folder: flag, environment, working directory, then beside the installed binary.
enum MigrationsFolder {
    static func resolve(_ flag: String?) throws -> String {
        if let flag { return flag }
        let environment = ProcessInfo.processInfo.environment
        if let fromEnvironment = environment["SCANTRACK_MIGRATIONS"], !fromEnvironment.isEmpty { return fromEnvironment }
        var candidates = ["migrations"]
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        candidates.append(executable.appendingPathComponent("../share/scantrack/migrations").path)
        candidates.append("/usr/share/scantrack/migrations")
        var isDirectory: ObjCBool = false
        for candidate in candidates where FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory) {
            if isDirectory.boolValue { return candidate }
        }
        throw ValidationError("no migrations folder found (tried \(candidates.joined(separator: ", "))); pass --migrations")
    }
}
