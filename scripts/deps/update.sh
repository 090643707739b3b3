#!/usr/bin/env bash
# Moves ScanTrack's Swift dependencies deliberately (make deps-update): resolves the newest versions
# the manifest's packages allow within their major version, pins the direct ones with `exact:` in
# Package.swift, writes every package's version (the transitive ones too) to scripts/deps/pins.txt,
# and prints what moved. Without --apply it only prints what would move. make test fails while the
# build resolves anything else than pins.txt says (DependencyPinTests), so a move is always a
# reviewed commit of Package.swift and pins.txt, never a surprise of the day's registry.
#   scripts/deps/update.sh [--apply]
set -euo pipefail
cd "$(dirname "$0")/../.."
apply=false
[ "${1:-}" = "--apply" ] && apply=true

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A copy of the manifest with every exact pin opened to its major version (`from:`), resolved apart.
cp Package.swift "$work/"
mkdir -p "$work/Sources" "$work/Tests"
sed -E -i 's/exact: "([0-9]+\.[0-9]+\.[0-9]+)"/from: "\1"/' "$work/Package.swift"
# Only the manifest's dependencies matter for resolving: give it the source folders it names.
cp -r Sources "$work/" 2>/dev/null
cp -r Tests "$work/" 2>/dev/null
if ! (cd "$work" && swift package resolve >"$work/resolve.log" 2>&1); then
  cat "$work/resolve.log" >&2
  exit 1
fi
python3 - "$work/Package.resolved" "$apply" <<'PY'
import json, re, sys
resolved, apply = sys.argv[1], sys.argv[2] == "true"
pins = {p["identity"]: p["state"].get("version") for p in json.load(open(resolved))["pins"]}
old = {}
for line in open("scripts/deps/pins.txt"):
    line = line.split("#")[0].strip()
    if line:
        name, version = line.split()
        old[name] = version
moved = [(n, old.get(n), v) for n, v in sorted(pins.items()) if old.get(n) != v]
gone = [n for n in old if n not in pins]
for name, was, now in moved:
    print(f"deps: {name} {was or '(new)'} -> {now}")
for name in gone:
    print(f"deps: {name} {old[name]} -> (no longer needed)")
if not moved and not gone:
    print("deps: every package is at the newest version its major version allows")
if apply:
    manifest = open("Package.swift").read()
    def pin(match):
        url, version = match.group(1), match.group(2)
        name = url.rstrip("/").split("/")[-1].removesuffix(".git").lower()
        return f'.package(url: "{url}", exact: "{pins.get(name, version)}"'
    manifest = re.sub(r'\.package\(url: "([^"]+)", exact: "([0-9.]+)"', pin, manifest)
    open("Package.swift", "w").write(manifest)
    with open("scripts/deps/pins.txt", "w") as out:
        out.write("# Every Swift package the build resolves, and its version (scripts/deps/update.sh writes it).\n")
        for name, version in sorted(pins.items()):
            out.write(f"{name} {version}\n")
    print("deps: Package.swift and scripts/deps/pins.txt updated; build, test and commit them")
PY
