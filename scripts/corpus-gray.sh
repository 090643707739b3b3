#!/usr/bin/env bash
# Converts the shared corpus images once to 8-bit grayscale PGM in .cache/corpus-gray/, the
# form our decoder and zbarimg both read in tests. Files already converted are skipped.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
corpus="${SCANTRACK_CORPUS:-$here/../shared/corpus}"
out="$here/.cache/corpus-gray"
# /usr/bin/convert: ImageMagick itself (a stand-in named convert may come earlier on PATH).
convert=/usr/bin/convert
[ -x "$convert" ] || { echo "corpus-gray: ImageMagick is missing (run scripts/install-deps.sh)" >&2; exit 1; }
[ -d "$corpus/zxing" ] || { echo "corpus-gray: no corpus at $corpus" >&2; exit 1; }

jobs=$(mktemp)
trap 'rm -f "$jobs"' EXIT
for image in "$corpus"/zxing/*/*.{png,webp,jpg,jpeg,gif,bmp} "$corpus"/dynamsoft/*/images/*.JPG; do
  [ -f "$image" ] || continue
  rel="${image#"$corpus"/}"
  target="$out/$rel.pgm"
  [ -f "$target" ] && continue
  mkdir -p "$(dirname "$target")"
  printf '%s\0%s\0' "$image" "$target" >> "$jobs"
done
count=$(tr -cd '\0' < "$jobs" | wc -c)
count=$((count / 2))
if [ "$count" -eq 0 ]; then echo "corpus-gray: up to date"; exit 0; fi
echo "corpus-gray: converting $count images"
xargs -0 -n 2 -P "$(nproc)" sh -c \
  '"$0" "$1" -auto-orient -background white -alpha remove -alpha off -colorspace gray -depth 8 "$2.tmp.pgm" && mv "$2.tmp.pgm" "$2"' \
  "$convert" < "$jobs"
echo "corpus-gray: done"
