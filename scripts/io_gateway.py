#!/usr/bin/env python3
"""An I/O gateway's side of the divert decisions, as a PLC bridge would be written with the
public nats-py client: subscribe to scantrack.v1.decision.<site>.<lane> (core NATS, the lowest
latency), check each decision against its JSON schema (from docs/asyncapi.yaml) and its subject,
and measure the latency from the frame that closed the parcel (closedAt) to the decision's
arrival here. Watches scantrack.v1.reading.<site>.* too: a lane that is not being read is named.

    io_gateway.py [--nats URL (default: $SCANTRACK_NATS, then $NATS_URL)] [--prefix scantrack] [--site dc1] [--lane L1] [--expect N]
                  [--idle 5] [--timeout 120] [--ready FILE]

--ready FILE is written once subscribed (start the agent after it appears). Stops after --expect
decisions, or --idle seconds without one after the first, or --timeout. Prints one JSON line:
decisions, pass, divert, reasons, late, the latency in ms (p50, p99, max) and the problems; exits
0 when every decision was valid, none arrived twice and (with --expect) exactly N arrived.
"""
import argparse
import asyncio
import json
import os
import sys
import time
from datetime import datetime

import nats

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wms_consumer import contract, load  # noqa: E402  (the same reading of docs/asyncapi.yaml)


EPOCH = datetime(1970, 1, 1)


def millis(text):
    """An RFC 3339 UTC time with milliseconds (the contract's form) as milliseconds since 1970."""
    return (datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ") - EPOCH).total_seconds() * 1000


def quantile(values, q):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    # As the programs and wms_consumer.py: SCANTRACK_NATS, then NATS_URL, then the local server.
    parser.add_argument(
        "--nats", default=os.environ.get("SCANTRACK_NATS") or os.environ.get("NATS_URL") or "nats://127.0.0.1:4222")
    parser.add_argument("--prefix", default="scantrack")
    parser.add_argument("--site", default="*")
    parser.add_argument("--lane", default="*")
    parser.add_argument("--expect", type=int)
    parser.add_argument("--idle", type=float, default=5.0)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--ready", metavar="FILE")
    args = parser.parse_args()
    validators, _ = load(contract(), ["decision", "reading"])

    arrivals = []  # (arrival ms, subject, bytes), recorded in the callback: nothing else there
    blind = {}
    done = asyncio.Event()

    async def on_decision(msg):
        arrivals.append((time.time() * 1000, msg.subject, msg.data))
        if args.expect is not None and len(arrivals) >= args.expect:
            done.set()

    async def on_reading(msg):
        # The camera is the one whose subject this came on (<prefix>.v1.reading.<site>.<camera>),
        # which NATS lets only that camera publish; the body's own "camera" could name any other.
        camera = msg.subject.rsplit(".", 1)[-1]
        try:
            event = json.loads(msg.data)
        except ValueError:
            return
        if isinstance(event, dict):
            blind[camera] = event.get("type") == "reading.paused"

    nc = await nats.connect(args.nats, inbox_prefix=b"_INBOX.gateway")
    await nc.subscribe(f"{args.prefix}.v1.decision.{args.site}.{args.lane}", cb=on_decision)
    await nc.subscribe(f"{args.prefix}.v1.reading.{args.site}.*", cb=on_reading)
    await nc.flush()
    if args.ready:
        with open(args.ready, "w") as f:
            f.write("subscribed\n")
    started = time.monotonic()
    while not done.is_set() and time.monotonic() - started < args.timeout:
        count = len(arrivals)
        try:
            await asyncio.wait_for(done.wait(), timeout=args.idle)
        except asyncio.TimeoutError:
            if count and len(arrivals) == count:
                break
    await nc.close()

    problems, latencies, since_read, seen = [], [], [], set()
    summary = {"decisions": 0, "pass": 0, "divert": 0, "late": 0, "reasons": {}}
    for arrived, subject, data in arrivals:
        try:
            event = json.loads(data)
        except ValueError as error:
            problems.append(f"{subject}: not JSON: {error}")
            continue
        for error in validators["decision"].iter_errors(event):
            problems.append(f"{subject} {event.get('eventId')}: {error.message}")
        tokens = subject.split(".")
        if len(tokens) != 5 or tokens[3] != event.get("site") or tokens[4] != event.get("lane"):
            problems.append(f"{subject}: subject does not match site/lane {event.get('site')}/{event.get('lane')}")
        if event.get("eventId") in seen:
            problems.append(f"{subject}: {event.get('eventId')} arrived twice")
        seen.add(event.get("eventId"))
        summary["decisions"] += 1
        summary[event.get("action", "?")] = summary.get(event.get("action", "?"), 0) + 1
        summary["late"] += 1 if event.get("late") else 0
        for reason in event.get("reasons", []):
            summary["reasons"][reason] = summary["reasons"].get(reason, 0) + 1
        try:
            latencies.append(arrived - millis(event["closedAt"]))
            since_read.append(arrived - millis(event["lastSeen"]))
        except (KeyError, ValueError):
            pass
    # From the frame that closed the parcel (the deadline's origin), and from its last read
    # (that plus the frames the agent waits to be sure the parcel has left).
    summary["latencyMs"] = {"p50": quantile(latencies, 0.5), "p99": quantile(latencies, 0.99),
                            "max": max(latencies) if latencies else None}
    summary["sinceLastReadMs"] = {"p50": quantile(since_read, 0.5), "p99": quantile(since_read, 0.99)}
    summary["blindCameras"] = sorted(camera for camera, paused in blind.items() if paused)
    ok = not problems and (args.expect is None or summary["decisions"] == args.expect)
    print(json.dumps({**summary, "problems": problems[:20], "ok": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
