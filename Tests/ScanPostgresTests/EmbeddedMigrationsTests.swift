import Foundation
import ScanTestSupport
import Testing

@testable import ScanPostgres

/// The migrations built into the programs (Sources/ScanPostgres/EmbeddedMigrations.swift, written
/// by scripts/embed-migrations.py) are the files in migrations/, byte for byte: a migration added
/// or changed without running the script fails here.
@Suite("embedded migrations")
struct EmbeddedMigrationsTests {
    @Test(
        "every migration and roles.sql built into the programs equals its file; run scripts/embed-migrations.py when not"
    )
    func equalToFiles() throws {
        let folder = TestEnvironment.repoRoot + "/migrations"
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".sql") }.sorted()
        #expect(EmbeddedMigrations.files.map(\.name) == files, "run scripts/embed-migrations.py")
        for (name, sql) in EmbeddedMigrations.files {
            let text = try String(contentsOfFile: folder + "/" + name, encoding: .utf8)
            #expect(sql == text, "\(name) differs: run scripts/embed-migrations.py")
        }
        #expect(
            EmbeddedMigrations.roles == (try String(contentsOfFile: folder + "/roles/roles.sql", encoding: .utf8)))
        // The same migrations, the same checksums: a database migrated by either is current for the other.
        let fromFolder = try MigrationsFolder.Source.folder(folder).migrator().migrations
        let builtIn = try MigrationsFolder.Source.embedded.migrator().migrations
        #expect(builtIn == fromFolder)
        #expect(try MigrationsFolder.source(nil) != .embedded || !FileManager.default.fileExists(atPath: "migrations"))
        #expect(throws: PGError.self) { try MigrationsFolder.source("/nonexistent/migrations") }
    }
}
