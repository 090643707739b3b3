import ScanAggregator
import ScanServices

ProgramStart.begin()
await ScanAggregatorCommand.start()
