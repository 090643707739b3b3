import ScanTestSupport
import Testing

@Suite("scan-agent command line")
struct AgentCommandTests {
    static var agent: String { TestEnvironment.productsDirectory + "/scan-agent" }

    @Test("--help names the commands")
    func help() throws {
        let result = try ProcessRunner.run(Self.agent, ["--help"])
        #expect(result.status == 0)
        #expect(result.stdoutText.contains("run"))
    }
}
