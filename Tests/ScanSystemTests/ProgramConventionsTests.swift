import Foundation
import ScanCore
import ScanTestSupport
import ScanTestTiming
import Testing

/// What every program does alike: `--version` with the commit, and help text that wraps cleanly.
@Suite("program conventions: --version, help text", .timed)
struct ProgramConventionsTests {
    static let programs = ["scan-agent", "scan-aggregator", "scanadmin"]
    /// The tools for tests and demonstrations: no subcommands, but --version and --help alike.
    static let tools = ["scan-synth", "scan-fake-camera"]

    static func path(_ program: String) -> String { TestEnvironment.productsDirectory + "/" + program }

    @Test("--version prints the program, its version and the commit it was built from, the same for all")
    func version() throws {
        var versions = Set<String>()
        for program in Self.programs + Self.tools {
            let result = try ProcessRunner.run(Self.path(program), ["--version"])
            #expect(result.status == 0, "\(program): \(result.stderr)")
            let line = result.stdoutText.trimmingCharacters(in: .newlines)
            let match = try #require(
                line.wholeMatch(of: /(\S+) (\d+\.\d+\.\d+) \(commit ([0-9a-f]{12}(?:-dirty)?|unknown)\)/), "\(line)")
            #expect(String(match.output.1) == program)
            versions.insert("\(match.output.2) \(match.output.3)")
            // Built from a git checkout (as make test builds), the commit is the checkout's: HEAD
            // when the build was made, so at least an ancestor-or-self of HEAD now.
            let commit = String(match.output.3.prefix(12))
            // Under make (which computes SCANTRACK_COMMIT for each run), exactly what it gave.
            if let given = ProcessInfo.processInfo.environment["SCANTRACK_COMMIT"], !given.isEmpty {
                #expect(String(match.output.3) == given, "\(line)")
            }
            if FileManager.default.fileExists(atPath: TestEnvironment.repoRoot + "/.git") {
                let known = try ProcessRunner.run(
                    "/usr/bin/git", ["-C", TestEnvironment.repoRoot, "merge-base", "--is-ancestor", commit, "HEAD"])
                #expect(known.status == 0, "\(line) is not a commit of this checkout: \(known.stderr)")
            }
        }
        #expect(versions.count == 1, "\(versions)")
    }

    @Test(
        "--help prints the usage on standard output and exits 0, in every program (scan-synth and scan-fake-camera exited 2 and 64)"
    )
    func help() throws {
        for program in Self.programs + Self.tools {
            let result = try ProcessRunner.run(Self.path(program), ["--help"])
            #expect(result.status == 0, "\(program): \(result.stderr)")
            #expect(result.stdoutText.lowercased().contains("usage"), "\(program): \(result.stdoutText.prefix(200))")
        }
    }

    @Test("scan-aggregator links none of the agent's modules (the contract ScanEvents depends on ScanCore only)")
    func aggregatorLinksNoAgentModule() throws {
        let swift = try #require(ProcessRunner.which("swift"), "the Swift toolchain on PATH")
        let nm = URL(fileURLWithPath: swift).resolvingSymlinksInPath().deletingLastPathComponent().path + "/llvm-nm"
        /// How many defined symbols of each module (by its mangled name) the program holds.
        func symbols(_ program: String) throws -> [String: Int] {
            let result = try ProcessRunner.run(nm, ["--defined-only", Self.path(program)])
            #expect(result.status == 0, "\(program): \(result.stderr)")
            var counts: [String: Int] = [:]
            for module in ["ScanVision", "ScanAgentConfig", "ScanPipeline", "ScanZXing", "ScanZBar", "ScanEvents"] {
                let mangled = "\(module.utf8.count)\(module)"
                counts[module] = result.stdoutText.split(separator: "\n").count { $0.contains(mangled) }
            }
            return counts
        }
        let aggregator = try symbols("scan-aggregator")
        let agent = try symbols("scan-agent")
        for module in ["ScanVision", "ScanAgentConfig", "ScanPipeline", "ScanZXing", "ScanZBar"] {
            #expect(aggregator[module] == 0, "scan-aggregator holds \(aggregator[module] ?? -1) symbols of \(module)")
            // The same count finds them where they belong, so a zero above is not a blind check.
            #expect((agent[module] ?? 0) > 0, "scan-agent holds no symbol of \(module)")
        }
        #expect((aggregator["ScanEvents"] ?? 0) > 0, "scan-aggregator reads the contract")
    }

    @Test("warnings are errors when make test builds (SCANTRACK_WARNINGS_AS_ERRORS=1), not in a user's swift build")
    func warningsAsErrorsOnlyUnderTest() throws {
        let swift = try #require(ProcessRunner.which("swift"), "the Swift toolchain on PATH")
        let scratch = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        func settings(_ value: String) throws -> String {
            // A scratch path of its own: the tests' build folder stays locked by `swift test`.
            let dump = try ProcessRunner.run(
                swift,
                ["package", "--package-path", TestEnvironment.repoRoot, "--scratch-path", scratch, "dump-package"],
                environment: ["SCANTRACK_WARNINGS_AS_ERRORS": value])
            #expect(dump.status == 0, "\(dump.stderr)")
            return dump.stdoutText
        }
        #expect(try settings("1").contains("treatAllWarnings"))
        #expect(try !settings("0").contains("treatAllWarnings"))
        let makefile = try String(contentsOfFile: TestEnvironment.repoRoot + "/Makefile", encoding: .utf8)
        #expect(makefile.contains("\ntest: export SCANTRACK_WARNINGS_AS_ERRORS := 1\n"))
        let ci = try String(contentsOfFile: TestEnvironment.repoRoot + "/.ci/run", encoding: .utf8)
        #expect(ci.contains("make test"))
    }

    @Test("each program writes a completion script for bash, zsh and fish that names its subcommands")
    func completion() throws {
        for program in Self.programs {
            let subcommands = try Self.commands(of: program).filter { $0.count == 1 }.map { $0[0] }
            #expect(subcommands.count >= 2, "\(program)")
            for shell in ["bash", "zsh", "fish"] {
                let script = try ProcessRunner.run(Self.path(program), ["--generate-completion-script", shell])
                #expect(script.status == 0, "\(program) \(shell): \(script.stderr)")
                for subcommand in subcommands {
                    #expect(script.stdoutText.contains(subcommand), "\(program) \(shell): \(subcommand)")
                }
            }
        }
    }

    @Test("health shows what answers on the address escaped: a peer's control characters never reach the terminal")
    func healthEscapes() throws {
        let python = try #require(ProcessRunner.which("python3"))
        let dir = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A peer that answers three requests with a body that would clear the screen and retitle it.
        let server = Process()
        server.executableURL = URL(fileURLWithPath: python)
        server.arguments = [
            "-c",
            """
            import socket, sys
            s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(3)
            open(sys.argv[1], "w").write(str(s.getsockname()[1]))
            for _ in range(3):
                c, _ = s.accept(); c.recv(4096)
                c.sendall(b"HTTP/1.0 503 Service Unavailable\\r\\n\\r\\nnats \\x1b[2J\\x1b]0;owned\\x07failing\\n")
                c.close()
            """,
            dir + "/port",
        ]
        try server.run()
        defer { server.terminate() }
        func port() -> String { (try? String(contentsOfFile: dir + "/port", encoding: .utf8)) ?? "" }
        #expect(AgentRunHarness.eventually(seconds: 120) { Int(port()) != nil })
        let port = port()
        for (program, arguments) in [
            ("scan-agent", ["health", "--listen", "127.0.0.1:\(port)"]),
            ("scan-aggregator", ["health", "--listen", "127.0.0.1:\(port)"]),
            ("scanadmin", ["health", "--listen", "127.0.0.1:\(port)"]),
        ] {
            let result = try ProcessRunner.run(Self.path(program), arguments)
            #expect(result.status == 1, "\(program): \(result.stderr)")
            #expect(result.stdoutText == "nats \\x1B[2J\\x1B]0;owned\\x07failing\n", "\(program): \(result.stdoutText)")
            #expect(!result.stdout.contains(0x1B))
        }
    }

    /// Every command path of a program, from ArgumentParser's description of its commands.
    static func commands(of program: String) throws -> [[String]] {
        let dump = try ProcessRunner.run(Self.path(program), ["--experimental-dump-help"])
        let root = try JSONValue.parse(dump.stdout)["command"]
        func walk(_ command: JSONValue?, _ path: [String]) -> [[String]] {
            guard case .array(let children)? = command?["subcommands"] else { return [path] }
            return [path]
                + children.flatMap { child -> [[String]] in
                    guard let name = child["commandName"]?.stringValue, name != "help" else { return [] }
                    return walk(child, path + [name])
                }
        }
        return walk(root, [])
    }

    @Test("every command's overview and discussion wrap to the terminal: no line breaks where a word would fit")
    func helpWraps() throws {
        let width = 80
        var seen = 0
        for program in Self.programs {
            let commands = try Self.commands(of: program)
            #expect(commands.count > 1, "\(program)")
            for command in commands {
                let result = try ProcessRunner.run(
                    Self.path(program), command + ["--help"], environment: ["COLUMNS": String(width)])
                #expect(result.status == 0, "\(program) \(command): \(result.stderr)")
                // The prose above USAGE: a line followed by another of its paragraph (same indent)
                // whose first word would have fitted is a hard line break in the source.
                let prose = result.stdoutText.components(separatedBy: "\nUSAGE:")[0].split(
                    separator: "\n", omittingEmptySubsequences: false)
                for (line, next) in zip(prose, prose.dropFirst()) where !line.isEmpty && !next.isEmpty {
                    #expect(line.count <= width, "\(program) \(command): \(line)")
                    let indent = { (text: Substring) in text.prefix { $0 == " " }.count }
                    guard indent(line) == indent(next) else { continue }
                    let word = next.drop { $0 == " " }.prefix { $0 != " " }
                    #expect(
                        line.count + 1 + word.count >= width,
                        "\(program) \(command.joined(separator: " ")): a line ends early:\n\(line)\n\(next)")
                }
                seen += 1
            }
        }
        #expect(seen >= 40)
    }
}
