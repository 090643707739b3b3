#!/usr/bin/env bash
# Installs every Debian package ScanTrack needs to build, test and demo. Idempotent: packages
# already present are skipped, and apt-get runs only when something is missing.
set -euo pipefail

packages=(
  pkg-config            # SwiftPM finds the C libraries through it
  libzbar-dev zbar-tools  # decoder, and zbarimg as the reference in tests
  libv4l-dev            # camera capture
  libpq-dev postgresql  # store
  libnats-dev nats-server  # messaging
  imagemagick           # converts the shared corpus to grayscale for tests
  libzint-dev           # renders barcodes for the synthetic conveyor (tests, benchmarks, demo)
  python3
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root (or sudo) to install ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# Debian's postgresql package starts a cluster of its own through its service scripts where an
# init system runs; ScanTrack never uses it (it starts its own server in run/).
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
