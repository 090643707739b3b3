#!/usr/bin/env bash
# What the images bucket costs an agent: `scan-agent run` (release) on core 1 reads a rendered 4K
# tunnel clip (`scan-synth tunnel-4k`, docs/examples/tunnel-4k.json's decoder, parcels grouped) as
# fast as it can, with `images.keep` none and all, IMAGES_ROUNDS (3) runs of each, alternating.
# The agent's last log line gives the pictures kept, their bytes and the time spent keeping them
# on the decoding thread (shrink, grey JPEG, SHA-256, chunks into the spool); the CPU seconds of
# the whole run (user + system) are compared too. The bucket's stream is made first with nats-py's
# own object store. Prints markdown for BENCHMARKS.md. Needs SCANTRACK_NATS and .cache/venv.
#   scripts/bench/images.sh BIN_DIR [SYNTH]
set -euo pipefail
bin="$1"
synth="${2:-$bin/scan-synth}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
python="$here/.cache/venv/bin/python"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
nats="${SCANTRACK_NATS:-nats://127.0.0.1:4222}"
rounds="${IMAGES_ROUNDS:-3}"
frames="${IMAGES_FRAMES:-240}"

"$synth" tunnel-4k "$out/tunnel.y4m" --frames "$frames" --seed 11 > /dev/null
"$python" -c '
import asyncio, sys
import nats
async def main():
    bus = await nats.connect(sys.argv[1])
    js = bus.jetstream()
    try:
        await js.object_store("SCANTRACK_IMAGES")
    except Exception:
        await js.create_object_store("SCANTRACK_IMAGES")
    await bus.close()
asyncio.run(main())' "$nats"

run() {  # keep -> "cpu-seconds kept bytes ms-a-picture"
  local keep="$1" prefix="bimg$RANDOM"
  python3 - "$out/tunnel.y4m" "$nats" "$out/spool-$prefix" "$prefix" "$keep" > "$out/agent.json" <<'END'
import json, sys
config = json.load(open("docs/examples/tunnel-4k.json"))
config["camera"]["site"] = "bench"
config["source"] = {"type": "clip", "path": sys.argv[1], "realtime": False}
config["nats"] = {"url": sys.argv[2], "prefix": sys.argv[4]}
config["spool"] = {"dir": sys.argv[3]}
config["grouping"] = {"enabled": True}
config["images"] = {"keep": sys.argv[5]}
print(json.dumps(config))
END
  local cpu
  cpu=$(python3 -c '
import resource, subprocess, sys
with open(sys.argv[1], "w") as log:
    subprocess.run(sys.argv[2:], stdout=log, stderr=subprocess.STDOUT)
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{usage.ru_utime + usage.ru_stime:.3f}")' "$out/agent.log" taskset -c 1 "$bin/scan-agent" run --config "$out/agent.json")
  local images
  images=$(grep "scan-agent stopped" "$out/agent.log" | tail -1 | sed -n 's/.*images=\([0-9]*\) kept, \([0-9]*\) bytes, \([0-9.]*\) ms a picture.*/\1 \2 \3/p')
  echo "$cpu ${images:-0 0 0}"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
: > "$out/none"; : > "$out/all"
for _ in $(seq "$rounds"); do
  run none >> "$out/none"
  run all >> "$out/all"
done
cpu_none=$(cut -d' ' -f1 "$out/none" | median)
cpu_all=$(cut -d' ' -f1 "$out/all" | median)
kept=$(cut -d' ' -f2 "$out/all" | median)
bytes=$(cut -d' ' -f3 "$out/all" | median)
each=$(cut -d' ' -f4 "$out/all" | median)

echo "## Images: a picture of every parcel and no-read in the images bucket"
echo
echo "\`scripts/bench/images.sh BIN\`: \`scan-agent run\` (release, \`taskset -c 1\`) reads \`scan-synth tunnel-4k\`"
echo "($frames frames of 3840×2160, seed 11, docs/examples/tunnel-4k.json's decoder, \`grouping.enabled\`) as fast as it"
echo "can with \`images.keep\` none and all, $rounds runs of each, alternating (medians). \"Keeping\" is the time the"
echo "agent's last log line gives for shrinking, grey JPEG (quality 80), SHA-256 and chunks into the spool; the"
echo "whole run's CPU (user + system) also holds the parcel crops' copies and publishing the chunks."
echo
echo "| pictures kept | bytes a picture | keeping, a picture | share of a core at 30 parcels/s | run CPU, none | run CPU, all |"
echo "|---|---|---|---|---|---|"
awk -v kept="$kept" -v bytes="$bytes" -v each="$each" -v none="$cpu_none" -v all="$cpu_all" 'BEGIN {
  per = kept > 0 ? bytes / kept : 0
  printf "| %d | %.0f | %.2f ms | %.1f %% | %.2f s | %.2f s |\n", kept, per, each, each * 30 / 10, none, all
}'
echo
