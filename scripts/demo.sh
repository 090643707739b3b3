#!/usr/bin/env bash
# The demo, run by `make demo` with local servers up (scripts/with-servers.sh exports their URLs).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$(cd "$here" && swift build --show-bin-path)"
cd "$here"
echo "== migrate"
"$bin/scanadmin" migrate
"$bin/scanadmin" migrate --status
echo "== demo: agents, aggregator and report come with the matrix-scan, aggregator and scanadmin work"
