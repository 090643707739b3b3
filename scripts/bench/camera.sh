#!/usr/bin/env bash
# make bench: what capture from a GigE Vision camera and from an RTSP camera costs, at 1080p and 4K,
# and whether a live agent keeps up at 30 frames/s. The GigE Vision camera is scan-fake-camera
# (Aravis's fake camera: real GVCP/GVSP over UDP on 127.0.0.1) looping a rendered clip; the RTSP
# camera is GStreamer's RTSP server (scripts/rtsp_server.py) streaming it encoded with x264. Cameras
# are pinned to core 0, what is measured to core 1. Prints markdown for BENCHMARKS.md. Needs
# SCANTRACK_NATS (make bench's servers).
#   scripts/bench/camera.sh BIN_DIR
set -euo pipefail
bin="$1"
out="$(mktemp -d)"
camera=""
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cleanup() { [ -n "$camera" ] && kill "$camera" 2>/dev/null; wait 2>/dev/null; rm -rf "$out"; }
trap cleanup EXIT

echo "## GigE Vision capture: cost per frame and a live agent at 30 frames/s"
echo
echo "\`scripts/bench/camera.sh\` (part of \`make bench\`): scan-fake-camera loops a rendered clip at 30 frames/s"
echo "on core 0 (\`taskset -c 0\`); \`scan-agent cameras 127.0.0.1 --measure 10\` takes its frames for 10 s on"
echo "core 1 (\`taskset -c 1\`) and reports CPU per frame on its own thread (popping Aravis's buffer, copying the"
echo "luma) and for the whole process (with Aravis's GVSP receiving thread). Then a live agent (\`scan-agent run\`,"
echo "source genicam, default decoder) on core 1 for 15 s: frames received, decoded and dropped. Decoding is"
echo "beside it: the live agent's decode rate and latency as its final line reports them."
echo
echo "| frame | frames/s received | incomplete | capture thread | with receiving thread | share of a 30 fps frame period |"
echo "|---|---|---|---|---|---|"
rows=()
# A live agent on core 1 for 15 s reading SOURCE (JSON): a row of frames decoded and dropped.
live_agent() {
  local size="$1" source="$2"
  cat > "$out/agent.json" <<JSON
{"camera": {"id": "bench-cam", "site": "bench", "lane": "L1"},
 "source": $source,
 "nats": {"url": "${SCANTRACK_NATS:-nats://127.0.0.1:4222}", "prefix": "benchcam"},
 "spool": {"dir": "$out/spool-$size-$RANDOM"}, "heartbeatSeconds": 1}
JSON
  taskset -c 1 timeout -s TERM 15 "$bin/scan-agent" run --config "$out/agent.json" > /dev/null 2> "$out/agent-$size.log" || true
  last=$(grep "frames=" "$out/agent-$size.log" | tail -1)
  pick() { echo "$last" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -1; }
  decoding=$(echo "$last" | sed -n 's/.*decoding=decoding \([0-9.]*\) frames\/s, latency p50 \([0-9.]*\) ms p99 \([0-9.]*\) ms.*/\1 frames\/s, p50 \2 ms, p99 \3 ms/p')
  rows+=("| $size | $(pick frames) | $(pick framesDropped) | $decoding |")
}
for size in 1920x1080 3840x2160; do
  width=${size%x*}; height=${size#*x}
  "$bin/scan-synth" flow "$out/$size.y4m" --width "$width" --height "$height" --frames 30 >/dev/null 2>&1
  taskset -c 0 "$bin/scan-fake-camera" "$out/$size.y4m" --serial "B$width" --fps 30 --loop > "$out/camera.out" 2>&1 &
  camera=$!
  for _ in $(seq 50); do grep -q "fake camera:" "$out/camera.out" 2>/dev/null && break; sleep 0.1; done
  m=$(taskset -c 1 "$bin/scan-agent" cameras 127.0.0.1 --measure 10 --format json)
  field() { echo "$m" | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
  share=$(python3 -c "print(f'{$(field processMicrosecondsPerFrame) / 33333 * 100:.1f} %')")
  echo "| $size | $(field fps) | $(field incomplete) | $(field captureMicrosecondsPerFrame) µs | $(field processMicrosecondsPerFrame) µs | $share |"

  live_agent "$size" '{"type": "genicam", "camera": "127.0.0.1", "controls": {"frameRate": 30}}'
  kill "$camera" 2>/dev/null; wait "$camera" 2>/dev/null || true; camera=""
done
echo
echo "| live agent, 15 s at 30 frames/s | frames decoded | frames dropped | decoding (its final line) |"
echo "|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo

echo "## RTSP capture: cost per frame and a live agent at 30 frames/s"
echo
echo "\`scripts/bench/camera.sh\` (part of \`make bench\`): the same rendered clip, 30 frames repeated 20 times, encoded"
echo "with x264 at a camera's constant 8 Mbit/s (1080p) or 20 Mbit/s (4K), key frame every second, no B-frames"
echo "(\`scripts/rtsp_server.py encode\`), served by GStreamer's RTSP server on core 0 over TCP on loopback."
echo "\`scan-agent cameras URL --measure 10\` on core 1: CPU per frame of receiving and decoding H.264 to luma"
echo "(libavformat + libavcodec, one thread). Then a live agent (source rtsp) on core 1 for 15 s."
echo
echo "| frame | frames/s received | damaged | capture thread (receive + H.264 decode) | share of a 30 fps frame period |"
echo "|---|---|---|---|---|"
rows=()
for size in 1920x1080:8000 3840x2160:20000; do
  bitrate=${size#*:}; size=${size%:*}
  width=${size%x*}; height=${size#*x}
  "$bin/scan-synth" flow "$out/$size.y4m" --width "$width" --height "$height" --frames 30 >/dev/null 2>&1
  "$here/scripts/rtsp_server.py" encode "$out/$size.y4m" "$out/$size.h264.mkv" --codec h264 --repeat 20 \
    --bitrate "$bitrate" >/dev/null
  rm -f "$out/$size.y4m"
  taskset -c 0 "$here/scripts/rtsp_server.py" serve "$out/$size.h264.mkv" > "$out/rtsp.out" 2>&1 &
  camera=$!
  for _ in $(seq 50); do grep -q "rtsp server:" "$out/rtsp.out" 2>/dev/null && break; sleep 0.1; done
  url=$(sed -n 's/^rtsp server: //p' "$out/rtsp.out")
  m=$(taskset -c 1 "$bin/scan-agent" cameras "$url" --measure 10 --format json)
  field() { echo "$m" | python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
  share=$(python3 -c "print(f'{$(field captureMicrosecondsPerFrame) / 33333 * 100:.1f} %')")
  echo "| $size at $((bitrate / 1000)) Mbit/s | $(field fps) | $(field incomplete) | $(field captureMicrosecondsPerFrame) µs | $share |"
  live_agent "$size" "{\"type\": \"rtsp\", \"url\": \"$url\"}"
  kill "$camera" 2>/dev/null; wait "$camera" 2>/dev/null || true; camera=""
  rm -f "$out/$size.h264.mkv"
done
echo
echo "| live agent, 15 s at 30 frames/s | frames decoded | frames dropped | decoding (its final line) |"
echo "|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
