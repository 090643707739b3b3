import ScanAgent

ScanAgentCommand.main()
