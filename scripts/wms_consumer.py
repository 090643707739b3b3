#!/usr/bin/env python3
"""A downstream consumer written as a WMS team would write it, with the public nats-py client:
bind a durable JetStream pull consumer to the agents' stream (which holds the agents' events while the
topology names no camera; once it does, each camera's own stream is the aggregator's work queue and a
reader subscribes live, docs/integration.md), read sightings, session events and no-reads
on the documented subjects, and check each against the documented JSON schema. Which schema and
which subject tokens belong to each subject come from the AsyncAPI document (docs/asyncapi.yaml),
so the checks fail when that document and the running code disagree; the NATS headers a message
carries (Nats-Msg-Id, traceparent) are checked against its traits there too, and --traces FILE
writes each message's traceparent. With --results it reads the aggregator's item passes and pack records instead; with --live it
listens to the core NATS track events and heartbeats (what live viewers use) and checks those.

    wms_consumer.py --nats URL --prefix scantrack [--results | --live] [--idle 3] [--expect N] [--traces FILE]
    wms_consumer.py --nats URL --prefix scantrack --order ORDER.json [--await-pack SECONDS]

With --order it plays the WMS's other half: it publishes an order (checked against its schema
first), reads the aggregator's answer on scantrack.v1.orderack.<site>, and, with --await-pack, the
verdict of the pack record made for the order.

Prints one JSON summary line; exits 0 when every message is valid (and, with --expect, when
exactly N distinct sightings, or with --results item passes, arrived), 1 otherwise.
"""
import argparse
import asyncio
import json
import os
import sys

import jsonschema
import nats
import yaml
from nats.js.api import ConsumerConfig, AckPolicy, DeliverPolicy

HERE = os.path.dirname(os.path.abspath(__file__))
ASYNCAPI = os.path.join(HERE, "..", "docs", "asyncapi.yaml")


def contract(path=ASYNCAPI):
    """{family: (validator, name of the last subject token)} for every event subject of the form
    scantrack.v1.<family>.{site}.{place} in the AsyncAPI document. Every reference in the document
    must resolve (local ones to a node, file ones to a valid JSON Schema)."""
    try:
        with open(path) as f:
            doc = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as error:
        raise SystemExit(f"{path}: {error}")
    if not isinstance(doc, dict) or not str(doc.get("asyncapi", "")).startswith("3."):
        raise SystemExit(f"{path}: not an AsyncAPI 3 document")
    folder = os.path.dirname(os.path.abspath(path))
    loaded = {}  # schema files by reference: walk() reads each once, the channels below reuse it

    def resolve(ref):
        if ref.startswith("#/"):
            node = doc
            for key in ref[2:].split("/"):
                if not isinstance(node, dict) or key not in node:
                    raise SystemExit(f"{path}: reference {ref} does not resolve")
                node = node[key]
            return node
        if ref not in loaded:
            try:
                with open(os.path.join(folder, ref)) as f:
                    loaded[ref] = json.load(f)
                jsonschema.Draft202012Validator.check_schema(loaded[ref])
            except (OSError, ValueError, jsonschema.SchemaError) as error:
                raise SystemExit(f"{path}: reference {ref}: {error}")
        return loaded[ref]

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                resolve(node["$ref"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(doc)
    families = {}
    for name, channel in doc["channels"].items():
        tokens = (channel.get("address") or "").split(".")
        # scantrack.v1.<family>.{site}.{place}, or scantrack.v1.<family>.{site} (orders and their
        # answers: no place token).
        if len(tokens) not in (4, 5) or tokens[1] != "v1" or tokens[3] != "{site}":
            continue
        for message in channel["messages"].values():
            described = resolve(message["$ref"])
            schema = resolve(described["payload"]["schema"]["$ref"])
            # The NATS headers its traits document (Nats-Msg-Id, traceparent), checked when present.
            headers = {}
            for trait in described.get("traits", []):
                headers.update(resolve(trait["$ref"]).get("headers", {}).get("properties", {}))
            families[tokens[2]] = (
                jsonschema.Draft202012Validator(schema), tokens[4].strip("{}") if len(tokens) == 5 else "",
                jsonschema.Draft202012Validator({"type": "object", "properties": headers}))
    return families


def load(families, names):
    missing = [name for name in names if name not in families]
    if missing:
        raise SystemExit(f"{ASYNCAPI}: no channel for {', '.join(missing)}")
    return {name: families[name][0] for name in names}, {name: families[name][1] for name in names}


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--nats", default=os.environ.get("SCANTRACK_NATS") or os.environ.get("NATS_URL") or "nats://127.0.0.1:4222")
    parser.add_argument("--prefix", default="scantrack")
    parser.add_argument("--idle", type=float, default=3.0, help="stop after this many seconds without a message")
    parser.add_argument("--expect", type=int, help="exact number of distinct sightings (items with --results) expected")
    parser.add_argument("--results", action="store_true", help="read item passes and pack records from the aggregator")
    parser.add_argument("--traces", metavar="FILE",
                        help="write each message's subject, eventId and traceparent header to FILE, a JSON line each")
    parser.add_argument("--live", action="store_true",
                        help="check live track events and heartbeats (core NATS) until --idle seconds pass without one")
    parser.add_argument("--order", metavar="FILE",
                        help="publish the order in FILE (order.schema.json) to scantrack.v1.order.<site>, print the "
                             "aggregator's answer, and with --await-pack the verdict of the first pack record for it")
    parser.add_argument("--await-pack", type=float, metavar="SECONDS", default=0,
                        help="with --order: wait this long for a pack record of the order")
    parser.add_argument("--check-asyncapi", metavar="PATH", nargs="?", const=ASYNCAPI,
                        help="only check the AsyncAPI document (every reference resolves) and print its event subjects")
    args = parser.parse_args()
    if args.check_asyncapi:
        families = contract(args.check_asyncapi)
        print(json.dumps({"subjects": {family: place for family, (_, place, _) in sorted(families.items())}, "ok": True}))
        return 0
    families = contract()
    if args.live:
        return await live(args, families)

    if args.order:
        return await order(args, families)
    if args.results:
        # The last subject token names the lane of an item, the station of a pack; an answer to an
        # order has the site only.
        validators, place = load(families, ["item", "pack", "parcelpass", "coded", "orderack"])
        stream = args.prefix.upper().replace(".", "_") + "_RESULTS"
    else:
        validators, place = load(families, ["sighting", "session", "noread", "reading", "parcel", "decision"])
        stream = args.prefix.upper().replace(".", "_") + "_AGENT"
    nc = await nats.connect(args.nats)
    js = nc.jetstream()
    sub = await js.pull_subscribe(
        f"{args.prefix}.v1.>", durable="wms-check", stream=stream,
        config=ConsumerConfig(ack_policy=AckPolicy.EXPLICIT, deliver_policy=DeliverPolicy.ALL))

    seen, problems, counts = set(), [], {family: 0 for family in validators}
    traces = open(args.traces, "w") if args.traces else None
    while True:
        try:
            messages = await sub.fetch(100, timeout=args.idle)
        except nats.errors.TimeoutError:
            break
        for msg in messages:
            tokens = msg.subject.split(".")
            where = msg.subject
            try:
                event = json.loads(msg.data)
            except ValueError as error:
                problems.append(f"{where}: not JSON: {error}")
                await msg.ack()
                continue
            family = tokens[2] if len(tokens) in (4, 5) and tokens[1] == "v1" else None
            if family not in validators or len(tokens) != (5 if place[family] else 4):
                problems.append(f"{where}: not a documented subject")
            else:
                counts[family] += 1
                for error in validators[family].iter_errors(event):
                    problems.append(f"{where} {event.get('eventId')}: {error.message}")
                where_to = place[family]
                if tokens[3] != event.get("site") or (where_to and tokens[4] != event.get(where_to)):
                    problems.append(f"{where}: subject does not match site/{where_to} {event.get('site')}/{event.get(where_to)}")
                # Agents' message ids are the subject and the event id; the aggregator's the event id.
                expected_id = event.get("eventId") if family in ("item", "pack", "parcelpass", "coded", "orderack") else f"{msg.subject}/{event.get('eventId')}"
                if (msg.headers or {}).get("Nats-Msg-Id") != expected_id:
                    problems.append(f"{where}: Nats-Msg-Id {(msg.headers or {}).get('Nats-Msg-Id')} != {expected_id}")
                headers = dict(msg.headers or {})
                for error in families[family][2].iter_errors(headers):
                    problems.append(f"{where} {event.get('eventId')}: header {error.message}")
                if traces:
                    traces.write(json.dumps({"subject": msg.subject, "eventId": event.get("eventId"),
                                             "traceparent": headers.get("traceparent")}) + "\n")
                if event.get("eventId") in seen:
                    problems.append(f"{where}: eventId {event.get('eventId')} delivered twice")
                seen.add(event.get("eventId"))
            await msg.ack()
    await nc.close()
    if traces:
        traces.close()

    counted = counts["item"] if args.results else counts["sighting"]
    ok = not problems and (args.expect is None or counted == args.expect)
    if args.results:
        summary = {"items": counts["item"], "packs": counts["pack"], "parcelPasses": counts["parcelpass"],
                   "coded": counts["coded"], "orderAnswers": counts["orderack"]}
    else:
        summary = {"sightings": counts["sighting"], "sessionEvents": counts["session"], "noReads": counts["noread"],
                   "readingEvents": counts["reading"], "parcels": counts["parcel"], "decisions": counts["decision"]}
    print(json.dumps({**summary, "problems": problems[:20], "ok": ok}))
    return 0 if ok else 1


async def order(args, families):
    """Publishes one order, waits for its answer and (optionally) its pack record."""
    validators, _ = load(families, ["order", "orderack", "pack"])
    try:
        with open(args.order) as f:
            body = json.load(f)
    except (OSError, ValueError) as error:
        raise SystemExit(f"{args.order}: {error}")
    problems = [f"order: {error.message}" for error in validators["order"].iter_errors(body)]
    if problems:
        print(json.dumps({"problems": problems[:20], "ok": False}))
        return 1
    nc = await nats.connect(args.nats)
    js = nc.jetstream()
    stem = args.prefix.upper().replace(".", "_")
    site, order_id = body["site"], body["orderId"]
    # Answers and packs from now on, on one ephemeral consumer of the results stream.
    sub = await js.pull_subscribe(
        f"{args.prefix}.v1.>", stream=f"{stem}_RESULTS",
        config=ConsumerConfig(ack_policy=AckPolicy.EXPLICIT, deliver_policy=DeliverPolicy.NEW))
    ack = await js.publish(f"{args.prefix}.v1.order.{site}", json.dumps(body).encode(),
                           headers={"Nats-Msg-Id": f"{order_id}.r{body['revision']}"})
    answer, pack, deadline = None, None, asyncio.get_running_loop().time() + 30 + args.await_pack
    while asyncio.get_running_loop().time() < deadline and (answer is None or (args.await_pack and pack is None)):
        try:
            messages = await sub.fetch(20, timeout=1)
        except nats.errors.TimeoutError:
            continue
        for msg in messages:
            await msg.ack()
            event = json.loads(msg.data)
            family = msg.subject.split(".")[2]
            if family == "orderack" and event.get("sequence") == ack.seq:
                problems += [f"orderack: {e.message}" for e in validators["orderack"].iter_errors(event)]
                answer = event
            elif family == "pack" and event.get("orderId") == order_id:
                problems += [f"pack: {e.message}" for e in validators["pack"].iter_errors(event)]
                pack = pack or event
    await nc.close()
    if answer is None:
        problems.append("no answer to the order")
    if args.await_pack and pack is None:
        problems.append(f"no pack record for {order_id}")
    summary = {"orderId": order_id, "sequence": ack.seq, "answer": answer,
               "packVerdict": pack and pack.get("verdict"), "packLines": pack and pack.get("lines")}
    print(json.dumps({**summary, "problems": problems[:20], "ok": not problems}))
    return 0 if not problems else 1


async def live(args, families):
    """Core NATS: what is published while we listen. Waits up to a minute for the first message."""
    validators, place = load(families, ["track", "status"])
    nc = await nats.connect(args.nats)
    queue = asyncio.Queue()

    async def received(msg):
        await queue.put(msg)

    for family in validators:
        await nc.subscribe(f"{args.prefix}.v1.{family}.>", cb=received)
    await nc.flush()
    print(json.dumps({"listening": True}), flush=True)  # the caller may start the agent now
    problems, counts, wait = [], {family: 0 for family in validators}, 60.0
    while True:
        try:
            msg = await asyncio.wait_for(queue.get(), timeout=wait)
        except asyncio.TimeoutError:
            break
        wait = args.idle
        tokens = msg.subject.split(".")
        family = tokens[2]
        try:
            event = json.loads(msg.data)
        except ValueError as error:
            problems.append(f"{msg.subject}: not JSON: {error}")
            continue
        counts[family] += 1
        for error in validators[family].iter_errors(event):
            problems.append(f"{msg.subject} {event.get('eventId')}: {error.message}")
        where_to = place[family]
        if len(tokens) != 5 or tokens[3] != event.get("site") or tokens[4] != event.get(where_to):
            problems.append(f"{msg.subject}: subject does not match site/{where_to} {event.get('site')}/{event.get(where_to)}")
    await nc.close()
    ok = not problems and counts["track"] > 0 and counts["status"] > 0
    print(json.dumps({"trackEvents": counts["track"], "heartbeats": counts["status"], "problems": problems[:20], "ok": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
