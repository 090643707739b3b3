#!/usr/bin/env python3
"""The topology of the bench's filled site: CAMERAS lane cameras two a lane, STATIONS pack stations."""
import json
import sys

cameras, stations = int(sys.argv[1]), int(sys.argv[2])
lanes = {}
for c in range(1, cameras + 1):
    lanes.setdefault(f"L{(c + 1) // 2:02d}", []).append({"id": f"cam-{c:02d}"})
for lane in lanes.values():
    for camera in lane[1:]:
        camera["travelSeconds"] = 1.5
print(json.dumps({"version": 1, "sites": [{
    "id": "dc1", "timeZone": "Europe/Zurich",
    "lanes": [{"id": lane, "cameras": members} for lane, members in lanes.items()],
    "stations": [{"id": f"pack-{s:02d}", "cameras": [f"pcam-{s:02d}"]} for s in range(1, stations + 1)],
}]}))
