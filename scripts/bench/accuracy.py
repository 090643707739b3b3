#!/usr/bin/env python3
"""Compares a replay's sightings with scan-synth's ground truth.

Prints: codes-wholly-in-view missed duplicates phantoms
"""
import collections
import json
import sys

truth = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
truth = [t for t in truth if not (t.get("unreadable") or t.get("torn"))]  # torn labels are no-reads (noreads.py)
events = [json.loads(line) for line in open(sys.argv[2]) if line.strip()]
reported = collections.Counter(e["value"] for e in events if e.get("type") == "sighting")
whole = collections.Counter(t["value"] for t in truth if not t["partial"])
partial = collections.Counter(t["value"] for t in truth if t["partial"])
missed = sum(max(0, n - reported[v]) for v, n in whole.items())
duplicates = sum(max(0, reported[v] - whole[v] - partial[v]) for v in reported if whole[v] + partial[v] > 0)
phantoms = sum(n for v, n in reported.items() if whole[v] + partial[v] == 0)
print(sum(whole.values()), missed, duplicates, phantoms)
