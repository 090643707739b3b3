import ScanAgent
import ScanMetrics
import ScanServices

ProgramStart.begin(service: "scan-agent", version: BuildInfo.version + "+" + BuildInfo.commit)
await ScanAgentCommand.start()
