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
admin_ms() {  # a scanadmin command on the fill, process start included (median of 3; RUNS=1: once)
  for _ in $(seq 1 "${RUNS:-3}"); do
    local s; s=$(date +%s%N)
    SCANTRACK_PG="$fill_pg" "$bin/scanadmin" "$@" > /dev/null
    echo $(( ($(date +%s%N) - s) / 1000000 ))
  done | sort -n | sed -n "$(( (${RUNS:-3} + 1) / 2 ))p"
}
report_ms() { admin_ms report --shift current "$@"; }

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
echo
echo "### Reports and retention on the same fill"
echo
echo "The report reads quarter-hour rollups plus the stored rows at the period's two ends; \`--from-rows\`"
echo "sums the same figures from the stored rows alone (the raw-table work, measured in the same run)."
echo "Unique codes (a distinct count, from the rows in both) are counted for periods of up to 2 days, so not in the"
echo "month report unless \`--unique-codes\` is given. Median of 3 (the month from the rows: one run), process start included."
echo
month=(--from "$(date -u -d '30 days ago' +%Y-%m-%d)" --to "$(date -u -d tomorrow +%Y-%m-%d)" --time-zone UTC)
echo "| report | rollups | from rows | ratio |"  # unique codes: counted for periods up to 2 days
echo "|---|---|---|---|"
for args in "--shift current" "--shift previous" "--shift previous --site dc1 --lane L01" "month"; do
  if [ "$args" = month ]; then set -- "${month[@]}"; label="one month (\`--from … --to …\`, 31 days)"
  else read -r -a words <<< "$args"; set -- "${words[@]}"; label="\`$args\`"; fi
  # Summing a month from the rows takes minutes: that one is run once.
  fast=$(admin_ms report "$@"); slow=$(RUNS=$([ "$args" = month ] && echo 1 || echo 3) admin_ms report "$@" --from-rows)
  echo "| $label | $fast ms | $slow ms | $(python3 -c "print(f'{$slow/max($fast,1):.0f}x')") |"
done
# Retention: keep days - 2 days, so the oldest partial day and the first whole day go.
keep=$(( days - 2 ))
echo
echo "The month report with \`--unique-codes\`: $(admin_ms report "${month[@]}" --unique-codes) ms."
SCANTRACK_PG="$fill_pg" "$bin/scanadmin" retention --dry-run > "$out/retention-before.txt"
for table in sightings noreads heartbeats; do
  SCANTRACK_PG="$fill_pg" "$bin/scanadmin" retention set "$table" $keep > /dev/null
done
read -r expired whole < <(psql "$fill_pg" -At -F ' ' -c "
  SELECT count(*), count(*) FILTER (WHERE first_seen >= c - interval '1 day') FROM sightings,
    LATERAL (SELECT date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - interval '$keep days' AS c) x
  WHERE first_seen < c")
s=$(date +%s%N)
SCANTRACK_PG="$fill_pg" "$bin/scanadmin" retention > "$out/retention.txt"
dropped_ms=$(( ($(date +%s%N) - s) / 1000000 ))
month_after=$(admin_ms report "${month[@]}")
echo
echo "Retention: with sightings, no-reads and heartbeats set to $keep days, \`scanadmin retention\` dropped"
echo "$(grep -o 'dropped [0-9]* partition(s)' "$out/retention.txt" | grep -o '[0-9]*') day partitions of three tables (the filled days before the cutoff: $expired sightings, $whole of them in"
echo "the one whole day, with their no-reads and heartbeats) in $dropped_ms ms, process start and the plan included"
echo "(\`.cache/bench/retention.txt\`). The month"
echo "report afterwards, its counts from the kept rollups: $month_after ms."
psql "$SCANTRACK_PG" -q -c "DROP DATABASE IF EXISTS scantrack_fill" 2>/dev/null || true
