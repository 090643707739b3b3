#!/usr/bin/env python3
"""No-read accounting of a replay against scan-synth's ground truth.

Every label wholly in view should end as exactly one sighting or one no-read. By counts (events
do not say which label they are): labels, read (sightings that match a label, at most once
each), counted twice (further sightings of a label's value), no-reads, silent (labels that are
neither read nor a no-read), extra (more reads and no-reads than labels), expected no-reads
(torn labels). Prints them separated by spaces.
"""
import collections
import json
import sys

truth = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
events = [json.loads(line) for line in open(sys.argv[2]) if line.strip()]
whole = [t for t in truth if not t["partial"]]
readable = collections.Counter(t["value"] for t in whole if not (t.get("unreadable") or t.get("torn")))
reported = collections.Counter(e["value"] for e in events if e.get("type") == "sighting")
read = sum(min(n, reported[v]) for v, n in readable.items())
twice = sum(max(0, reported[v] - n) for v, n in readable.items())
noreads = sum(1 for e in events if e.get("type") == "noread")
labels = len(whole)
silent = max(0, labels - read - noreads)
extra = max(0, read + noreads - labels)
torn = sum(1 for t in whole if (t.get("unreadable") or t.get("torn")))
print(labels, read, twice, noreads, silent, extra, torn)
