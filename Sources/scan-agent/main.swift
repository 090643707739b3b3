import ScanAgent
import ScanServices

ProgramStart.begin()
await ScanAgentCommand.start()
