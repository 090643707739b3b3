#!/usr/bin/env bash
# The demo, run by `make demo` with local servers up (scripts/with-servers.sh exports their URLs).
# What exists so far: schema, the synthetic conveyor, matrix scan with rules and sessions.
# Live agents publishing to the aggregator, and the shift report, come with later work.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
bin="$(swift build --show-bin-path)"
work="run/demo/clips"
mkdir -p "$work"

echo "== schema"
"$bin/scanadmin" migrate
"$bin/scanadmin" migrate --status

echo
echo "== synthetic conveyor: three identical products back to back, three 40… and three 41… codes"
"$bin/scan-synth" back-to-back "$work/back-to-back.y4m"
"$bin/scan-synth" prefixes "$work/prefixes.y4m"

echo
echo "== matrix scan: identical products are counted one by one"
"$bin/scan-agent" replay "$work/back-to-back.y4m" --sightings-only --start 2026-11-21T08:00:00Z > "$work/back-to-back.jsonl"
python3 - "$work/back-to-back.jsonl" <<'PY'
import json, sys
events = [json.loads(line) for line in open(sys.argv[1])]
for e in events:
    if e["type"] == "sighting":
        print(f'  sighting {e["value"]} track {e["trackId"]} frames {e["firstFrame"]}-{e["lastFrame"]}')
PY

echo
echo "== rules and sessions on Saturday 2026-11-21: weekends accept only 41…; sessions stop after 3 codes"
"$bin/scan-agent" replay "$work/prefixes.y4m" --rules docs/examples/weekday-weekend.json \
  --config docs/examples/session-3-codes.json --start 2026-11-21T08:00:00Z --sightings-only > "$work/prefixes.jsonl"
python3 - "$work/prefixes.jsonl" <<'PY'
import json, sys
for e in (json.loads(line) for line in open(sys.argv[1])):
    if e["type"] == "sighting":
        print(f'  sighting {e["value"]} {e["status"]}' + (f' by {e["ruleId"]}' if e.get("ruleId") else ""))
    elif e["type"] == "session.completed":
        codes = ", ".join(f'{c["value"]}×{c["count"]}' for c in e["codes"]) or "no codes"
        print(f'  session {e["sessionId"]} completed ({e["reason"]}): {codes}')
PY
echo
echo "demo done (live agents, aggregator reconciliation and the shift report are not built yet)"
