#!/usr/bin/env bash
# Runs a command with fresh local servers up (empty JetStream, new database), and stops them
# afterwards whatever the command did.
#   scripts/with-servers.sh NAME COMMAND...
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
name="$1"; shift
trap '"$here/scripts/servers.sh" stop "$name"' EXIT
"$here/scripts/servers.sh" start "$name" --fresh
# shellcheck disable=SC1090
source "$here/run/$name/servers.env"
export SCANTRACK_SERVERS_NAME="$name"
status=0
"$@" || status=$?
exit $status
