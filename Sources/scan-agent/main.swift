import ScanAgent
import ScanServices

ScanLogging.bootstrap()
await ScanAgentCommand.start()
