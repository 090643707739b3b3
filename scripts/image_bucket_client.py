#!/usr/bin/env python3
"""Reads pictures from the images bucket with nats-py's own object store client.

The interop check of docs/integration.md, "Images": the agents write their pictures' chunks and
the aggregator their descriptions in NATS's object-store layout, and a client that knows nothing
of ScanTrack reads them. For each --name, `get` fetches the object (nats-py checks its SHA-256
digest against the description) and the JPEG is written to --out/<n>.jpg; `list` shows which of
the names the bucket lists.

Prints one JSON object on stdout: {"objects": {name: {"size", "sha256", "file", "nuid",
"description"}}, "listed": [names also in the bucket's list], "missing": {name: error}}.
"""
import argparse
import asyncio
import hashlib
import json
import os
import sys

import nats
from nats.js.errors import ObjectNotFoundError

BUCKET = "SCANTRACK_IMAGES"


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--nats", default="nats://127.0.0.1:4222")
    parser.add_argument("--name", action="append", default=[])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    connection = await nats.connect(args.nats)
    store = await connection.jetstream().object_store(BUCKET)
    result = {"objects": {}, "listed": [], "missing": {}}
    for index, name in enumerate(args.name):
        try:
            got = await store.get(name)
        except (ObjectNotFoundError, Exception) as error:  # a digest mismatch too
            result["missing"][name] = f"{type(error).__name__}: {error}"
            continue
        path = os.path.join(args.out, f"{index}.jpg")
        with open(path, "wb") as file:
            file.write(got.data)
        result["objects"][name] = {
            "size": len(got.data), "sha256": hashlib.sha256(got.data).hexdigest(), "file": path,
            "nuid": got.info.nuid, "description": got.info.description,
        }
    wanted = set(args.name)
    for info in await store.list():
        if info.name in wanted:
            result["listed"].append(info.name)
    await connection.close()
    json.dump(result, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    asyncio.run(main())
