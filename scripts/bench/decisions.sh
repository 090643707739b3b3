#!/usr/bin/env bash
# make bench: divert decisions at 30 parcels a second. A live scan-agent (release, pinned to
# core 1) reads a rendered sorter infeed (scan-synth parcel-stream: six rows, 55 px a frame, one
# EAN-13 a parcel, every tenth torn) paced at 30 frames/s like a camera, groups parcels and
# decides each; scripts/io_gateway.py (core 0, with nats-server) plays the I/O gateway and
# measures each decision's latency from the frame that closed its parcel. Prints markdown for
# BENCHMARKS.md. Needs SCANTRACK_NATS (make bench's servers).
#   scripts/bench/decisions.sh BIN_DIR
set -euo pipefail
bin="$1"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$(mktemp -d)"
cache="$here/.cache/bench"
mkdir -p "$cache"
trap 'rm -rf "$out"' EXIT
frames="${BENCH_DECISION_FRAMES:-300}"
python="$here/.cache/venv/bin/python"

echo "## Divert decisions at 30 parcels/s: frame to gateway"
echo
echo "\`scripts/bench/decisions.sh\` (part of \`make bench\`): \`scan-agent run\` (release, \`taskset -c 1\`) reads"
echo "\`scan-synth parcel-stream --frames $frames\` (1280x720, six rows of parcels at 55 px a frame: 30 parcels/s, one"
echo "EAN-13 each, every tenth label torn) paced at 30 frames/s with \`dropLate\` (a camera's pace), with grouping"
echo "(\`maxGapPixels\` 40: the rows' labels are 60 px apart) and \`decision.deadlineMs\` 100;"
echo "\`scripts/io_gateway.py\` (\`taskset -c 0\`, beside nats-server) subscribes"
echo "to the lane's decisions and takes each one's latency from \`closedAt\` (the frame that closed the parcel,"
echo "the deadline's origin: the first frame in which none of its labels is seen any more) to its arrival, and from"
echo "\`lastSeen\` (the parcel's last read; its label then takes about 3 frames to slide out of view)."
echo
echo "| clip | parcels/s decided | pass | divert | late | p50 | p99 | max | p99 from last read |"
echo "|---|---|---|---|---|---|---|---|---|"
for seed in 1 2; do
  clip="$cache/parcel-stream-55px-f$frames-s$seed.y4m"
  [ -f "$clip" ] || "$bin/scan-synth" parcel-stream "$clip" --frames "$frames" --seed "$seed" 2> /dev/null
  prefix="benchdec$seed$RANDOM"
  cat > "$out/agent.json" <<JSON
{"camera": {"id": "cam-1", "site": "dc1", "lane": "L1"},
 "source": {"type": "clip", "path": "$clip", "realtime": true, "dropLate": true},
 "grouping": {"enabled": true, "maxGapPixels": 40},
 "decision": {"enabled": true, "deadlineMs": 100},
 "nats": {"url": "${SCANTRACK_NATS:-nats://127.0.0.1:4222}", "prefix": "$prefix"},
 "spool": {"dir": "$out/spool-$seed"}, "heartbeatSeconds": 1}
JSON
  rm -f "$out/ready"
  taskset -c 0 "$python" "$here/scripts/io_gateway.py" --nats "${SCANTRACK_NATS:-nats://127.0.0.1:4222}" \
    --prefix "$prefix" --site dc1 --lane L1 --ready "$out/ready" --idle 4 --timeout 120 > "$out/gateway.json" &
  gateway=$!
  for _ in $(seq 100); do [ -f "$out/ready" ] && break; sleep 0.1; done
  taskset -c 1 "$bin/scan-agent" run --config "$out/agent.json" > /dev/null 2> "$out/agent.log" || true
  wait "$gateway" || true
  "$python" - "$out/gateway.json" "$frames" "$seed" <<'PY'
import json, sys
summary = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
seconds = int(sys.argv[2]) / 30
lat, read = summary["latencyMs"], summary["sinceLastReadMs"]
fmt = lambda v: "?" if v is None else f"{v:.1f} ms"
print(f"| seed {sys.argv[3]}, {sys.argv[2]} frames | {summary['decisions'] / seconds:.1f} ({summary['decisions']}) "
      f"| {summary.get('pass', 0)} | {summary.get('divert', 0)} | {summary['late']} | {fmt(lat['p50'])} "
      f"| {fmt(lat['p99'])} | {fmt(lat['max'])} | {fmt(read['p99'])} |")
PY
done
echo
