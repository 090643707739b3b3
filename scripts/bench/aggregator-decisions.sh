#!/usr/bin/env bash
# make bench: the aggregator's divert decisions for a lane of two cameras at 30 parcels a second.
# Two live scan-agents (release; cam-1 the top and cam-2 the side camera at the same place on the
# belt, both reading the rendered sorter infeed of decisions.sh, paced at 30 frames/s) group
# parcels and publish them; scan-aggregator (release) ingests, merges each parcel's two camera
# parcels into a parcel pass and decides it (the lane's `decision` in the topology);
# scripts/io_gateway.py plays the I/O gateway and measures each decision's latency from the
# moment the last camera's parcel closed. Not pinned: four programs and the servers share the
# two cores, as on a small edge box. Prints markdown for BENCHMARKS.md. Needs SCANTRACK_NATS and
# SCANTRACK_PG (make bench's servers).
#   scripts/bench/aggregator-decisions.sh BIN_DIR
set -euo pipefail
bin="$1"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$(mktemp -d)"
cache="$here/.cache/bench"
mkdir -p "$cache"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$out"
}
trap cleanup EXIT
frames="${BENCH_DECISION_FRAMES:-300}"
python="$here/.cache/venv/bin/python"
nats="${SCANTRACK_NATS:-nats://127.0.0.1:4222}"

echo "## Divert decisions by the aggregator: a lane of two cameras at 30 parcels/s"
echo
echo "\`scripts/bench/aggregator-decisions.sh\` (part of \`make bench\`): two \`scan-agent run\` (release), a top and"
echo "a side camera at the same place on the belt (\`travelSeconds\` 0), each reading \`scan-synth parcel-stream"
echo "--frames $frames\` (as above: 30 parcels/s, one EAN-13 each, every tenth label torn) paced at 30 frames/s with"
echo "\`dropLate\`, with grouping and without decisions of their own; \`scan-aggregator run\` (release, \`--batch 200\`)"
echo "with the lane's \`decision\` in the topology (\`deadlineSeconds\` 1); \`scripts/io_gateway.py\` measures each"
echo "decision's latency from \`closedAt\` (when the last camera's parcel of the pass left its view) to its arrival."
echo "Nothing pinned: the two agents, the aggregator, the gateway, nats-server and PostgreSQL share the two cores."
echo "The path: agent spool → JetStream → ingest (fetch, COPY, commit) → reconciliation round (started as soon as"
echo "ingest has stored parcels) → decision published → gateway."
echo
echo "| clip | decisions/s | pass | divert | late | p50 | p99 | max |"
echo "|---|---|---|---|---|---|---|---|"
for seed in 1 2; do
  clip="$cache/parcel-stream-55px-f$frames-s$seed.y4m"
  [ -f "$clip" ] || "$bin/scan-synth" parcel-stream "$clip" --frames "$frames" --seed "$seed" 2> /dev/null
  prefix="benchaggdec$seed$RANDOM"
  cat > "$out/topology.json" <<JSON
{"version": 1, "sites": [{"id": "dc1", "lanes": [{"id": "L1", "windowSeconds": 0.3, "graceSeconds": 0.5,
  "cameras": [{"id": "cam-1"}, {"id": "cam-2", "travelSeconds": 0}],
  "decision": {"deadlineSeconds": 1}}]}]}
JSON
  for camera in cam-1 cam-2; do
    cat > "$out/$camera.json" <<JSON
{"camera": {"id": "$camera", "site": "dc1", "lane": "L1"},
 "source": {"type": "clip", "path": "$clip", "realtime": true, "dropLate": true},
 "grouping": {"enabled": true, "maxGapPixels": 40},
 "nats": {"url": "$nats", "prefix": "$prefix"},
 "spool": {"dir": "$out/spool-$seed-$camera"}, "heartbeatSeconds": 1}
JSON
  done
  "$bin/scanadmin" migrate > /dev/null
  "$bin/scanadmin" topology load "$out/topology.json" > /dev/null
  "$bin/scan-aggregator" run --prefix "$prefix" --batch 200 2> "$out/aggregator.log" &
  aggregator=$!
  pids+=($aggregator)
  rm -f "$out/ready"
  "$python" "$here/scripts/io_gateway.py" --nats "$nats" --prefix "$prefix" --site dc1 --lane L1 \
    --ready "$out/ready" --idle 6 --timeout 180 > "$out/gateway.json" &
  gateway=$!
  for _ in $(seq 100); do [ -f "$out/ready" ] && grep -q "ingesting" "$out/aggregator.log" && break; sleep 0.1; done
  "$bin/scan-agent" run --config "$out/cam-1.json" > /dev/null 2> "$out/cam-1.log" & a1=$!
  "$bin/scan-agent" run --config "$out/cam-2.json" > /dev/null 2> "$out/cam-2.log" & a2=$!
  wait "$a1" "$a2" || true
  wait "$gateway" || true
  kill "$aggregator" 2>/dev/null || true
  wait "$aggregator" 2>/dev/null || true
  "$python" - "$out/gateway.json" "$frames" "$seed" <<'PY'
import json, sys
summary = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
seconds = int(sys.argv[2]) / 30
lat = summary["latencyMs"]
fmt = lambda v: "?" if v is None else f"{v:.0f} ms"
print(f"| seed {sys.argv[3]}, {sys.argv[2]} frames | {summary['decisions'] / seconds:.1f} ({summary['decisions']}) "
      f"| {summary.get('pass', 0)} | {summary.get('divert', 0)} | {summary['late']} | {fmt(lat['p50'])} "
      f"| {fmt(lat['p99'])} | {fmt(lat['max'])} |")
PY
done
echo
