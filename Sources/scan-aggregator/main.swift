import ScanAggregator
import ScanMetrics
import ScanServices

ProgramStart.begin(service: "scan-aggregator", version: BuildInfo.version + "+" + BuildInfo.commit)
await ScanAggregatorCommand.start()
