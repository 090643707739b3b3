#!/usr/bin/env bash
# Installs the Debian packages one make target needs, and no more: building needs the C libraries
# and the tools that build zxing-cpp; the demo and the benchmarks add the servers; the tests add
# the reference tools, the RTSP camera, the browser and Prometheus. Idempotent: packages already
# present are skipped, and apt-get runs only when something is missing.
#   scripts/install-deps.sh [build|corpus|demo|bench|dist|test|all]   (default all)
#   scripts/install-deps.sh --list TARGET                        (print the packages, install nothing)
# Off Debian (no apt-get or dpkg), it names the packages (Debian's names) and exits 1.
set -euo pipefail

list_only=false
if [ "${1:-}" = "--list" ]; then list_only=true; shift; fi
target="${1:-all}"

build_packages=(
  pkg-config            # SwiftPM finds the C libraries through it
  libzbar-dev           # decoder
  libv4l-dev            # camera capture
  libpq-dev             # store
  libnats-dev           # messaging
  libssl-dev            # OpenSSL set up without its exit handler (Sources/COpenSSLExit)
  libpng-dev            # PNG still images (scan-agent decode)
  libturbojpeg0-dev     # JPEG still images (scan-agent decode), libjpeg-turbo's TurboJPEG API
  libwebp-dev libtiff-dev libgif-dev  # WebP, TIFF and GIF still images (scan-agent decode)
  libaravis-dev libusb-1.0-0-dev  # GenICam cameras (GigE Vision, USB3 Vision) through Aravis 0.8
  libavformat-dev libavcodec-dev libswscale-dev  # RTSP cameras (FFmpeg: RTSP/RTP, H.264/H.265/MJPEG decoding)
  libzint-dev           # renders barcodes for the synthetic conveyor (scan-synth)
  cmake g++ python3     # build zxing-cpp from its pinned source (scripts/build-zxing.sh fetches it with pip)
)
corpus_packages=(
  imagemagick           # converts the shared corpus to grayscale (tests, benchmarks)
)
server_packages=(
  postgresql            # the local PostgreSQL server (scripts/servers.sh)
  nats-server           # the local NATS server with JetStream
  openssl               # certificates for the local servers' TLS and the security tests
)
dist_packages=(
  dpkg-dev              # dpkg-shlibdeps: a package's Depends from the libraries its program links
  binutils              # strip
  lintian               # checks the Debian packages (make dist's, in the tests)
  adduser               # the packages' maintainer scripts make the scantrack user
)
test_packages=(
  zbar-tools            # zbarimg, the reference in tests
  aravis-tools          # Aravis's fake GigE Vision camera (arv-fake-gv-camera-0.8) for the camera tests
  gir1.2-gst-rtsp-server-1.0 gir1.2-gst-plugins-base-1.0 python3-gi gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  gstreamer1.0-plugins-ugly gstreamer1.0-plugins-bad  # an RTSP camera for tests: GStreamer's RTSP server, x264/x265/JPEG
  docker-compose        # validates docker/compose.yaml in the tests (no engine needed)
  chromium              # headless browser: the dashboard test opens `scanadmin serve` in it
  prometheus            # scrapes the programs' /metrics in a test; promtool checks docker/prometheus/
  fonts-dejavu-core     # a font for the browser's screenshots
  systemd               # systemd-analyze verifies the unit files (scripts/dist/systemd/)
)

case "$target" in
  build) packages=("${build_packages[@]}") ;;
  corpus) packages=("${corpus_packages[@]}") ;;
  demo) packages=("${build_packages[@]}" "${server_packages[@]}") ;;
  bench) packages=("${build_packages[@]}" "${corpus_packages[@]}" "${server_packages[@]}") ;;
  dist) packages=("${build_packages[@]}" "${dist_packages[@]}") ;;
  test | all) packages=("${build_packages[@]}" "${corpus_packages[@]}" "${server_packages[@]}" "${dist_packages[@]}" "${test_packages[@]}") ;;
  *) echo "install-deps: '$target' is not a target (build, corpus, demo, bench, dist, test, all)" >&2; exit 64 ;;
esac

if $list_only; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

if ! command -v dpkg-query >/dev/null || ! command -v apt-get >/dev/null; then
  echo "install-deps: this system has no apt-get/dpkg (ScanTrack's scripts install Debian packages)." >&2
  echo "install-deps: install the equivalents of these Debian packages for '$target', then run make again:" >&2
  printf '  %s\n' "${packages[@]}" >&2
  exit 1
fi

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
# from PyPI, in a virtual environment of the repo's own (the demo, the benchmarks and the tests).
case "$target" in build | corpus) exit 0 ;; esac
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
