#!/usr/bin/env python3
"""zbar against zxing-cpp on the agent's own regions: which engine is faster for a region.

    scripts/bench/region_engines.py BIN OUT CLIP

Replays CLIP with the default (guided) decoder and `--trace-regions`, keeps each frame's planned
regions (tracked codes, discovery regions from the localiser, sweep stripes), and has each raw
engine decode exactly those crops, one core (`taskset -c 1`): zbar as the agent runs it (a fresh
scanner a region, the region's scan-line steps, the conveyor symbologies), zxing-cpp with and
without tryHarder (its own scan lines). Prints Markdown rows:

    regions | per frame | zbar ms/frame, reads/frame, labels | zxing-cpp tryHarder … | zxing-cpp fast …

"reads/frame": symbols decoded a frame (a code read in two overlapping regions counts twice);
"labels": distinct values of the truth (wholly in view, not torn) read in any frame.
"""
import json
import re
import subprocess
import sys
from pathlib import Path

TRACE = re.compile(r"^frame (\d+): (\w+) region \[(\d+),(\d+)-(\d+),(\d+)\] rows every (\d+), columns every (\d+)")
FORMATS = "EAN13,EAN8,UPCA,UPCE,Code128,Code39,ITF,QRCode"


def key(value):
    return value.lstrip("0") if value.isdigit() else value


def run(command):
    return subprocess.run(["taskset", "-c", "1"] + command, capture_output=True, text=True).stdout


def decode(command, truth, frames):
    out = run(command)
    seconds = float(re.search(r"seconds=([0-9.]+)", out).group(1))
    symbols = int(re.search(r"symbols=(\d+)", out).group(1))
    values = {key(line.split(" ", 1)[1]) for line in out.splitlines() if re.match(r"^\d+ ", line)}
    return f"{1000 * seconds / frames:.2f}, {symbols / frames:.1f}, {len(values & truth)}"


def main():
    binary, out, clip = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    labels = [json.loads(line) for line in Path(clip + ".truth").read_text().splitlines() if line.strip()]
    truth = {key(label["value"]) for label in labels if not label.get("torn") and not label.get("partial")}
    trace = subprocess.run(
        [f"{binary}/scan-agent", "replay", clip, "--trace-regions", "--sightings-only"],
        capture_output=True, text=True).stderr
    kinds = {}
    frames = 0
    for line in trace.splitlines():
        match = TRACE.match(line)
        if match:
            frame, kind = int(match.group(1)), match.group(2)
            frames = max(frames, frame + 1)
            kinds.setdefault(kind, []).append(" ".join([str(frame)] + list(match.groups()[2:])))
    kinds["all"] = sorted((line for lines in list(kinds.values()) for line in lines),
                          key=lambda line: int(line.split()[0]))
    for kind in ["tracked", "discovery", "sweep", "all"]:
        lines = kinds.get(kind, [])
        if not lines:
            continue
        path = out / f"regions-{Path(clip).stem}-{kind}.txt"
        path.write_text("\n".join(lines) + "\n")
        cells = [
            decode([f"{out}/zbar_raw", clip, "--symbologies", "conveyor", "--values", "1", "--regions", str(path)],
                   truth, frames),
            decode([f"{out}/zxing_raw", clip, "--formats", FORMATS, "--try-harder", "1", "--values",
                    "--regions", str(path)], truth, frames),
            decode([f"{out}/zxing_raw", clip, "--formats", FORMATS, "--try-harder", "0", "--values",
                    "--regions", str(path)], truth, frames),
        ]
        print(f"| {Path(clip).stem}: {kind} | {len(lines) / frames:.1f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
