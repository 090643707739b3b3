import ScanAdmin
import ScanServices

ProgramStart.begin()
/// Async, so that `scanadmin serve` can run; a bad config file exits 2 (`ScanAdminCommand.run`).
func runCommand() async { await ScanAdminCommand.run() }
await runCommand()
