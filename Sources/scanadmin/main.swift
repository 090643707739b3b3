import ScanAdmin
import ScanMetrics
import ScanServices

ProgramStart.begin(service: "scanadmin", version: BuildInfo.version + "+" + BuildInfo.commit)
/// Async, so that `scanadmin serve` can run; a bad config file exits 2 (`ScanAdminCommand.run`).
func runCommand() async { await ScanAdminCommand.run() }
await runCommand()
