#!/usr/bin/env bash
# make fuzz: every FuzzTarget under libFuzzer (with AddressSanitizer) for FUZZ_SECONDS each (default
# 60), starting from the committed seed corpus in scripts/fuzz/corpus/TARGET/. New inputs go to
# .cache/fuzz/corpus/TARGET/; a crash is written to .cache/fuzz/crashes/ and fails the run: copy it
# into scripts/fuzz/corpus/TARGET/ (FuzzCorpusTests replays every file there in make test) and fix.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$here"
export PATH="/opt/swift/usr/bin:$PATH"
seconds="${FUZZ_SECONDS:-60}"
out=.cache/fuzz
mkdir -p "$out/crashes"
binary="$out/scantrack-fuzz"
sources=(Sources/ScanCore/*.swift Sources/ScanCore/Events/*.swift)
if [ ! -x "$binary" ] || [ -n "$(find "${sources[@]}" scripts/fuzz/harness.swift -newer "$binary" | head -1)" ]; then
  echo "fuzz: compiling ScanCore with -sanitize=fuzzer,address"
  swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name ScanCoreFuzz \
    "${sources[@]}" scripts/fuzz/harness.swift -o "$binary"
fi
total=0
for target in $(sed -n 's/^ *case \([a-zA-Z]*\)\( = "\([a-z-]*\)"\)\{0,1\}$/\1 \3/p' Sources/ScanCore/FuzzTargets.swift \
                | awk '{print ($2 == "" ? $1 : $2)}'); do
  mkdir -p "$out/corpus/$target"
  log="$out/$target.log"
  if ! SCANTRACK_FUZZ_TARGET="$target" "$binary" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
      -rss_limit_mb=2048 -artifact_prefix="$out/crashes/$target-" \
      "$out/corpus/$target" "scripts/fuzz/corpus/$target" > "$log" 2>&1; then
    tail -30 "$log"
    echo "fuzz: $target crashed; the input is in $out/crashes/" >&2
    exit 1
  fi
  runs=$(grep -o 'Done [0-9]* runs' "$log" | grep -o '[0-9]*' || echo 0)
  total=$((total + runs))
  echo "fuzz: $target $runs executions in ${seconds} s, no crash ($(ls "$out/corpus/$target" | wc -l) inputs in its corpus)"
done
echo "fuzz: $total executions in total, no crash"
