#!/usr/bin/env python3
"""The raw engines as the baseline: scan-agent replay against raw zbar and raw zxing-cpp reading
every whole frame of the same clips, each pinned to one core, in the same run.

    scripts/bench/raw_engines.py BIN OUT [--with DataMatrix] [--decoder JSON] CLIP...

BIN: the release build's folder (scan-agent); OUT: where zbar_raw and zxing_raw were built. Each
CLIP needs CLIP.truth (scan-synth --truth). Prints Markdown table rows:

    clip | codes | raw zbar (density 2) fps, codes found | raw zxing-cpp tryHarder fps, codes found |
    raw zxing-cpp fast fps, codes found | replay fps, codes found | fastest raw reading them | replay / it

"codes found": distinct labels of the truth (wholly in view at some time, not torn) any frame read (retail codes compared without leading
zeros). `--decoder`: more settings of the replay's `decoder` object (the tunnel's
`{"zxingEveryNthFrame": 8}`). The ratio is against the fastest raw run that finds every label the replay finds; when none
does, against the raw run that finds the most (marked "fewer").
"""
import json
import re
import subprocess
import sys
from pathlib import Path

CONVEYOR_ZXING = "EAN13,EAN8,UPCA,UPCE,Code128,Code39,ITF,QRCode"


def key(value):
    return value.lstrip("0") if value.isdigit() else value


def run(command):
    out = subprocess.run(["taskset", "-c", "1"] + command, capture_output=True, text=True)
    return out.stdout, out.stderr


def raw(command, truth):
    stdout, _ = run(command)
    fps = float(re.search(r"fps=([0-9.]+)", stdout).group(1))
    values = {key(line.split(" ", 1)[1]) for line in stdout.splitlines() if re.match(r"^\d+ ", line)}
    return fps, values & truth


AGENT_CONVEYOR = ["EAN-13", "EAN-8", "UPC-A", "UPC-E", "CODE-128", "CODE-39", "I2/5", "QR-Code"]


def replay(binary, out, clip, truth, extra, settings):
    config = Path(out) / "raw-engines-agent.json"
    decoder = {"symbologies": AGENT_CONVEYOR + extra, **settings}
    config.write_text(json.dumps({"camera": {"id": "bench"}, "decoder": decoder}))
    stdout, stderr = run([f"{binary}/scan-agent", "replay", clip, "--config", str(config), "--sightings-only"])
    fps = float(re.search(r"([0-9.]+) frames/s, peak", stderr).group(1))
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    values = {key(event["value"]) for event in events if event.get("type") == "sighting"}
    return fps, values & truth


def main():
    binary, out, clips = sys.argv[1], sys.argv[2], sys.argv[3:]
    extra = []
    settings = {}
    if clips[:1] == ["--with"]:
        extra, clips = clips[1].split(","), clips[2:]
    if clips[:1] == ["--decoder"]:
        settings, clips = json.loads(clips[1]), clips[2:]
    formats = ",".join([CONVEYOR_ZXING] + extra)
    for clip in clips:
        labels = [json.loads(line) for line in Path(clip + ".truth").read_text().splitlines() if line.strip()]
        # Labels wholly in view at some time and not torn: those a reader can be asked to read.
        truth = {key(label["value"]) for label in labels if not label.get("torn") and not label.get("partial")}
        runs = {
            "raw zbar": raw([f"{out}/zbar_raw", clip, "--density", "2", "--symbologies", "conveyor", "--values", "1"],
                            truth),
            "raw zxing-cpp tryHarder": raw(
                [f"{out}/zxing_raw", clip, "--formats", formats, "--try-harder", "1", "--values"], truth),
            "raw zxing-cpp fast": raw(
                [f"{out}/zxing_raw", clip, "--formats", formats, "--try-harder", "0", "--values"], truth),
        }
        fps, found = replay(binary, out, clip, truth, extra, settings)
        same = [(engine, r) for engine, r in runs.items() if r[1] >= found]
        if same:
            baseline, (base, _) = max(same, key=lambda item: item[1][0])
            mark = ""
        else:
            baseline, (base, _) = max(runs.items(), key=lambda item: (len(item[1][1]), item[1][0]))
            mark = " (reads fewer)"
        cells = [f"{r[0]:.1f}, {len(r[1])}" for r in runs.values()]
        name = Path(clip).stem + (" (+ " + ", ".join(extra) + ")" if extra else "")
        name += "".join(f", {k} {v}" for k, v in settings.items())
        print(f"| {name} | {len(truth)} | " + " | ".join(cells)
              + f" | {fps:.1f}, {len(found)} | {baseline}{mark} | {fps / base:.2f}× |")


if __name__ == "__main__":
    main()
