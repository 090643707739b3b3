#!/usr/bin/env bash
# What a viewer costs a running agent: `scan-agent run` on core 1 replays a rendered any-angle clip
# in real time (30 frames/s) with and without a live page's lease (`scanadmin agent preview`,
# renewed every 2 s as `scanadmin serve` does: 640 pixels wide, 4 pictures a second) on core 0, at
# 1080p and 4K; the agent's CPU seconds (user + system) over the run, three runs of each
# (SNAPSHOT_ROUNDS), alternating, and the pictures it sent (counted on the preview subject with nats-py). Prints
# markdown for BENCHMARKS.md. Needs SCANTRACK_NATS (make bench's servers) and .cache/venv.
#   scripts/bench/snapshot.sh BIN_DIR SYNTH
set -euo pipefail
bin="$1"
synth="$2"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
python="$here/.cache/venv/bin/python"
out="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$out"' EXIT
nats="${SCANTRACK_NATS:-nats://127.0.0.1:4222}"
rounds="${SNAPSHOT_ROUNDS:-3}"  # runs of each, alternating

echo "## A viewer's cost: a live page's lease, four pictures a second"
echo
echo "\`scripts/bench/snapshot.sh BIN SYNTH\`: \`scan-agent run\` (release) on core 1 replays \`scan-synth any-angle\`"
echo "in real time (30 frames/s); on core 0 \`scanadmin agent preview\` takes a lease every 2 s (640 pixels wide, 4 a"
echo "second, what a live page's dashboard asks), or nobody does. CPU is the agent's user + system seconds over the run"
echo "(\`/usr/bin/time\`), $rounds runs of each, alternating; the cost is the difference of the medians. Pictures"
echo "are those the agent sent on its preview subject over all watched runs."
echo
echo "| frame | frames | CPU, nobody watching | CPU, watched | pictures sent | CPU a picture | share of a core |"
echo "|---|---|---|---|---|---|---|"
for size in 1920x1080 3840x2160; do
  width="${size%x*}"
  height="${size#*x}"
  frames=$([ "$width" = 1920 ] && echo 300 || echo 150)
  "$synth" any-angle "$out/clip-$width.y4m" --width "$width" --height "$height" --frames "$frames" --seed 7 > /dev/null
  run() {
    local ask="$1" prefix="bsnap$RANDOM"
    cat > "$out/agent.json" <<JSON
{"camera": {"id": "snap-cam", "site": "bench"},
 "source": {"type": "clip", "path": "$out/clip-$width.y4m", "realtime": true},
 "nats": {"url": "$nats", "prefix": "$prefix"},
 "spool": {"dir": "$out/spool-$prefix"}, "heartbeatSeconds": 1}
JSON
    local asked=0 counter=""
    if [ "$ask" = yes ]; then
      taskset -c 0 "$python" -c '
import asyncio, signal, sys
import nats
async def main():
    bus = await nats.connect(sys.argv[1])
    count = 0
    async def got(message):
        nonlocal count
        count += 1
    await bus.subscribe(sys.argv[2], cb=got)
    print("ready", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await bus.drain()
    print(count, flush=True)
asyncio.run(main())
' "$nats" "$prefix.v1.preview.bench.snap-cam" > "$out/count" &
      counter=$!
      until grep -q ready "$out/count" 2>/dev/null; do sleep 0.1; done
    fi
    /usr/bin/time -f "%U %S" -o "$out/time" taskset -c 1 "$bin/scan-agent" run --config "$out/agent.json" \
      > /dev/null 2> "$out/agent.log" &
    local agent=$!
    if [ "$ask" = yes ]; then
      sleep 1
      while kill -0 "$agent" 2>/dev/null; do
        SCANTRACK_NATS="$nats" SCANTRACK_CONFIG="" taskset -c 0 "$bin/scanadmin" agent preview \
          --camera snap-cam --site bench --prefix "$prefix" --timeout 2 > /dev/null 2>&1 || true
        sleep 2
      done
    fi
    wait "$agent" || true
    if [ -n "$counter" ]; then
      kill -TERM "$counter"
      wait "$counter" || true
      asked="$(tail -1 "$out/count")"
    fi
    echo "$(awk '{print $1 + $2}' "$out/time") $asked"
  }
  quiet=()
  watched=()
  answered=0
  for round in $(seq "$rounds"); do
    quiet+=("$(run no | cut -d' ' -f1)")
    result="$(run yes)"
    watched+=("${result% *}")
    answered=$((answered + ${result#* }))
  done
  python3 - "$size" "$frames" "$answered" "$rounds" "${quiet[@]}" "${watched[@]}" <<'PY'
import statistics, sys
size, frames, answered, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
quiet = [float(x) for x in sys.argv[5:5 + rounds]]
watched = [float(x) for x in sys.argv[5 + rounds:5 + 2 * rounds]]
# Medians: one run in a few is slowed by the machine more than a viewer costs.
cost = statistics.median(watched) - statistics.median(quiet)
extra = cost * rounds / max(1, answered) * 1000
share = cost / (frames / 30) * 100
print(f"| {size} | {frames} | {' / '.join(f'{q:.2f} s' for q in quiet)} | {' / '.join(f'{w:.2f} s' for w in watched)} "
      f"| {answered} | {extra:.1f} ms | {share:.1f} % |")
PY
done
