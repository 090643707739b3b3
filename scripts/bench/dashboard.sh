#!/usr/bin/env bash
# The dashboard against a filled site: BENCH_FILL_DAYS (30) days of 20 lane cameras on 10 lanes and
# 4 pack stations (scripts/bench/fill.sql), in a database of its own on the bench's PostgreSQL.
# Run by scripts/bench.sh (make bench), or alone: scripts/with-servers.sh bench scripts/bench/dashboard.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$here"
bin="${1:-$(swift build -c release --show-bin-path)}"
out=".cache/bench"
mkdir -p "$out"
days="${BENCH_FILL_DAYS:-30}"
per_camera=16667   # sightings a camera a day: 10M in 30 days for 20 cameras
fill_pg="$SCANTRACK_PG dbname=scantrack_fill"
psql "$SCANTRACK_PG" -q -c "DROP DATABASE IF EXISTS scantrack_fill" -c "CREATE DATABASE scantrack_fill" 2>/dev/null
SCANTRACK_PG="$fill_pg" "$bin/scanadmin" migrate > /dev/null
python3 scripts/bench/fill-topology.py 20 4 > "$out/fill-topology.json"
SCANTRACK_PG="$fill_pg" "$bin/scanadmin" topology load "$out/fill-topology.json" > /dev/null
started=$(date +%s)
psql "$fill_pg" -q -v days="$days" -v cameras=20 -v stations=4 -v per_camera=$per_camera -v packs=1500 \
  -f scripts/bench/fill.sql
filled=$(( $(date +%s) - started ))
read -r sightings heartbeats passes noreads packs size < <(psql "$fill_pg" -At -F ' ' -c "
  SELECT (SELECT count(*) FROM sightings), (SELECT count(*) FROM heartbeats), (SELECT count(*) FROM item_passes),
         (SELECT count(*) FROM noreads), (SELECT count(*) FROM pack_records),
         replace(pg_size_pretty(pg_database_size(current_database())), ' ', '')")

SCANTRACK_PG="$fill_pg" "$bin/scanadmin" serve --listen 127.0.0.1:0 > "$out/serve.out" 2> "$out/serve.log" &
serve=$!
trap 'kill $serve 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do grep -q "^dashboard: " "$out/serve.out" && break; sleep 0.1; done
url=$(sed -n 's/^dashboard: //p' "$out/serve.out")
pack=$(psql "$fill_pg" -At -c "SELECT session_id FROM pack_records ORDER BY completed_at DESC LIMIT 1")
report_ms() {  # the report of the current shift, as the page shows it (median of 3)
  for _ in 1 2 3; do
    local s; s=$(date +%s%N)
    SCANTRACK_PG="$fill_pg" "$bin/scanadmin" report --shift current "$@" > /dev/null
    echo $(( ($(date +%s%N) - s) / 1000000 ))
  done | sort -n | sed -n 2p
}

echo "## Dashboard on $days days of 20 cameras"
echo
echo "Command: \`make bench\` (or \`scripts/with-servers.sh bench scripts/bench/dashboard.sh\`; $(nproc) cores,"
echo "$(date -u +%Y-%m-%d)). \`scripts/bench/fill.sql\` fills a database with $days days ending now: 20 lane cameras"
echo "on 10 lanes and 4 pack stations, $sightings sightings, $heartbeats heartbeats (every 5 s), $passes item passes,"
echo "$noreads no-reads (without pictures), $packs pack records; $size on disk; filled in $filled s."
echo "PostgreSQL 15 as \`make bench\` starts it (fsync off). The release \`scanadmin serve\` on loopback; each page"
echo "requested once (cold), then 5 times (Python's urllib, one request at a time)."
echo
echo "| page | first | median | slowest | size |"
echo "|---|---|---|---|---|"
python3 scripts/bench/http_time.py "$url" / /fragments/now /fragments/trends /lanes/dc1/L01 /cameras/cam-01 \
  "/packs/$pack"
echo
echo "For comparison, the same figures from the command line (process start included, median of 3):"
echo "\`scanadmin report --shift current\` $(report_ms) ms, \`--site dc1 --lane L01\` $(report_ms --site dc1 --lane L01) ms."
psql "$SCANTRACK_PG" -q -c "DROP DATABASE IF EXISTS scantrack_fill" 2>/dev/null || true
