import Foundation
import ScanPostgres
import ScanTestSupport
import ScanTestTiming
import Testing

/// `scanadmin` as an operator runs it: the built binary, its output and exit codes.
@Suite("scanadmin migrate", .timed)
struct MigrateCommandTests {
    static var scanadmin: String { TestEnvironment.productsDirectory + "/scanadmin" }

    @Test("--help lists the subcommands and exits 0")
    func help() throws {
        let result = try ProcessRunner.run(Self.scanadmin, ["--help"])
        #expect(result.status == 0)
        for command in ["migrate", "rules", "orders", "cameras", "report", "tail"] {
            #expect(result.stdoutText.contains(command))
        }
    }

    @Test("each program writes its shell completion script for bash, zsh and fish, naming its subcommands")
    func completion() throws {
        let programs = [
            "scanadmin": ["report", "rules", "health"], "scan-agent": ["decode", "config", "health"],
            "scan-aggregator": ["run", "health"],
        ]
        for (program, subcommands) in programs {
            for shell in ["bash", "zsh", "fish"] {
                let result = try ProcessRunner.run(
                    TestEnvironment.productsDirectory + "/" + program, ["--generate-completion-script", shell])
                #expect(result.status == 0, "\(program) \(shell): \(result.stderr)")
                for subcommand in subcommands {
                    #expect(result.stdoutText.contains(subcommand), "\(program) \(shell): \(subcommand)")
                }
            }
        }
    }

    @Test("migrate without a database says how to give one, exit 64")
    func noDatabase() throws {
        let result = try ProcessRunner.run(Self.scanadmin, ["migrate"], environment: ["SCANTRACK_PG": ""])
        #expect(result.status == 64)
        #expect(result.stderr.contains("SCANTRACK_PG"))
    }

    @Test("a config file that cannot be read or breaks its format: exit 2 naming the file and the JSON path, no usage")
    func badConfigFile() throws {
        let dir = try TestEnvironment.temporaryDirectory("badconfig")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try #"{"pg": "host=127.0.0.1", "shift": "early=06:00-14:00"}"#.write(
            toFile: dir + "/unknown-key.json", atomically: true, encoding: .utf8)
        try #"{"pg": 5432"#.write(toFile: dir + "/broken.json", atomically: true, encoding: .utf8)
        for (file, named) in [
            ("unknown-key.json", "shift"), ("broken.json", "broken.json"), ("missing.json", "missing.json"),
        ] {
            let result = try ProcessRunner.run(
                Self.scanadmin, ["report", "--shift", "today", "--config", dir + "/" + file],
                environment: ["SCANTRACK_PG": ""])
            #expect(result.status == 2, "\(file): \(result.stderr)")
            #expect(result.stderr.contains(named) && result.stderr.hasPrefix("scanadmin: "), "\(result.stderr)")
            #expect(!result.stderr.lowercased().contains("usage:"), "\(result.stderr)")
        }
        // Through the environment too.
        let viaVariable = try ProcessRunner.run(
            Self.scanadmin, ["migrate"], environment: ["SCANTRACK_PG": "", "SCANTRACK_CONFIG": dir + "/broken.json"])
        #expect(viaVariable.status == 2, "\(viaVariable.stderr)")
    }

    @Test("migrate against an unreachable server fails without printing the password")
    func unreachable() throws {
        let result = try ProcessRunner.run(
            Self.scanadmin,
            [
                "migrate", "--pg", "host=127.0.0.1 port=1 password=hunter2 connect_timeout=2",
                "--migrations", TestEnvironment.repoRoot + "/migrations",
            ])
        #expect(result.status == 1)
        #expect(result.stderr.contains("port=1"))
        #expect(!result.stderr.contains("hunter2"))
    }

    @Test(
        "migrate applies, then reports up to date; --status lists each migration",
        .enabled(if: TestEnvironment.postgresEnabled))
    func migrateTwice() throws {
        let database = try ScratchDatabase(prefix: "st_cli")
        defer { database.drop() }
        let environment = [
            "SCANTRACK_PG": database.dsn,
            "SCANTRACK_MIGRATIONS": TestEnvironment.repoRoot + "/migrations",
        ]
        let first = try ProcessRunner.run(Self.scanadmin, ["migrate", "--progress"], environment: environment)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdoutText.contains("applied 0001_"))
        // --progress: each migration said on stderr as it starts, then how long it took; stdout
        // holds only the result.
        let total = try FileManager.default.contentsOfDirectory(atPath: TestEnvironment.repoRoot + "/migrations")
            .filter { $0.hasSuffix(".sql") }.count
        let said = first.stderr.split(separator: "\n")
        #expect(said.first?.hasPrefix("scanadmin migrate: applying 0001_") == true, "\(first.stderr)")
        #expect(said.first?.hasSuffix("(1 of \(total))") == true, "\(first.stderr)")
        #expect(said.filter { $0.contains(": applied 0") && $0.hasSuffix(" s") }.count == total, "\(first.stderr)")
        #expect(!first.stdoutText.contains("applying"))
        let second = try ProcessRunner.run(Self.scanadmin, ["migrate"], environment: environment)
        #expect(second.status == 0)
        #expect(second.stdoutText.hasPrefix("schema is up to date"))
        let status = try ProcessRunner.run(Self.scanadmin, ["migrate", "--status"], environment: environment)
        #expect(status.status == 0)
        #expect(status.stdoutText.contains("0001_"))
        #expect(!status.stdoutText.contains("pending"))
    }

    @Test(
        "from any directory, with no migrations folder: scanadmin migrate applies the migrations built into it, which the folder then finds current, and the aggregator starts on that schema",
        .enabled(if: TestEnvironment.postgresEnabled && TestEnvironment.natsEnabled))
    func builtInMigrations() throws {
        let database = try ScratchDatabase(prefix: "st_builtin")
        defer { database.drop() }
        let elsewhere = try TestEnvironment.temporaryDirectory("elsewhere")
        defer { try? FileManager.default.removeItem(atPath: elsewhere) }
        let dsn = database.dsn
        /// A program run in `elsewhere`, SCANTRACK_MIGRATIONS unset.
        func run(_ program: String, _ arguments: [String]) throws -> ProcessResult {
            let quoted = ([TestEnvironment.productsDirectory + "/" + program] + arguments).map { "'\($0)'" }
            return try ProcessRunner.run(
                "/usr/bin/env",
                [
                    "-u", "SCANTRACK_MIGRATIONS", "SCANTRACK_PG=" + dsn, "/bin/bash", "-c",
                    "cd '\(elsewhere)' && exec " + quoted.joined(separator: " "),
                ])
        }
        let first = try run("scanadmin", ["migrate"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(
            first.stdoutText.contains("applied 0001_") && first.stdoutText.contains("applied 0016_"),
            "\(first.stdoutText)")
        // The folder's files are the same migrations with the same checksums.
        let status = try ProcessRunner.run(
            Self.scanadmin, ["migrate", "--status", "--migrations", TestEnvironment.repoRoot + "/migrations"],
            environment: ["SCANTRACK_PG": dsn])
        #expect(status.status == 0 && !status.stdoutText.contains("pending"), "\(status.stdoutText)")
        #expect(!status.stdoutText.contains("file changed"), "\(status.stdoutText)")
        // The aggregator checks the schema against what it carries, and runs.
        let nats = try TestEnvironment.requireNATS()
        let aggregator = try ProcessRunner.start(
            "/usr/bin/env",
            [
                "-u", "SCANTRACK_MIGRATIONS", "SCANTRACK_PG=" + dsn, "SCANTRACK_NATS=" + nats, "/bin/bash", "-c",
                "cd '\(elsewhere)' && exec '\(TestEnvironment.productsDirectory)/scan-aggregator' run --prefix \(TestEnvironment.uniqueName("st"))",
            ],
            environment: ProcessInfo.processInfo.environment, log: elsewhere + "/aggregator.log")
        defer { if aggregator.isRunning { aggregator.terminate() } }
        let deadline = Date().addingTimeInterval(30)
        var log = ""
        while Date() < deadline && aggregator.isRunning && !log.contains("ingesting") {
            usleep(100_000)
            log = (try? String(contentsOfFile: elsewhere + "/aggregator.log", encoding: .utf8)) ?? ""
        }
        #expect(log.contains("ingesting"), "\(log)")
        aggregator.terminate()
        aggregator.waitUntilExit()
        #expect(aggregator.terminationStatus == 0, "\(log)")
    }
}
