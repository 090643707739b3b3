import ScanAggregator
import ScanServices

ScanLogging.bootstrap()
await ScanAggregatorCommand.start()
