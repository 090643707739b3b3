#!/usr/bin/env python3
"""Read rate of `scan-agent decode` on the shared corpus's single-code images, per symbology
group, for both engines together and for each alone (zbar: zbarimg on the same grayscale files;
zxing-cpp alone: the lines `scan-agent decode` attributes to it).

    corpus_rate.py AGENT GRAY_CORPUS CORPUS [--json]

An image counts as read when one reported value equals its expected bytes (NAME.txt or NAME.bin);
every other value it reports is counted as a wrong value.
Folders multi-1 and falsepositives-* are not single-code images and are left out.
"""
import base64
import json
import os
import re
import subprocess
import sys

agent, gray, corpus = sys.argv[1:4]
as_json = "--json" in sys.argv


def expected(folder, pgm):
    stem = re.sub(r"\.[^.]+\.pgm$", "", pgm)
    for ext in ("txt", "bin"):
        path = os.path.join(corpus, "zxing", folder, f"{stem}.{ext}")
        if os.path.exists(path):
            with open(path, "rb") as f:
                return f.read()
    return None


def gtin(value):
    """Retail codes in one form (13 digits; UPC-E expanded), so engines that print UPC
    differently are compared fairly; other values unchanged."""
    if not value.isdigit():
        return value
    text = value.decode()
    if len(text) == 8 and text[0] in "01" and len(text) == 8:
        d = text[1:7]
        body = {"0": d[0:2] + d[5] + "0000" + d[2:5], "1": d[0:2] + d[5] + "0000" + d[2:5],
                "2": d[0:2] + d[5] + "0000" + d[2:5], "3": d[0:3] + "00000" + d[3:5],
                "4": d[0:4] + "00000" + d[4]}.get(d[5], d[0:5] + "0000" + d[5])
        text = "0" + text[0] + body + text[7]
    elif len(text) == 12:
        text = "0" + text
    return text.encode()


def group_of(folder):
    return re.sub(r"-\d+$", "", folder)


groups = {}
second = 0
wrong = []
for folder in sorted(os.listdir(os.path.join(gray, "zxing"))):
    if folder == "multi-1" or folder.startswith("falsepositives"):
        continue
    directory = os.path.join(gray, "zxing", folder)
    images = sorted(f for f in os.listdir(directory) if f.endswith(".pgm"))
    paths = [os.path.join(directory, f) for f in images]
    out = subprocess.run([agent, "decode", *paths], capture_output=True).stdout.decode()
    values = {}
    for line in out.splitlines():
        symbol = json.loads(line)
        raw = base64.b64decode(symbol["value"]) if symbol.get("valueEncoding") == "base64" else symbol["value"].encode()
        values.setdefault(symbol["file"], []).append((raw, symbol["engine"]))
    g = groups.setdefault(group_of(folder), {"images": 0, "both": 0, "zbar": 0, "zxing": 0})
    for image, path in zip(images, paths):
        want = expected(folder, image)
        if want is None:
            continue
        retail = group_of(folder) in ("ean13", "ean8", "upca", "upce")
        if retail:
            want = gtin(want)
        g["images"] += 1
        found = [(gtin(v) if retail else v, e) for v, e in values.get(path, [])]
        if any(v == want for v, _ in found):
            g["both"] += 1
        wrong += [f"{folder}/{image}" for v, _ in found if v != want]
        if any(v == want and "zxing" in e and "second look" not in e for v, e in found):
            g["zxing"] += 1
        if any(v == want and "second look" in e for v, e in found):
            second += 1
        zbarimg = subprocess.run(["zbarimg", "-q", "--raw", "--nodbus", path], capture_output=True).stdout
        # --raw prints each symbol's data followed by a newline; a value may itself hold newlines.
        lines = [gtin(v) if retail else v for v in zbarimg.split(b"\n")]
        if want in lines or (want + b"\n") in zbarimg:
            g["zbar"] += 1

total = {k: sum(g[k] for g in groups.values()) for k in ("images", "both", "zbar", "zxing")}
total["secondLook"] = second
total["wrongValues"] = len(wrong)
if as_json:
    print(json.dumps({"groups": groups, "total": total}))
else:
    def pct(n, d):
        return f"{n} ({100 * n / d:.0f} %)" if d else "0"
    print("| symbology group | images | zbar alone | zxing-cpp alone | scan-agent decode (both) |")
    print("|---|---|---|---|---|")
    for name, g in groups.items():
        print(f"| {name} | {g['images']} | {pct(g['zbar'], g['images'])} | {pct(g['zxing'], g['images'])} | {pct(g['both'], g['images'])} |")
    print(f"| **all** | {total['images']} | {pct(total['zbar'], total['images'])} | {pct(total['zxing'], total['images'])} | {pct(total['both'], total['images'])} |")
    print()
    print(f"Of these, {second} were read by the second look alone (the first look read nothing there).")
    print()
    print(f"Values printed that are not the image's expected one: {len(wrong)} ({', '.join(sorted(set(wrong))) or 'none'};"
          " `CorpusDecodeTests.knownWrongValues` says why each stays).")
