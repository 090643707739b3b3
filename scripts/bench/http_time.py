#!/usr/bin/env python3
"""Times GET requests: http_time.py BASE-URL PATH... [--runs N]. One Markdown row a path: the
first (cold) request, the median and the slowest of the next N, and the response's size."""
import argparse
import statistics
import time
import urllib.request

parser = argparse.ArgumentParser()
parser.add_argument("base")
parser.add_argument("paths", nargs="+")
parser.add_argument("--runs", type=int, default=5)
args = parser.parse_args()


def get(url):
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as response:
        body = response.read()
        if response.status != 200:
            raise SystemExit(f"{url}: HTTP {response.status}")
    return (time.perf_counter() - start) * 1000, len(body)


for path in args.paths:
    url = args.base.rstrip("/") + path
    cold, size = get(url)
    warm = [get(url)[0] for _ in range(args.runs)]
    print(f"| `{path}` | {cold:.0f} ms | {statistics.median(warm):.0f} ms | {max(warm):.0f} ms | {size / 1024:.0f} KiB |")
