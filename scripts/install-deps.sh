#!/usr/bin/env bash
# Installs every Debian package ScanTrack needs to build, test and demo. Idempotent: packages
# already present are skipped, and apt-get runs only when something is missing.
set -euo pipefail

packages=(
  pkg-config            # SwiftPM finds the C libraries through it
  libzbar-dev zbar-tools  # decoder, and zbarimg as the reference in tests
  libv4l-dev            # camera capture
  libpq-dev postgresql  # store
  openssl               # certificates for the local servers' TLS and the security tests
  libnats-dev nats-server  # messaging
  imagemagick           # converts the shared corpus to grayscale for tests
  libpng-dev            # PNG still images (scan-agent decode)
  libturbojpeg0-dev     # JPEG still images (scan-agent decode), libjpeg-turbo's TurboJPEG API
  libaravis-dev libusb-1.0-0-dev  # GenICam cameras (GigE Vision, USB3 Vision) through Aravis 0.8
  aravis-tools          # Aravis's fake GigE Vision camera (arv-fake-gv-camera-0.8) for the camera tests
  libavformat-dev libavcodec-dev libswscale-dev  # RTSP cameras (FFmpeg: RTSP/RTP, H.264/H.265/MJPEG decoding)
  gir1.2-gst-rtsp-server-1.0 python3-gi gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  gstreamer1.0-plugins-ugly gstreamer1.0-plugins-bad  # an RTSP camera for tests: GStreamer's RTSP server, x264/x265/JPEG
  libzint-dev           # renders barcodes for the synthetic conveyor (tests, benchmarks, demo)
  python3
  cmake g++             # build zxing-cpp from its pinned source (scripts/build-zxing.sh)
  docker-compose        # validates docker/compose.yaml in the tests (no engine needed)
  chromium              # headless browser: the dashboard test opens `scanadmin serve` in it
  prometheus            # scrapes the programs' /metrics in a test; promtool checks docker/prometheus/
  fonts-dejavu-core     # a font for the browser's screenshots
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
apt_install() {
  if [ -n "$sudo" ] && ! command -v sudo >/dev/null; then
    echo "install-deps: need root (or sudo) to install $*" >&2; exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  # Debian's postgresql package starts a cluster of its own through its service scripts where an
  # init system runs; ScanTrack never uses it (it starts its own server in run/).
  $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  apt_install "${missing[@]}"
  echo "install-deps: done"
fi

# The WMS-style consumer (scripts/wms_consumer.py) uses the public nats-py client and jsonschema
# from PyPI, in a virtual environment of the repo's own.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$here/.cache/venv"
requirements="$here/scripts/requirements-wms.txt"
if ! cmp -s "$requirements" "$venv/requirements.txt" 2>/dev/null; then
  echo "install-deps: Python packages for the WMS consumer ($(tr '\n' ' ' < "$requirements" | sed 's/ $//'))"
  rm -rf "$venv"
  if ! python3 -m venv "$venv" 2>/dev/null; then
    apt_install python3-venv
    rm -rf "$venv"
    python3 -m venv "$venv"
  fi
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$requirements"
  cp "$requirements" "$venv/requirements.txt"
fi
