import Foundation
import ScanTestSupport
import ScanTestTiming
import Testing

/// The demo from a clone inside a 0700 directory (as under a home directory), where PostgreSQL's
/// `postgres` user cannot enter: scripts/with-servers.sh and scripts/demo.sh, as `make demo` runs
/// them, with this build's programs (SCANTRACK_BIN) instead of a second build.
@Suite("make demo from a private directory", .timed, .enabled(if: TestEnvironment.postgresEnabled))
struct DemoFromPrivateDirectoryTests {
    @Test(
        "a clone in a 0700 directory runs the whole demo: servers start and stop, the report shows its passes and packs"
    )
    func demoInPrivateClone() throws {
        let git = try #require(ProcessRunner.which("git"))
        let home = NSTemporaryDirectory() + TestEnvironment.uniqueName("home")
        try FileManager.default.createDirectory(
            atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: home) }
        let clone = home + "/scantrack"
        let cloned = try ProcessRunner.run(git, ["clone", "-q", TestEnvironment.repoRoot, clone])
        try #require(cloned.status == 0, "\(cloned.stderr)")
        // The Python environment of the WMS consumer, as make's setup would make it in the clone.
        try? FileManager.default.createDirectory(atPath: clone + "/.cache", withIntermediateDirectories: true)
        try? FileManager.default.createSymbolicLink(
            atPath: clone + "/.cache/venv", withDestinationPath: TestEnvironment.repoRoot + "/.cache/venv")
        let mode = try FileManager.default.attributesOfItem(atPath: home)[.posixPermissions] as? Int
        #expect(mode == 0o700)

        let result = try ProcessRunner.run(
            clone + "/scripts/with-servers.sh", ["demo", clone + "/scripts/demo.sh"],
            environment: [
                "SCANTRACK_BIN": TestEnvironment.productsDirectory, "SCANTRACK_DASHBOARD_LISTEN": "127.0.0.1:0",
                "SCANTRACK_CONFIG": "",
            ])
        let output = result.stdoutText
        #expect(result.status == 0, "\(output.suffix(3000))\n\(result.stderr.suffix(3000))")
        #expect(output.contains("servers: PostgreSQL on 127.0.0.1:"))
        #expect(output.contains("dashboard: http://127.0.0.1:"))
        // Ten products, each seen by both lane cameras (a loaded machine may start the second camera
        // late enough to split some passes: the sightings are the fixed figure).
        #expect(
            output.contains(" item passes (") && output.contains("), 30 sightings, 8 unique codes"),
            "\(output.suffix(2000))")
        #expect(output.contains("3 packs: complete 1, short 1, over 0, unexpected 1"))
        #expect(output.contains("demo done"))
        // PostgreSQL's data lived outside the clone (the start line names it), the servers are
        // stopped, and the private directory is gone: nothing of the run is left in /tmp.
        let started = try #require(output.split(separator: "\n").first { $0.contains("servers: PostgreSQL on") })
        let data = try #require(started.range(of: "(data ")).upperBound
        let pgData = String(started[data...].prefix { $0 != ";" && $0 != ")" })
        #expect(!pgData.hasPrefix(home) && pgData.contains("/scantrack-pg-demo."), "\(started)")
        #expect(output.contains("servers: stopped PostgreSQL"))
        let privateDirectory = URL(fileURLWithPath: pgData).deletingLastPathComponent().path
        #expect(!FileManager.default.fileExists(atPath: privateDirectory), "\(privateDirectory) left behind")
    }
}
