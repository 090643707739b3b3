import ScanAdmin
import ScanServices

ScanLogging.bootstrap()
ScanAdminCommand.main()
