import Foundation
import ScanTestSupport
import ScanTestTiming
import Testing

/// The shell blocks the README and the guides mark `<!-- runnable -->` run as written: from the
/// clone's root, with the debug programs on PATH (as `make build` leaves them, and as the packages
/// put them in /usr/bin) and the test servers in SCANTRACK_NATS/SCANTRACK_PG.
@Suite("runnable documentation", .timed, .serialized, .enabled(if: TestEnvironment.postgresEnabled))
struct RunnableDocsTests {
    static let documents = ["README.md", "docs/walkthrough.md", "docs/operators-guide.md"]

    /// Each marked block of a Markdown text, with the line its code starts on.
    static func runnableBlocks(_ text: String) -> [(line: Int, code: String)] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var blocks: [(Int, String)] = []
        var index = 0
        while index < lines.count {
            defer { index += 1 }
            guard lines[index].trimmingCharacters(in: .whitespaces) == "<!-- runnable -->",
                index + 1 < lines.count, lines[index + 1].hasPrefix("```sh")
            else { continue }
            var code: [String] = []
            var end = index + 2
            while end < lines.count && !lines[end].hasPrefix("```") {
                code.append(lines[end])
                end += 1
            }
            blocks.append((index + 3, code.joined(separator: "\n")))
            index = end
        }
        return blocks
    }

    @Test("the extraction finds a marked block and only that one")
    func extraction() {
        let text = "intro\n<!-- runnable -->\n```sh\necho one\necho two\n```\n```sh\necho not marked\n```\n"
        let blocks = Self.runnableBlocks(text)
        #expect(blocks.count == 1 && blocks.first?.code == "echo one\necho two" && blocks.first?.line == 4)
    }

    @Test("every shell block marked runnable in the README and the guides exits 0 as written")
    func blocksRun() throws {
        // An empty database of the blocks' own: the guide's block migrates it.
        let scratch = try ScratchDatabase(prefix: "st_docs")
        defer { scratch.drop() }
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = TestEnvironment.productsDirectory + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["SCANTRACK_PG"] = scratch.dsn
        var total = 0
        for document in Self.documents {
            let text = try String(contentsOfFile: TestEnvironment.repoRoot + "/" + document, encoding: .utf8)
            for (line, code) in Self.runnableBlocks(text) {
                total += 1
                let script = "set -euo pipefail\ncd \"$1\"\n" + code
                let result = try ProcessRunner.run(
                    "/bin/bash", ["-c", script, "doc", TestEnvironment.repoRoot], environment: environment)
                #expect(
                    result.status == 0,
                    "\(document):\(line): exit \(result.status)\n\(result.stdoutText.suffix(1_500))\n\(result.stderr.suffix(1_500))"
                )
            }
        }
        #expect(total >= 6, "\(total) runnable blocks")
    }
}
