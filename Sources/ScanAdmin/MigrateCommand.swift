import ArgumentParser
import Foundation
import ScanPostgres
import ScanServices

/// `scanadmin migrate [--status]`
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply pending schema migrations, or show where the schema stands.")

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var progress: ProgressOptions

    @Option(
        help:
            "Folder of NNNN_name.sql files, writable by no other user (default: $SCANTRACK_MIGRATIONS, else the ones built into scanadmin)."
    )
    var migrations: String?

    @Flag(help: "Only list the migrations and whether each is applied.")
    var status = false

    @Flag(help: "Also apply the program roles (roles/roles.sql in the migrations folder).")
    var roles = false

    @Option(
        name: .customLong("login"),
        help: ArgumentHelp(
            "ROLE=NAME:FILE: make (or update) login NAME in program role ROLE (writer, operator, reporter) with the password in FILE; implies --roles.",
            valueName: "ROLE=NAME:FILE"))
    var logins: [String] = []

    func validate() throws {
        for login in logins where RoleLogin(login) == nil {
            throw ValidationError(
                "--login '\(login)': expected ROLE=NAME:FILE, ROLE one of \(RoleLogin.roles.joined(separator: ", ")), NAME of lower-case letters, digits and '_'"
            )
        }
    }

    func run() throws {
        let given = SettingResolver().string(flag: ("migrations", migrations), variable: MigrationsFolder.variable)?
            .value
        do {
            let source = try MigrationsFolder.source(given)
            let migrator = try source.migrator()
            let database = try connection.connectPostgres()
            if status {
                for state in try migrator.status(database) {
                    let when = state.appliedAt ?? "pending"
                    let flag = state.checksumMismatch ? "  (file changed since it was applied)" : ""
                    print("\(state.migration.name)\t\(when)\(flag)")
                }
                return
            }
            let applied = try migrator.migrate(database, progress: progress.reporter("migrate"))
            if applied.isEmpty {
                print("schema is up to date (\(migrator.migrations.count) migrations)")
            } else {
                for migration in applied { print("applied \(migration.name)") }
            }
            if roles || !logins.isEmpty {
                let made = logins.compactMap(RoleLogin.init)
                try database.applyRoles(sql: try source.rolesSQL(), logins: made)
                print("program roles applied" + made.map { ", login \($0.name) in scantrack_\($0.role)" }.joined())
            }
        } catch let error as PGError {
            printError("scanadmin migrate: \(error)")
            throw ExitCode.failure
        }
    }
}
