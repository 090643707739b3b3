#!/usr/bin/env python3
"""Draws the main figures of a `make bench` report as SVG bar charts.

    scripts/bench/plot.py REPORT.md OUTDIR

REPORT.md is the Markdown `make bench` prints (BENCHMARKS.md holds the latest); each chart is read
from the table under its section heading, so the plots always show the report's own figures:

    bench-replay.svg   replay frames/s against raw zbar on the same clips (one core each)
    bench-matrix.svg   the 1080p matrix-scan scene: each decoder against raw zbar
    bench-corpus.svg   the corpus read rate per symbology group: zbar, zxing-cpp, both

Plain SVG, no library: horizontal grouped bars, a value at the end of each bar. A section that is
missing from the report is an error (exit 1), so a renamed heading is noticed.
"""
import re
import sys
from pathlib import Path
from xml.sax.saxutils import escape

COLOURS = ["#9aa5b1", "#52606d", "#2680c2", "#e12d39"]


def table(report, heading):
    """The first Markdown table after the section whose heading starts with `heading`: header, rows."""
    lines = report.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("#") and heading in line), None)
    if start is None:
        sys.exit(f"plot: no section '{heading}' in the report")
    rows = []
    for line in lines[start + 1:]:
        if line.startswith("#"):
            break
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif rows:
            break
    if len(rows) < 3:
        sys.exit(f"plot: no table under '{heading}'")
    return rows[0], [row for row in rows[2:]]


def number(cell):
    """The first number in a cell: '232.6' -> 232.6, '12 (80 %)' -> 12, '**all**' -> None."""
    match = re.search(r"-?\d+(?:\.\d+)?", cell.replace(",", ""))
    return float(match.group()) if match else None


def percent(cell):
    match = re.search(r"\((\d+(?:\.\d+)?) %\)", cell)
    return float(match.group(1)) if match else None


def chart(title, unit, groups, series, note=""):
    """groups: [(label, [value per series])]; series: names. Returns the SVG text."""
    label_width, bar_width, bar_height, gap = 230, 420, 13, 10
    top = 58 + 18 * ((len(series) + 1) // 2)
    height = top + sum(sum(1 for v in values if v is not None) * bar_height + gap for _, values in groups) + 40
    top_value = max((v for _, values in groups for v in values if v is not None), default=1) or 1
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{label_width + bar_width + 90}" height="{height}" '
        f'font-family="DejaVu Sans, sans-serif" font-size="11">',
        f'<rect width="100%" height="100%" fill="white"/>',
        f'<text x="10" y="20" font-size="14" font-weight="bold">{escape(title)}</text>',
    ]
    for index, name in enumerate(series):
        x = 10 + (index % 2) * 330
        y = 36 + (index // 2) * 18
        out.append(f'<rect x="{x}" y="{y}" width="12" height="12" fill="{COLOURS[index % len(COLOURS)]}"/>')
        out.append(f'<text x="{x + 18}" y="{y + 10}">{escape(name)}</text>')
    y = top
    for label, values in groups:
        block = sum(1 for value in values if value is not None) * bar_height
        out.append(
            f'<text x="{label_width - 8}" y="{y + block / 2 + 4:.1f}" text-anchor="end">{escape(label)}</text>')
        for index, value in enumerate(values):
            if value is None:
                continue
            width = max(1.0, bar_width * value / top_value)
            out.append(
                f'<rect x="{label_width}" y="{y}" width="{width:.1f}" height="{bar_height - 2}" '
                f'fill="{COLOURS[index % len(COLOURS)]}"><title>{escape(f"{label}, {series[index]}: {value:g} {unit}")}'
                f'</title></rect>')
            out.append(f'<text x="{label_width + width + 4:.1f}" y="{y + bar_height - 3}">{value:g}</text>')
            y += bar_height
        y += gap
    out.append(f'<text x="{label_width}" y="{height - 22}" fill="#52606d">{escape(unit)}{escape(note)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def replay(report):
    header, rows = table(report, "Replay throughput vs raw zbar")
    columns = ["raw zbar defaults fps", "raw zbar same settings fps", "scan-agent replay fps"]
    indices = [header.index(name) for name in columns]
    groups = [(f"{row[0]}, {row[1]} codes in view", [number(row[i]) for i in indices]) for row in rows]
    return chart(
        "Replay against raw zbar on the same frames (one core each)", "frames/s", groups,
        ["raw zbar, its defaults", "raw zbar, the agent's settings", "scan-agent replay (guided)"],
        "  (scan-synth flow, 120 frames a clip)")


def matrix(report):
    header, rows = table(report, "Real-time matrix scan")
    references = [(re.search(r"raw zbar [^(]*", cell).group().strip(), number(cell.split("(")[1]))
                  for cell in header if cell.startswith("/ raw zbar") and "(" in cell]
    groups = [(name, [value, None]) for name, value in references]
    groups += [
        (f"scan-agent {row[0]}, " + ("one core" if row[1] == "1" else f"{row[1]} threads"), [None, number(row[2])])
        for row in rows
    ]
    return chart(
        "1920x1080, about 20 codes in view (scan-synth hd-rows)", "frames/s", groups,
        ["raw zbar, one core", "scan-agent replay"], "  (the real-time target: 30)")


def corpus(report):
    header, rows = table(report, "corpus read rate")
    groups = [(row[0].strip("*"), [percent(cell) for cell in row[2:5]]) for row in rows]
    return chart(
        "Shared corpus: single-code images read, per symbology group", "% read", groups,
        ["zbar alone", "zxing-cpp alone", "scan-agent decode (both)"])


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plot.py REPORT.md OUTDIR")
    report = Path(sys.argv[1]).read_text(encoding="utf-8")
    out = Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for name, draw in [("bench-replay.svg", replay), ("bench-matrix.svg", matrix), ("bench-corpus.svg", corpus)]:
        (out / name).write_text(draw(report), encoding="utf-8")
        print(f"plot: {out / name}")


if __name__ == "__main__":
    main()
