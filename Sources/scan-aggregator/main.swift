import ScanAggregator

ScanAggregatorCommand.main()
