import ScanAggregator

bootstrapLogging()
ScanAggregatorCommand.main()
