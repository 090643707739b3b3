#!/usr/bin/env bash
# Runs a command with fresh local servers up (empty JetStream, new database), and stops them
# afterwards whatever the command did, removing PostgreSQL's private data directory under /tmp
# too (the next run would start afresh anyway; a clone deleted after a run left it behind).
#   scripts/with-servers.sh NAME COMMAND...
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
name="$1"; shift
cleanup() {
  "$here/scripts/servers.sh" stop "$name"
  local dir
  dir=$(cat "$here/run/$name/pg/dir" 2> /dev/null || true)
  case "$dir" in */scantrack-pg-"$name".*) rm -rf "$dir" "$here/run/$name/pg" 2> /dev/null || true ;; esac
}
trap cleanup EXIT
"$here/scripts/servers.sh" start "$name" --fresh
# shellcheck disable=SC1090
source "$here/run/$name/servers.env"
export SCANTRACK_SERVERS_NAME="$name"
status=0
"$@" || status=$?
exit $status
