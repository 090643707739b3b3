#!/usr/bin/env bash
# make lint: the pure modules stay pure. ScanCore and the modules split from it (ScanMedia, ScanVision,
# ScanRules, ScanAgentConfig, ScanEvents, ScanPipeline, ScanFuzz), ScanReconciliation and ScanReports
# do no I/O and read no clock: no C module or system library, and none of Foundation's files, processes,
# environment, network, threads, locks or wall clock. Foundation itself is allowed only for its math functions,
# the calendar and time zones (shift and rule windows in a site's time zone).
# The adapters and the runtimes read no environment of their own: a program resolves its settings
# (flag, environment, config file) and passes what each needs as parameters.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
pure=(Sources/ScanCore Sources/ScanMedia Sources/ScanVision Sources/ScanRules Sources/ScanAgentConfig
  Sources/ScanEvents Sources/ScanPipeline Sources/ScanFuzz Sources/ScanReconciliation Sources/ScanReports)
allowed_imports='import (ScanCore|ScanMedia|ScanVision|ScanRules|ScanAgentConfig|ScanEvents|ScanPipeline|ScanReconciliation|Foundation|Synchronization)$'
forbidden='\b(FileManager|FileHandle|ProcessInfo|Process|Pipe|URLSession|URLRequest|InputStream|OutputStream|Bundle|Thread|DispatchQueue|DispatchSemaphore|NSCondition|NSLock|OperationQueue|RunLoop|Timer|getenv|setenv|fopen|popen|usleep|nanosleep|ContinuousClock|SuspendingClock)\b|Date\(\)|Date\.now|contentsOf(File|URL):|Data\(contentsOf|\.write\(to: *[^& ]'
status=0
while IFS= read -r line; do
  echo "check-pure: $line: a pure module imports only pure modules, Foundation (math, calendar, time zones) or Synchronization" >&2
  status=1
done < <(grep -rnE '^(@testable )?import ' "${pure[@]}" | grep -vE ":[0-9]+:$allowed_imports" || true)
while IFS= read -r line; do
  echo "check-pure: $line: no I/O, threads or clocks in a pure module (take it as a parameter)" >&2
  status=1
done < <(grep -rnE "$forbidden" "${pure[@]}" | grep -vE ':[0-9]+:\s*///?' || true)
configured=(Sources/ScanNATS Sources/ScanPostgres Sources/ScanZBar Sources/ScanZXing Sources/ScanV4L2
  Sources/ScanGenICam Sources/ScanRTSP Sources/ScanPNG Sources/ScanJPEG Sources/ScanMetrics
  Sources/ScanAgentRuntime Sources/ScanAggregatorRuntime)
while IFS= read -r line; do
  echo "check-pure: $line: an adapter or runtime reads no environment (the program resolves it and passes it)" >&2
  status=1
done < <(grep -rnE 'ProcessInfo\.processInfo\.environment|\b(getenv|setenv|environ)\b' "${configured[@]}" \
  | grep -vE ':[0-9]+:\s*///?' || true)
# A C module is its adapter's business: imported `internal`, so none of its types can appear in
# the adapter's public API (the compiler refuses it), and no other module sees it through the adapter.
while IFS= read -r line; do
  echo "check-pure: $line: import a C module as 'internal import', in its adapter only" >&2
  status=1
done < <(grep -rnE '^(@_exported |public |package )?import C[A-Z][A-Za-z]*$' Sources Tests || true)
if [ "$status" -eq 0 ]; then
  echo "check-pure: ${pure[*]} do no I/O; adapters and runtimes read no environment; C modules imported internal"
fi
exit "$status"
