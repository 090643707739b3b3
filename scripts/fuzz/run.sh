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
# The pure modules the fuzz targets reach, compiled as one module (their imports of each other
# taken out), so that the sanitizer sees all of their code.
modules=(ScanCore ScanMedia ScanVision ScanRules ScanAgentConfig ScanEvents ScanReconciliation ScanFuzz)
sources=()
for module in "${modules[@]}"; do sources+=(Sources/"$module"/*.swift); done
if [ ! -x "$binary" ] || [ -n "$(find "${sources[@]}" scripts/fuzz/harness.swift -newer "$binary" | head -1)" ]; then
  echo "fuzz: compiling ${modules[*]} with -sanitize=fuzzer,address"
  rm -rf "$out/src" && mkdir -p "$out/src"
  pattern="^(@testable )?import ($(IFS='|'; echo "${modules[*]}"))\$"
  for file in "${sources[@]}"; do
    grep -vE "$pattern" "$file" > "$out/src/$(basename "$(dirname "$file")")-$(basename "$file")"
  done
  swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name ScanTrackFuzz -package-name scantrack \
    "$out"/src/*.swift scripts/fuzz/harness.swift -o "$binary"
fi
total=0
for target in $(sed -n 's/^ *case \([a-zA-Z]*\)\( = "\([a-z-]*\)"\)\{0,1\}$/\1 \3/p' Sources/ScanFuzz/FuzzTargets.swift \
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
