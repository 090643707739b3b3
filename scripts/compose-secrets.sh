#!/usr/bin/env bash
# Makes the secrets docker/compose.yaml mounts (docs/security.md, "Containers"): a random password
# for each PostgreSQL and NATS login, and a CA of the deployment's own with server certificates for
# the hosts "nats" and "postgres". Existing files are kept, so running it again only adds what is
# missing; delete a file to make it anew. Needs openssl.
#   scripts/compose-secrets.sh [DIR]      (default: docker/secrets)
#
# Who may read what: the folder is 0700, so no other local user reaches any of it. Run as root, each
# password file is 0400 and owned by the container user that reads it: the scantrack user of our
# images (uid 10001, docker/Dockerfile) or Grafana's (uid 472); nats-server and PostgreSQL's
# entrypoint read theirs as root. Run as another user, who cannot give files away, the passwords are
# 0444 inside the 0700 folder (the containers read them through their own mounts, not the folder).
# Modes and owners are set again on every run, so files made by an earlier version are tightened.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${1:-$here/docker/secrets}"
umask 077
mkdir -p "$dir"
chmod 0700 "$dir"
cd "$dir"

scantrack_uid=10001
grafana_uid=472

readable_by() {  # FILE UID: only that container user reads it (root: 0400 and chown; else 0444)
  if [ "$(id -u)" -eq 0 ]; then
    chown "$2:$2" "$1"
    chmod 0400 "$1"
  else
    chmod 0444 "$1"
  fi
}

password() {  # FILE: 32 random characters, made once
  if [ ! -s "$1" ]; then
    openssl rand -base64 48 | tr -d '/+=\n' | head -c 32 > "$1"
    echo "compose-secrets: $dir/$1"
  fi
  case "$1" in
    grafana_admin_password) readable_by "$1" "$grafana_uid" ;;
    *) readable_by "$1" "$scantrack_uid" ;;
  esac
}

for name in postgres_password pg_aggregator_password pg_operator_password pg_reporter_password \
  nats_aggregator_password nats_cam_01_password nats_wms_password nats_gateway_password nats_dashboard_password \
  nats_scanadmin_password \
  dashboard_password grafana_admin_password; do
  password "$name"
done

# The CA and the servers' certificates (ECDSA P-256, two years). Keys stay 0600: the containers
# that read them (nats, postgres) start as root and hand them on.
if [ ! -s ca.pem ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 730 -subj "/CN=ScanTrack CA" \
    -keyout ca-key.pem -out ca.pem 2>/dev/null
  chmod 0600 ca-key.pem
  chmod 0444 ca.pem
  echo "compose-secrets: $dir/ca.pem"
fi
for host in nats postgres; do
  [ -s "$host-cert.pem" ] && continue
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$host" \
    -keyout "$host-key.pem" -out "$host.csr" 2>/dev/null
  printf 'subjectAltName=DNS:%s,DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' "$host" > "$host.ext"
  openssl x509 -req -in "$host.csr" -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 730 \
    -extfile "$host.ext" -out "$host-cert.pem" 2>/dev/null
  rm -f "$host.csr" "$host.ext"
  chmod 0600 "$host-key.pem"
  chmod 0444 "$host-cert.pem"
  echo "compose-secrets: $dir/$host-cert.pem"
done
# Again on every run, for files an earlier version made: keys for root alone, certificates public.
chmod 0600 ./*-key.pem
chmod 0444 ca.pem ./*-cert.pem
