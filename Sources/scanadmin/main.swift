import ScanAdmin
import ScanServices

ScanLogging.bootstrap()
/// In an async function the async `main` (which can run `scanadmin serve`) is the one chosen.
func runCommand() async { await ScanAdminCommand.main() }
await runCommand()
