import Foundation
import ScanTestSupport
import ScanTestTiming
import Testing

@testable import ScanPostgres

/// The migrations built into the programs (Sources/ScanPostgres/EmbeddedMigrations.swift, written
/// by scripts/embed-migrations.py) are the files in migrations/, byte for byte: a migration added
/// or changed without running the script fails here.
@Suite("embedded migrations", .timed)
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
        #expect(throws: PGError.self) { try MigrationsFolder.source("/nonexistent/migrations") }
    }

    @Test(
        "nothing given: the built-in migrations, also where ./migrations exists; a folder given is refused when others may write it, a file in it, or it is a link"
    )
    func onlyTrustedFolders() throws {
        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // The tests run in the clone, which has a ./migrations: it is not read unless named.
        #expect(FileManager.default.fileExists(atPath: "migrations"))
        #expect(try MigrationsFolder.source(nil) == .embedded)
        #expect(try MigrationsFolder.source("") == .embedded)

        // Named and closed: used. Writable by others (the folder, a file, roles/), or a link: refused.
        let folder = dir + "/given"
        try FileManager.default.createDirectory(atPath: folder + "/roles", withIntermediateDirectories: true)
        try "SELECT 1;\n".write(toFile: folder + "/0001_x.sql", atomically: true, encoding: .utf8)
        try "SELECT 1;\n".write(toFile: folder + "/roles/roles.sql", atomically: true, encoding: .utf8)
        for path in [folder, folder + "/roles"] { chmod(path, 0o755) }
        for path in [folder + "/0001_x.sql", folder + "/roles/roles.sql"] { chmod(path, 0o644) }
        #expect(try MigrationsFolder.source(folder) == .folder(folder))
        for (path, mode) in [
            (folder, 0o777), (folder, 0o775), (folder + "/0001_x.sql", 0o666), (folder + "/roles", 0o757),
            (folder + "/roles/roles.sql", 0o664),
        ] {
            let before: mode_t = path.hasSuffix(".sql") ? 0o644 : 0o755
            chmod(path, mode_t(mode))
            #expect(throws: PGError.self, "\(path) \(String(mode, radix: 8))") { try MigrationsFolder.source(folder) }
            chmod(path, before)
        }
        try FileManager.default.createSymbolicLink(atPath: dir + "/link", withDestinationPath: folder)
        do {
            _ = try MigrationsFolder.source(dir + "/link")
            Issue.record("a link was accepted")
        } catch {
            #expect("\(error)".contains("symbolic link"), "\(error)")
        }
        #expect(try MigrationsFolder.source(folder) == .folder(folder), "closed again: used")
    }
}
