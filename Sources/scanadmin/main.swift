import ScanAdmin

ScanAdminCommand.main()
