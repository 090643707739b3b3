import Foundation
import ScanCore
import ScanNATS
import ScanPostgres
import ScanTestSupport
import ScanTestTiming
import Testing

/// Each program (agent, aggregator, scanadmin) logs in to a nats-server of the test's own with
/// each method: user and password or a token in the URL, an NKey seed file, a `.creds` file of an
/// operator setup, and mutual TLS; the agent from its config file, the others from the
/// environment. Events go the whole way: agent → JetStream → aggregator → PostgreSQL, and
/// `scanadmin tail` sees them.
@Suite("NATS login methods for every program", .timed, .enabled(if: TestEnvironment.postgresEnabled))
struct LoginMethodsTests {
    typealias H = AgentRunHarness

    struct Method: CustomStringConvertible {
        var description: String
        var serverArguments: [String]
        var url: (String) -> String
        /// What the aggregator and scanadmin read.
        var environment: [String: String] = [:]
        /// What the agent's config adds to its `nats` object.
        var agentNATS: String = ""
        /// What must appear in no log line or error of the run.
        var secrets: [String] = []
    }

    static func methods(in folder: String) throws -> [Method] {
        let nkey = try NATSAuthFixtures.keyPair(.user, in: folder, name: "nkey-user")
        try NATSAuthFixtures.nkeyServerConfig([nkey]).write(
            toFile: folder + "/nkey.conf", atomically: true, encoding: .utf8)
        let setup = try NATSAuthFixtures.operatorSetup(in: folder)
        try setup.serverConfig.write(toFile: folder + "/operator.conf", atomically: true, encoding: .utf8)
        let certificates = try TestCertificates(in: folder + "/tls")
        try "f1le-pa55word\n".write(toFile: folder + "/nats-password", atomically: true, encoding: .utf8)
        try "f1le-t0k3n\n".write(toFile: folder + "/nats-token", atomically: true, encoding: .utf8)
        return [
            Method(
                description: "user and password", serverArguments: ["--user", "cam", "--pass", "pa55"],
                url: { "nats://cam:pa55@127.0.0.1:\($0)" }, secrets: ["pa55"]),
            Method(
                description: "token", serverArguments: ["--auth", "t0k3n"], url: { "nats://t0k3n@127.0.0.1:\($0)" },
                secrets: ["t0k3n"]),
            Method(
                description: "user and a password file (no secret in the URL or argv)",
                serverArguments: ["--user", "cam", "--pass", "f1le-pa55word"], url: { "nats://127.0.0.1:\($0)" },
                environment: ["SCANTRACK_NATS_USER": "cam", "SCANTRACK_NATS_PASSWORD_FILE": folder + "/nats-password"],
                agentNATS: #", "user": "cam", "passwordFile": "\#(folder)/nats-password""#, secrets: ["f1le-pa55word"]),
            Method(
                description: "a token file", serverArguments: ["--auth", "f1le-t0k3n"],
                url: { "nats://127.0.0.1:\($0)" },
                environment: ["SCANTRACK_NATS_TOKEN_FILE": folder + "/nats-token"],
                agentNATS: #", "tokenFile": "\#(folder)/nats-token""#, secrets: ["f1le-t0k3n"]),
            Method(
                description: "NKey", serverArguments: ["-c", folder + "/nkey.conf"],
                url: { "nats://127.0.0.1:\($0)" }, environment: ["SCANTRACK_NATS_NKEY": nkey.seedFile],
                agentNATS: #", "nkeySeedFile": "\#(nkey.seedFile)""#),
            Method(
                description: ".creds", serverArguments: ["-c", folder + "/operator.conf"],
                url: { "nats://127.0.0.1:\($0)" }, environment: ["SCANTRACK_NATS_CREDS": setup.credsFile],
                agentNATS: #", "credsFile": "\#(setup.credsFile)""#),
            Method(
                description: "mutual TLS", serverArguments: certificates.natsServerArguments,
                url: { "tls://127.0.0.1:\($0)" },
                environment: [
                    "SCANTRACK_NATS_CA": certificates.ca, "SCANTRACK_NATS_CERT": certificates.clientCert,
                    "SCANTRACK_NATS_KEY": certificates.clientKey,
                ],
                agentNATS:
                    #", "tls": {"ca": "\#(certificates.ca)", "cert": "\#(certificates.clientCert)", "key": "\#(certificates.clientKey)"}"#
            ),
        ]
    }

    @Test("agent, aggregator and scanadmin each log in with user/password, token, NKey, .creds and mutual TLS")
    func everyProgramEveryMethod() throws {
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let clip = try H.flowClip(frames: 60, seed: 21)
        let expected = try H.offline(clip).sightings.count
        #expect(expected > 0)
        for method in try Self.methods(in: dir) {
            let folder = dir + "/" + TestEnvironment.uniqueName("m")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let server = try NATSServerProcess(method.serverArguments + ["-js", "-sd", folder + "/js"])
            defer { server.stop() }
            let url = method.url(server.port)
            let database = try MigratedDatabase(prefix: "st_login")
            defer { database.drop() }
            let environment = ProcessInfo.processInfo.environment.merging(
                [
                    "SCANTRACK_NATS": url, "SCANTRACK_PG": database.dsn,
                    "SCANTRACK_MIGRATIONS": TestEnvironment.repoRoot + "/migrations",
                ].merging(method.environment) { _, new in new }
            ) { _, new in new }
            let aggregator = try ProcessRunner.start(
                TestEnvironment.productsDirectory + "/scan-aggregator", ["run", "--batch", "10"],
                environment: environment, log: folder + "/aggregator.log")
            let tail = try ProcessRunner.start(
                TestEnvironment.productsDirectory + "/scanadmin",
                ["tail", "--count", "1", "--seconds", "60", "--format", "json", "--type", "sighting"],
                environment: environment, log: folder + "/tail.log", stdoutFile: folder + "/tail.out")
            // The first sighting is published after tail has subscribed (it says so once the server has its subscription).
            #expect(
                H.eventually(seconds: 60) {
                    ((try? String(contentsOfFile: folder + "/tail.log", encoding: .utf8)) ?? "").contains("watching")
                }, "\(method): tail subscribed")
            let config = try H.config(
                in: folder, source: H.clipSource(clip, realtime: false), natsURL: url, prefix: "scantrack",
                natsExtra: method.agentNATS)
            let agent = try H.start(config: config, log: folder + "/agent.log")
            #expect(H.waitForExit(agent), "\(method)")
            #expect(
                agent.terminationStatus == 0,
                "\(method): \((try? String(contentsOfFile: folder + "/agent.log", encoding: .utf8)) ?? "")")
            // Generous: under the whole suite's load on two cores storing took over 30 s once.
            let stored = try H.eventually(seconds: 120) {
                Int(try database.connection.query("SELECT count(*) FROM sightings").rows.first?[0] ?? "0") == expected
            }
            #expect(
                stored,
                "\(method): \((try? String(contentsOfFile: folder + "/aggregator.log", encoding: .utf8)) ?? "")")
            #expect(H.waitForExit(tail, seconds: 120), "\(method)")
            let seen = (try? String(contentsOfFile: folder + "/tail.out", encoding: .utf8)) ?? ""
            #expect(
                tail.terminationStatus == 0 && seen.contains("\"sighting\""),
                "\(method): scanadmin tail saw \(seen) \((try? String(contentsOfFile: folder + "/tail.log", encoding: .utf8)) ?? "")"
            )
            aggregator.terminate()
            #expect(H.waitForExit(aggregator, seconds: 120))
            #expect(aggregator.terminationStatus == 0, "\(method)")
            // No log line or error of any program holds the secret.
            for log in ["agent.log", "aggregator.log", "tail.log", "tail.out"] {
                let text = (try? String(contentsOfFile: folder + "/" + log, encoding: .utf8)) ?? ""
                for secret in method.secrets { #expect(!text.contains(secret), "\(method.description): \(log)") }
            }
        }
    }
}

/// Each program with its own PostgreSQL role (migrations/roles/roles.sql), logged in with a SCRAM password
/// from a file over TLS with `sslmode=verify-full`, as docs/security.md tells operators to run them.
@Suite("PostgreSQL roles for every program", .timed, .enabled(if: TestEnvironment.postgresEnabled))
struct ProgramRolesTests {
    typealias H = AgentRunHarness

    @Test(
        "the aggregator stores as the writer, scanadmin sets rules as the operator and reports as the reporter, which may not set rules"
    )
    func eachProgramItsRole() throws {
        let natsURL = try TestEnvironment.requireNATS()
        let database = try MigratedDatabase(prefix: "st_programroles")
        let logins = try RoleLogins(database)
        let dir = try ReplayHarness.temporaryDirectory()
        defer {
            logins.drop()
            database.drop()
            try? FileManager.default.removeItem(atPath: dir)
        }
        var environments: [String: [String: String]] = [:]
        for login in RoleLogins.roles.keys {
            environments[login] = ProcessInfo.processInfo.environment.merging([
                "SCANTRACK_PG": try logins.dsn(login), "SCANTRACK_PG_PASSWORD_FILE": logins.passwordFile(login),
                "SCANTRACK_NATS": natsURL, "SCANTRACK_MIGRATIONS": TestEnvironment.repoRoot + "/migrations",
            ]) { _, new in new }
        }
        let prefix = TestEnvironment.uniqueName("st")
        let jetStream = try NATSConnection(url: natsURL).jetStream()
        let subjects = ContractSubjects(prefix: prefix)
        defer {
            for stream in [subjects.agentStream, subjects.resultsStream, subjects.deadLetterStream] {
                try? jetStream.deleteStream(stream)
            }
        }
        let aggregator = try ProcessRunner.start(
            TestEnvironment.productsDirectory + "/scan-aggregator", ["run", "--prefix", prefix, "--batch", "10"],
            environment: environments["writer"] ?? [:], log: dir + "/aggregator.log")
        let clip = try H.flowClip(frames: 60, seed: 23)
        let expected = try H.offline(clip).sightings.count
        let config = try H.config(
            in: dir, source: H.clipSource(clip, realtime: false), natsURL: natsURL, prefix: prefix)
        let agent = try H.start(config: config, log: dir + "/agent.log")
        #expect(H.waitForExit(agent) && agent.terminationStatus == 0)
        #expect(
            try H.eventually(seconds: 120) {
                Int(try database.connection.query("SELECT count(*) FROM sightings").rows.first?[0] ?? "0") == expected
            }, "\((try? String(contentsOfFile: dir + "/aggregator.log", encoding: .utf8)) ?? "")")
        aggregator.terminate()
        #expect(H.waitForExit(aggregator, seconds: 120) && aggregator.terminationStatus == 0)

        let scanadmin = TestEnvironment.productsDirectory + "/scanadmin"
        let rules = TestEnvironment.repoRoot + "/docs/examples/weekday-weekend.json"
        let asOperator = try ProcessRunner.run(
            scanadmin, ["rules", "add", rules, "--prefix", prefix], environment: environments["operator"])
        #expect(asOperator.status == 0, "\(asOperator.stderr)")
        let asReporter = try ProcessRunner.run(
            scanadmin, ["rules", "add", rules, "--prefix", prefix], environment: environments["reporter"])
        #expect(asReporter.status != 0)
        #expect(asReporter.stderr.contains("permission denied"), "\(asReporter.stderr)")
        let report = try ProcessRunner.run(
            scanadmin, ["report", "--from", "2000-01-01", "--to", "2100-01-01", "--format", "json"],
            environment: environments["reporter"])
        #expect(report.status == 0, "\(report.stderr)")
        let figures = try JSONValue.parse(report.stdout)
        guard case .array(let shifts) = figures["shifts"] else {
            Issue.record("no shifts in the report: \(report.stdoutText)")
            return
        }
        #expect(shifts.first?["sightings"]?.intValue == expected, "\(report.stdoutText)")

        // The password file by flag (--pg-password-file) instead of the environment; the flag is
        // taken over the variable.
        let period = ["report", "--from", "2000-01-01", "--to", "2100-01-01", "--format", "json"]
        var withoutVariable = environments["reporter"] ?? [:]
        withoutVariable["SCANTRACK_PG_PASSWORD_FILE"] = nil
        let byFlag = try ProcessRunner.run(
            scanadmin, period + ["--pg-password-file", logins.passwordFile("reporter")], environment: withoutVariable)
        #expect(byFlag.status == 0, "\(byFlag.stderr)")
        let missing = dir + "/no-such-password"
        let overVariable = try ProcessRunner.run(
            scanadmin, period + ["--pg-password-file", missing], environment: environments["reporter"])
        #expect(overVariable.status != 0)
        #expect(overVariable.stderr.contains(missing), "\(overVariable.stderr)")
    }
}

/// A program that used TLS ends with exit status 0, every time. `exit` ran OpenSSL's exit handler,
/// which frees its locks; a cnats thread still on the TLS socket then crashed the program after its
/// work was done, one run in thirty to a hundred. Each program now sets OpenSSL up without that
/// handler (ProgramStart, COpenSSLExit). The aggregator's and scanadmin's exits over mutual TLS
/// are checked by `LoginMethodsTests`.
@Suite("Exit after TLS", .timed, .enabled(if: TestEnvironment.natsEnabled))
struct ExitAfterTLSTests {
    typealias H = AgentRunHarness

    @Test("a short agent run over mutual TLS exits 0 eighty times in a row, each after reading the whole clip")
    func agentExitsCleanly() async throws {
        let dir = try ReplayHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let certificates = try TestCertificates(in: dir + "/tls")
        let server = try NATSServerProcess(certificates.natsServerArguments + ["-js", "-sd", dir + "/js"])
        defer { server.stop() }
        let clip = try H.flowClip(frames: 8, seed: 5)
        let config = try H.config(
            in: dir, source: H.clipSource(clip, realtime: false), natsURL: "tls://127.0.0.1:\(server.port)",
            prefix: "scantrack",
            natsExtra:
                #", "tls": {"ca": "\#(certificates.ca)", "cert": "\#(certificates.clientCert)", "key": "\#(certificates.clientKey)"}"#
        )
        var failures: [String] = []
        for run in 1...80 {
            // A spool of its own each time: the clip's checkpoint would otherwise skip it.
            try? FileManager.default.removeItem(atPath: dir + "/spool-cam-01")
            let log = dir + "/agent-\(run).log"
            let agent = try H.start(config: config, log: log)
            let exited = await Polling.until(seconds: 120) { !agent.isRunning }
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if !exited || agent.terminationStatus != 0 || !text.contains("frames=8 ") {
                failures.append("run \(run): status \(exited ? String(agent.terminationStatus) : "running")\n\(text)")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) of 80 runs: \(failures.first ?? "")")
    }
}
