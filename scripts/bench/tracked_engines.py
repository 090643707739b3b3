#!/usr/bin/env python3
"""zbar against zxing-cpp on the tracked regions (`decoder.trackedEngine`) or on the sweep's lines
(`decoder.sweepEngine`), as the agent runs them: the same replay of each clip with each engine,
pinned to one core.

    scripts/bench/tracked_engines.py BIN [--setting sweepEngine] [--with DataMatrix] [--decoder JSON] CLIP...

BIN: the release build's folder (scan-agent). Each CLIP needs CLIP.truth (scan-synth --truth).
Prints Markdown table rows:

    clip | engine | frames/s | codes wholly in view, missed, duplicates, phantoms |
    tracked regions read by zxing-cpp, left to zbar (trackedEngine) or
    ms a frame in the sweep and zbar stages (sweepEngine) | zxing / zbar

Counts as `scripts/bench/accuracy.py` gives them.
"""
import json
import re
import subprocess
import sys
from pathlib import Path

CONVEYOR = ["EAN-13", "EAN-8", "UPC-A", "UPC-E", "CODE-128", "CODE-39", "I2/5", "QR-Code"]
HERE = Path(__file__).parent


def replay(binary, clip, decoder):
    config = Path(clip).with_suffix(".tracked-engines.json")
    config.write_text(json.dumps({"camera": {"id": "bench"}, "decoder": decoder}))
    out = subprocess.run(
        ["taskset", "-c", "1", f"{binary}/scan-agent", "replay", clip, "--config", str(config), "--sightings-only",
         "--profile"], capture_output=True, text=True)
    fps = float(re.search(r"([0-9.]+) frames/s, peak", out.stderr).group(1))
    regions = re.search(r"tracked regions: (\d+) read by zxing-cpp, (\d+) left to zbar", out.stderr)
    stages = {name: ms for name, ms in re.findall(r"^  (\S+) +([0-9.]+)", out.stderr, re.MULTILINE)}
    sightings = Path(clip).with_suffix(".tracked-engines.out")
    sightings.write_text(out.stdout)
    counts = subprocess.run(["python3", str(HERE / "accuracy.py"), clip + ".truth", str(sightings)],
                            capture_output=True, text=True).stdout.split()
    return fps, counts, regions.groups() if regions else None, stages


def main():
    binary, clips = sys.argv[1], sys.argv[2:]
    extra, settings, setting = [], {}, "trackedEngine"
    if clips[:1] == ["--setting"]:
        setting, clips = clips[1], clips[2:]
    if clips[:1] == ["--with"]:
        extra, clips = clips[1].split(","), clips[2:]
    if clips[:1] == ["--decoder"]:
        settings, clips = json.loads(clips[1]), clips[2:]
    for clip in clips:
        name = Path(clip).stem + (" (+ " + ", ".join(extra) + ")" if extra else "")
        name += "".join(f", {k} {v}" for k, v in settings.items())
        base = None
        for engine in ["zbar", "zxing"]:
            decoder = {"symbologies": CONVEYOR + extra, setting: engine, **settings}
            fps, counts, regions, stages = replay(binary, clip, decoder)
            base = base or fps
            if setting == "sweepEngine":
                read = f"{stages.get('sweep', '—')}, {stages.get('zbar', '—')}"
            else:
                read = f"{regions[0]}, {regions[1]}" if regions else "—"
            print(f"| {name} | {engine} | {fps:.1f} | {', '.join(counts)} | {read} | {fps / base:.2f}× |")


if __name__ == "__main__":
    main()
