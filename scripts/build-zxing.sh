#!/usr/bin/env bash
# zxing-cpp 3.1.1 (the second decoding engine: DataMatrix, PDF417, and what zbar misses), built
# from its pinned source package on PyPI into .cache/zxing/, with a pkg-config file of our own
# name (scantrack-zxing.pc) for the CZXing system-library target. Cached: a second run costs
# nothing. Debian's libzxing-dev (1.4) is not used: it aborts the process on some images.
#
#   scripts/build-zxing.sh        prints the folder to add to PKG_CONFIG_PATH
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version=3.1.1
sha256=1051a521b21a9fe206702ad4186aeb195154e3e1badcd99576d030723f36382b
root="$here/.cache/zxing"
prefix="$root/install"
stamp="$prefix/.built-$version-$sha256"

if [ -f "$stamp" ] && [ -f "$prefix/lib/pkgconfig/scantrack-zxing.pc" ]; then
  echo "$prefix/lib/pkgconfig"
  exit 0
fi

for tool in cmake g++ python3; do
  command -v "$tool" >/dev/null || { echo "build-zxing: $tool is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
done

mkdir -p "$root/download"
archive="$root/download/zxing_cpp-$version.tar.gz"
if [ ! -f "$archive" ] || ! echo "$sha256  $archive" | sha256sum -c --status; then
  echo "zxing-cpp==$version --hash=sha256:$sha256" > "$root/download/requirements.txt"
  python3 -m pip download --quiet --no-deps --no-binary zxing-cpp --require-hashes \
    -r "$root/download/requirements.txt" -d "$root/download" >&2
fi
echo "$sha256  $archive" | sha256sum -c --status || { echo "build-zxing: $archive does not match its pinned hash" >&2; exit 1; }

rm -rf "$root/src" "$root/build" "$prefix"
mkdir -p "$root/src"
tar -xzf "$archive" -C "$root/src" --strip-components 1
echo "build-zxing: building zxing-cpp $version (readers and the C API, static, Release; about a minute)" >&2
cmake -S "$root/src/core" -B "$root/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DZXING_READERS=ON -DZXING_WRITERS=OFF -DZXING_C_API=ON \
  -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib >"$root/configure.log" 2>&1 \
  || { tail -n 30 "$root/configure.log" >&2; exit 1; }
cmake --build "$root/build" --parallel "$(nproc)" >"$root/build.log" 2>&1 || { tail -n 30 "$root/build.log" >&2; exit 1; }
cmake --install "$root/build" >"$root/install.log" 2>&1 || { tail -n 30 "$root/install.log" >&2; exit 1; }

# Licences travel with the library: Apache-2.0 for zxing-cpp, BSD-3-Clause for its libzueci.
mkdir -p "$prefix/share/licenses"
cp "$root/src/LICENSE" "$prefix/share/licenses/zxing-cpp-LICENSE"
# libzueci's sources carry only "SPDX-License-Identifier: BSD-3-Clause" and its copyright line;
# the licence requires its text with binaries, so it is written out here.
cat > "$prefix/share/licenses/libzueci-LICENSE" <<'BSD'
libzueci (bundled in zxing-cpp, core/src/libzueci) - Copyright (C) 2022 gitlost
SPDX-License-Identifier: BSD-3-Clause

Redistribution and use in source and binary forms, with or without modification, are permitted
provided that the following conditions are met:

1. Redistributions of source code must retain the above copyright notice, this list of
   conditions and the following disclaimer.
2. Redistributions in binary form must reproduce the above copyright notice, this list of
   conditions and the following disclaimer in the documentation and/or other materials provided
   with the distribution.
3. Neither the name of the copyright holder nor the names of its contributors may be used to
   endorse or promote products derived from this software without specific prior written
   permission.

THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS" AND ANY EXPRESS OR
IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE IMPLIED WARRANTIES OF MERCHANTABILITY AND
FITNESS FOR A PARTICULAR PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR
CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL
DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR SERVICES; LOSS OF USE,
DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER
IN CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT
OF THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
BSD

mkdir -p "$prefix/lib/pkgconfig"
cat > "$prefix/lib/pkgconfig/scantrack-zxing.pc" <<PC
prefix=$prefix
Name: scantrack-zxing
Description: zxing-cpp $version built by ScanTrack (readers, C API, static)
Version: $version
Cflags: -I\${prefix}/include
Libs: -L\${prefix}/lib -lZXing -lstdc++ -lm -lpthread
PC
touch "$stamp"
echo "$prefix/lib/pkgconfig"
