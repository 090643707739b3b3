#!/usr/bin/env python3
"""Labels at any angle and small modules: scan-agent replay against raw zxing-cpp (tryHarder and
tryRotate, as a reader of turned labels would run it) and raw zbar (rows and columns, density 2)
on every whole frame of the same clips, each pinned to one core, in the same run.

    scripts/bench/angled.py speed BIN OUT CLIP...
    scripts/bench/angled.py modules BIN OUT SCALE... -- SEED...

speed: one Markdown row a clip: labels (wholly in view, not torn), then for each reader frames/s
and labels read, and the replay's frames/s over raw zxing-cpp's. modules: renders `scan-synth
any-angle` (2 px a module) at each SCALE (0.625: 1.25 px a module) for each SEED, with labels at
any angle and with labels square to the frame (`--angles -3-3`), and prints one row a module size
and layout: per symbology, labels read by the replay of labels there (and by the raw engines), and
the replay's no-reads and wrong values. A label counts as read when any sighting (any frame, for
the raw engines) holds its value; a wrong value is a sighting of a value on no label (a label only
ever partly in view may be read, once).
"""
import collections
import json
import re
import subprocess
import sys
from pathlib import Path

FORMATS = "EAN13,EAN8,UPCA,UPCE,Code128,Code39,ITF,QRCode"
SYMBOLOGIES = ["EAN-13", "EAN-8", "UPC-A", "UPC-E", "CODE-128", "CODE-39", "I2/5", "QR-Code"]


def key(value):
    return value.lstrip("0") if value.isdigit() else value


def pinned(command):
    out = subprocess.run(["taskset", "-c", "1"] + command, capture_output=True, text=True)
    return out.stdout, out.stderr


def truth_of(clip):
    return [json.loads(line) for line in Path(clip + ".truth").read_text().splitlines() if line.strip()]


def labels(clip):
    """The truth's labels a reader can be asked to read: wholly in view at some time, not torn."""
    return [t for t in truth_of(clip) if not (t.get("unreadable") or t.get("torn")) and not t.get("partial")]


def on_no_label(clip, sightings):
    """Sightings of a value on no label of the clip (one only ever partly in view may be read)."""
    values = {key(t["value"]) for t in truth_of(clip)}
    return sum(1 for value in sightings if value not in values)


def matrix(clip):
    """A clip with DataMatrix labels is read with DataMatrix on, by zxing-cpp and the agent."""
    return any(t["symbology"] == "DataMatrix" for t in labels(clip))


def raw_zxing(out, clip):
    formats = FORMATS + (",DataMatrix" if matrix(clip) else "")
    stdout, _ = pinned([f"{out}/zxing_raw", clip, "--formats", formats, "--try-harder", "1", "--try-rotate", "1",
                        "--values"])
    fps = float(re.search(r"fps=([0-9.]+)", stdout).group(1))
    return fps, {key(line.split(" ", 1)[1]) for line in stdout.splitlines() if re.match(r"^\d+ ", line)}


def raw_zbar(out, clip):
    stdout, _ = pinned([f"{out}/zbar_raw", clip, "--density", "2", "--symbologies", "conveyor", "--values", "1"])
    fps = float(re.search(r"fps=([0-9.]+)", stdout).group(1))
    return fps, {key(line.split(" ", 1)[1]) for line in stdout.splitlines() if re.match(r"^\d+ ", line)}


def replay(binary, out, clip):
    config = Path(out) / "angled-agent.json"
    symbologies = SYMBOLOGIES + (["DataMatrix"] if matrix(clip) else [])
    config.write_text(json.dumps({"camera": {"id": "bench"}, "decoder": {"symbologies": symbologies}}))
    stdout, stderr = pinned([f"{binary}/scan-agent", "replay", clip, "--config", str(config), "--sightings-only"])
    fps = float(re.search(r"([0-9.]+) frames/s, peak", stderr).group(1))
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    sightings = [key(e["value"]) for e in events if e.get("type") == "sighting"]
    noreads = sum(1 for e in events if e.get("type") == "noread")
    return fps, sightings, noreads


def speed(binary, out, clips):
    for clip in clips:
        truth = {key(t["value"]) for t in labels(clip)}
        zbar_fps, zbar_read = raw_zbar(out, clip)
        zxing_fps, zxing_read = raw_zxing(out, clip)
        fps, sightings, _ = replay(binary, out, clip)
        read = set(sightings) & truth
        wrong = on_no_label(clip, sightings)
        info = Path(clip + ".info").read_text().strip().split(": ", 2)[-1] if Path(clip + ".info").exists() else ""
        print(f"| {Path(clip).stem} ({info}) | {len(truth)} | {zbar_fps:.1f}, {len(zbar_read & truth)} "
              f"| {zxing_fps:.1f}, {len(zxing_read & truth)} | {fps:.1f}, {len(read)} ({wrong} wrong) "
              f"| {fps / zxing_fps:.2f}× |")


def modules(binary, out, scales, seeds):
    for layout, angles in (("any angle", None), ("square (±3°)", "-3-3")):
        for scale in scales:
            totals = collections.Counter()
            for seed in seeds:
                clip = f"{out}/small-{scale}-{'any' if angles is None else 'square'}-s{seed}.y4m"
                if not Path(clip).exists() or not Path(clip + ".truth").exists():
                    command = [f"{binary}/scan-synth", "any-angle", clip, "--frames", "300", "--seed", str(seed),
                               "--scale", str(scale), "--truth", clip + ".truth"]
                    if angles is not None:
                        command += ["--angles", angles]
                    subprocess.run(command, capture_output=True, check=True)
                truth = labels(clip)
                _, zbar_read = raw_zbar(out, clip)
                _, zxing_read = raw_zxing(out, clip)
                _, sightings, noreads = replay(binary, out, clip)
                for label in truth:
                    symbology = label["symbology"]
                    totals[symbology, "labels"] += 1
                    totals[symbology, "read"] += key(label["value"]) in sightings
                    totals[symbology, "zxing"] += key(label["value"]) in zxing_read
                    totals[symbology, "zbar"] += key(label["value"]) in zbar_read
                totals["noreads"] += noreads
                totals["wrong"] += on_no_label(clip, sightings)
            cells = []
            for symbology in ("EAN-13", "CODE-128"):
                n = totals[symbology, "labels"]
                cells.append(f"{totals[symbology, 'read']}/{n} ({100 * totals[symbology, 'read'] / max(1, n):.0f} %)"
                             f" | {totals[symbology, 'zxing']}/{n} | {totals[symbology, 'zbar']}/{n}")
            print(f"| {2 * float(scale):.2f} | {layout} | " + " | ".join(cells)
                  + f" | {totals['noreads']} | {totals['wrong']} |")


def main():
    mode, binary, out = sys.argv[1], sys.argv[2], sys.argv[3]
    rest = sys.argv[4:]
    if mode == "speed":
        speed(binary, out, rest)
    else:
        split = rest.index("--")
        modules(binary, out, rest[:split], rest[split + 1:])


if __name__ == "__main__":
    main()
