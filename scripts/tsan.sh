#!/usr/bin/env bash
# make tsan: the unit tests under ThreadSanitizer. Built apart (.build-tsan) so that make test's
# build stays as it is. The suites are those that need no server: the pure modules, the agent's and
# the aggregator's runtimes behind their ports (where the threads and the 35-odd lock-guarded
# classes are), the services and the metrics. A race is reported and stops the run
# (halt_on_error): the target fails, and the report is in .cache/tsan/test.log.
set -euo pipefail
cd "$(dirname "$0")/.."
suites='ScanCoreTests|ScanMediaTests|ScanVisionTests|ScanRulesTests|ScanAgentConfigTests|ScanEventsTests'
suites+='|ScanPipelineTests|ScanReconciliationTests|ScanReportsTests|ScanServicesTests|ScanMetricsTests'
suites+='|ScanAgentRuntimeTests|ScanAggregatorRuntimeTests'
swift build --build-tests --sanitize=thread --scratch-path .build-tsan
mkdir -p .cache/tsan
status=0
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
  swift test --skip-build --sanitize=thread --scratch-path .build-tsan --filter "$suites" \
  >.cache/tsan/test.log 2>&1 || status=$?
grep -E '^(✔|✘) Test run' .cache/tsan/test.log || true
if grep -q 'WARNING: ThreadSanitizer' .cache/tsan/test.log; then
  echo "tsan: ThreadSanitizer reported a race (.cache/tsan/test.log):" >&2
  grep -A 30 'WARNING: ThreadSanitizer' .cache/tsan/test.log | head -60 >&2
  exit 1
fi
if [ "$status" -ne 0 ]; then
  echo "tsan: the tests failed (exit $status); .cache/tsan/test.log:" >&2
  tail -40 .cache/tsan/test.log >&2
  exit "$status"
fi
echo "tsan: no race in $(grep -oE '[0-9]+ tests? in [0-9]+ suites?' .cache/tsan/test.log | tail -1)"
