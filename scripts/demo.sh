#!/usr/bin/env bash
# The demo, run by `make demo` with local servers up (scripts/with-servers.sh exports their URLs
# and stops the servers afterwards). Three live agents on synthetic clips paced in real time —
# two cameras on one conveyor lane seeing the same products 1.5 s apart, one pack-station camera
# — publish to JetStream; the aggregator stores, reconciles and checks packs against orders; the
# pack camera's order-label rule also reaches it through the rules bucket (scanadmin rules add).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
bin="${SCANTRACK_BIN:-$(swift build --show-bin-path)}"  # SCANTRACK_BIN: prebuilt programs (tests)
run="run/demo"
work="$run/work"
rm -rf "$work"
mkdir -p "$work/clips" "$work/logs"
pids=()
cleanup() {  # stop what this script started, by PID
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
echo "== schema, topology, rules, orders"
"$bin/scanadmin" migrate
"$bin/scanadmin" topology load scripts/demo/topology.json
"$bin/scanadmin" rules add scripts/demo/pack-rules.json --author demo
"$bin/scanadmin" orders import docs/examples/orders.csv

echo
echo "== supervisor dashboard (read-only; live while the demo runs)"
"$bin/scanadmin" serve --listen "${SCANTRACK_DASHBOARD_LISTEN:-127.0.0.1:0}" --refresh-seconds 2 \
  > "$work/logs/dashboard.out" 2> "$work/logs/dashboard.log" &
dashboard=$!
pids+=($dashboard)
for _ in $(seq 1 50); do grep -q "^dashboard: " "$work/logs/dashboard.out" && break; sleep 0.2; done
if ! grep "^dashboard: " "$work/logs/dashboard.out"; then
  echo "the dashboard did not start; log in $work/logs/dashboard.log" >&2; exit 1
fi

echo
echo "== synthetic clips: a conveyor lane (10 products, identical ones back to back), a pack station (3 orders)"
"$bin/scan-synth" lane "$work/clips/lane.y4m"
"$bin/scan-synth" pack "$work/clips/pack.y4m"

agent_config() {  # id lane-or-station-json clip session-json rules-json start-time -> path
  local path="$work/$1.json"
  cat > "$path" <<JSON
{"camera": {"id": "$1", "site": "dc1", $2},
 "source": {"type": "clip", "path": "$3", "realtime": true, "startAt": "$6"},
 "session": $4,
 "nats": {"url": "$SCANTRACK_NATS"},
 "spool": {"dir": "$work/spool-$1"},
 "heartbeatSeconds": 2$5}
JSON
  echo "$path"
}
# The clips play from a few seconds ahead, cam-02's 1.5 s after cam-01's (it is 1.5 s downstream):
# in step however long each agent takes to start.
now=$(date +%s%3N)
at() { date -u -d "@$(((now + $1) / 1000)).$(printf %03d $(((now + $1) % 1000)))" +%Y-%m-%dT%H:%M:%S.%3NZ; }
start=$(at 4000); start2=$(at 5500)
lane1=$(agent_config cam-01 '"lane": "L1"' "$work/clips/lane.y4m" '{"start": "continuous"}' '' "$start")
lane2=$(agent_config cam-02 '"lane": "L1"' "$work/clips/lane.y4m" '{"start": "continuous"}' '' "$start2")
pack=$(agent_config cam-10 '"station": "pack-01"' "$work/clips/pack.y4m" '{"start": "orderCode", "stopAfterIdleSeconds": 2.5}' \
  ', "rules": "scripts/demo/pack-rules.json"' "$start")

echo
echo "== aggregator, then three agents in real time (about 35 s); live item passes and packs:"
"$bin/scan-aggregator" run 2> "$work/logs/aggregator.log" &
pids+=($!)
"$bin/scanadmin" tail --type item & pids+=($!)
"$bin/scanadmin" tail --type pack & pids+=($!)
sleep 1
# The WMS sends ORD-1003 again over NATS (revision 2, the CSV import was 1) and waits for the
# aggregator's answer and the verdict of the pack made for it (docs/integration.md, "order").
wms=""
if [ -x .cache/venv/bin/python ]; then
  .cache/venv/bin/python scripts/wms_consumer.py --order docs/examples/order.json --await-pack 90 \
    > "$work/wms-order.json" 2> "$work/logs/wms-order.log" & wms=$!
fi
"$bin/scan-agent" run --config "$lane1" 2> "$work/logs/cam-01.log" & a1=$!
"$bin/scan-agent" run --config "$pack" 2> "$work/logs/cam-10.log" & a3=$!
"$bin/scan-agent" run --config "$lane2" 2> "$work/logs/cam-02.log" & a2=$!
pids+=($a1 $a2 $a3)
status=0
for pid in $a1 $a2 $a3; do wait "$pid" || status=$?; done
if [ "$status" -ne 0 ]; then echo "an agent failed (exit $status); logs in $work/logs/" >&2; exit 1; fi
# The last pack record, then the last item passes (they close once the lane has been quiet
# for their window and grace, about 4 s).
for _ in $(seq 1 40); do
  "$bin/scanadmin" orders show ORD-1003 --format csv | grep -qv "not packed" && break
  sleep 0.5
done
sleep 6
# Everything but the dashboard stops here; it stays up to the end of the demo.
for pid in "${pids[@]}"; do [ "$pid" = "$dashboard" ] || kill -TERM "$pid" 2>/dev/null || true; done
for pid in "${pids[@]}"; do [ "$pid" = "$dashboard" ] || wait "$pid" 2>/dev/null || true; done
pids=("$dashboard")

echo
echo "== cameras"
"$bin/scanadmin" cameras --silent-after 60

echo
echo "== orders"
for order in ORD-1001 ORD-1002 ORD-1003; do "$bin/scanadmin" orders show "$order"; echo; done

if [ -n "$wms" ]; then
  echo "== an order from the WMS over NATS: its answer and its pack's verdict"
  wait "$wms" || true
  cat "$work/wms-order.json"
  echo
fi
echo "== what a WMS received (JetStream, validated against docs/schema/)"
if [ -x .cache/venv/bin/python ]; then
  .cache/venv/bin/python scripts/wms_consumer.py --results --idle 1 || true
fi

echo
echo "== shift report"
"$bin/scanadmin" report --shift today | tee "$work/report.txt"
if grep -q "No shift has started yet today" "$work/report.txt"; then
  echo; "$bin/scanadmin" report --shift current   # after midnight, before the first shift of the day
fi

echo
echo "== summary of this run"
"$bin/scanadmin" report --from "$started" --to "$(date -u -d '+1 minute' +%Y-%m-%dT%H:%M:%SZ)" --format json | python3 scripts/demo/summary.py
echo
grep "^dashboard: " "$work/logs/dashboard.out" | sed 's/^dashboard: /the dashboard of this run: /'
if [ -n "${SCANTRACK_DEMO_HOLD:-}" ]; then
  echo "SCANTRACK_DEMO_HOLD is set: the servers and the dashboard stay up until Ctrl-C"
  wait "$dashboard" || true
fi
echo "demo done; logs in $work/logs/"
