#!/usr/bin/env bash
# Packages the release programs (make dist): one tarball with all three, and a Debian package
# each (dpkg-deb), into OUT.
#   scripts/dist/build.sh [--bin DIR] [--out DIR]     (defaults: .build/release, dist)
#
# The binaries must be release builds with the Swift runtime linked statically (`make dist` and
# `make release` build them so): this refuses one that needs a library from the toolchain.
# Each package holds its program in /usr/bin (stripped), its manual page (rendered from the
# program's own command tree by scripts/dist/manpage.py), its systemd units, its configuration
# templates in /etc/scantrack (conffiles), the docs, a copyright file and a changelog. Depends come
# from dpkg-shlibdeps (the Debian packages of the libraries the binary needs) plus adduser.
# postinst makes the `scantrack` system user and /var/lib/scantrack; purging the last ScanTrack
# package removes them and /etc/scantrack. Files carry the commit's time (SOURCE_DATE_EPOCH), so
# the same commit packages to the same bytes.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

bin=.build/release
out=dist
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "dist: unknown argument '$1' (use --bin DIR, --out DIR)" >&2; exit 64 ;;
  esac
done
programs=(scan-agent scan-aggregator scanadmin)
for program in "${programs[@]}"; do
  [ -x "$bin/$program" ] || { echo "dist: no $bin/$program (make dist builds it)" >&2; exit 1; }
  if ldd "$bin/$program" | grep -Eq 'libswift|libFoundation|libdispatch|/opt/swift|=> not found'; then
    echo "dist: $bin/$program needs the toolchain's libraries (build with --static-swift-stdlib):" >&2
    ldd "$bin/$program" | grep -E 'libswift|libFoundation|libdispatch|/opt/swift|not found' >&2
    exit 1
  fi
done

version=$("$bin/scanadmin" --version | awk '{print $2}')
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
date=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)
arch=$(dpkg --print-architecture)
maintainer="ScanTrack developers <scantrack@packages.example.org>"
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

summary_scan_agent="ScanTrack camera agent: decode, track and publish barcodes"
summary_scan_aggregator="ScanTrack aggregator: reconcile cameras, store, publish results"
summary_scanadmin="ScanTrack admin tool and read-only dashboard"
long_scan_agent=" One scan-agent runs per conveyor or pack-station camera (V4L2, GigE Vision
 or USB3 Vision through Aravis, RTSP, recorded clips): it decodes every barcode
 in every frame with zbar and zxing-cpp, tracks each code across frames, applies
 rejection rules and session policies, and publishes events over NATS JetStream
 with a local spool. Run one per camera with the scan-agent@.service template."
long_scan_aggregator=" scan-aggregator reconciles the sightings of several cameras into item and
 parcel passes, builds pick-and-pack records against expected orders, stores
 everything in PostgreSQL and publishes results for a WMS on NATS."
long_scanadmin=" scanadmin manages rules, orders, topology, cameras and retention, prints
 the shift report, and serves a read-only web dashboard
 (scanadmin-serve.service)."

# The units each package installs, and the configuration templates it owns (conffiles).
units_scan_agent="scan-agent@.service"
units_scan_aggregator="scan-aggregator.service"
units_scanadmin="scanadmin-serve.service"

var() { local name="$1_${2//-/_}"; printf '%s' "${!name}"; }

# The tree every package shares: docs, copyright, changelog.
common_tree() {  # common_tree DIR PACKAGE
  local dir="$1" package="$2" doc="$1/usr/share/doc/$2"
  install -d -m 0755 "$doc/docs"
  install -m 0644 docs/*.md docs/asyncapi.yaml "$doc/docs/"
  install -d -m 0755 "$doc/docs/schema" "$doc/examples"
  install -m 0644 docs/schema/*.json "$doc/docs/schema/"
  install -m 0644 docs/examples/* "$doc/examples/" 2>/dev/null || true
  cat > "$doc/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: ScanTrack
Source: the ScanTrack repository, commit $commit

Files: *
Copyright: 2025-$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y) The ScanTrack developers
License: Apache-2.0

Files: usr/bin/scan-agent
Copyright: 2025-$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y) The ScanTrack developers
 zxing-cpp (linked statically): its authors
License: Apache-2.0

License: Apache-2.0
 On Debian systems, the full text of the Apache License, Version 2.0 is in
 /usr/share/common-licenses/Apache-2.0.
EOF
  {
    echo "$package ($version) unstable; urgency=medium"
    echo
    echo "  * Release $version, commit $commit."
    echo
    echo " -- $maintainer  $(date -u -R -d "@$SOURCE_DATE_EPOCH")"
  } | gzip -9n > "$doc/changelog.gz"
}

tarball_dir="$work/scantrack-$version-linux-$arch"
install -d "$tarball_dir/bin" "$tarball_dir/share/man/man1" "$tarball_dir/lib/systemd/system" \
  "$tarball_dir/etc/scantrack/agents"
for program in "${programs[@]}"; do
  package="$program"
  dir="$work/deb/$package"
  install -d -m 0755 "$dir/DEBIAN" "$dir/usr/bin" "$dir/usr/share/man/man1" "$dir/lib/systemd/system" \
    "$dir/etc/scantrack"
  install -m 0755 "$bin/$program" "$dir/usr/bin/$program"
  strip --strip-unneeded --remove-section=.comment --remove-section=.note "$dir/usr/bin/$program"
  python3 scripts/dist/manpage.py "$dir/usr/bin/$program" "$version" "$date" > "$work/$program.1"
  gzip -9n < "$work/$program.1" > "$dir/usr/share/man/man1/$program.1.gz"
  chmod 0644 "$dir/usr/share/man/man1/$program.1.gz"
  for unit in $(var units "$program"); do
    install -m 0644 "scripts/dist/systemd/$unit" "$dir/lib/systemd/system/$unit"
    install -m 0644 "scripts/dist/systemd/$unit" "$tarball_dir/lib/systemd/system/$unit"
  done
  : > "$dir/DEBIAN/conffiles"
  for template in scripts/dist/etc/"$program"/*; do
    [ -e "$template" ] || continue
    name=$(basename "$template")
    install -m 0644 "$template" "$dir/etc/scantrack/$name"
    install -m 0644 "$template" "$tarball_dir/etc/scantrack/$name"
    echo "/etc/scantrack/$name" >> "$dir/DEBIAN/conffiles"
  done
  [ -s "$dir/DEBIAN/conffiles" ] || rm "$dir/DEBIAN/conffiles"
  common_tree "$dir" "$package"
  if [ "$program" = scanadmin ]; then
    # The schema's files for reference (scanadmin migrate applies its own embedded copy) and the
    # roles the operators' guide has an administrator create with psql.
    install -d -m 0755 "$dir/usr/share/scantrack/migrations/roles" "$tarball_dir/share/scantrack/migrations/roles"
    install -m 0644 migrations/*.sql "$dir/usr/share/scantrack/migrations/"
    install -m 0644 migrations/roles/*.sql "$dir/usr/share/scantrack/migrations/roles/"
    cp -r "$dir/usr/share/scantrack/migrations/." "$tarball_dir/share/scantrack/migrations/"
  fi
  install -m 0755 "$dir/usr/bin/$program" "$tarball_dir/bin/$program"
  install -m 0644 "$dir/usr/share/man/man1/$program.1.gz" "$tarball_dir/share/man/man1/"

  # Depends: the packages of the libraries the binary links (dpkg-shlibdeps reads a control file).
  mkdir -p "$work/shlibs/$package/debian"
  printf 'Source: scantrack\n\nPackage: %s\nArchitecture: any\n' "$package" > "$work/shlibs/$package/debian/control"
  shlibs=$(cd "$work/shlibs/$package" && dpkg-shlibdeps -O -e "$dir/usr/bin/$program" 2>/dev/null \
    | sed -n 's/^shlibs:Depends=//p')
  [ -n "$shlibs" ] || { echo "dist: dpkg-shlibdeps found no dependencies for $program" >&2; exit 1; }
  size=$(du -sk --exclude=DEBIAN "$dir" | cut -f1)
  cat > "$dir/DEBIAN/control" <<EOF
Package: $package
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: adduser, $shlibs
Section: net
Priority: optional
Description: $(var summary "$program")
$(var long "$program")
EOF
  for script in postinst prerm postrm; do
    sed "s/@PACKAGE@/$package/g; s/@UNITS@/$(var units "$program")/g" "scripts/dist/debian/$script" \
      > "$dir/DEBIAN/$script"
    chmod 0755 "$dir/DEBIAN/$script"
  done
  (cd "$dir" && find . -path ./DEBIAN -prune -o -type f -print | sed 's|^\./||' | sort \
    | xargs md5sum > DEBIAN/md5sums)
  chmod 0644 "$dir/DEBIAN/md5sums" "$dir/DEBIAN/control"
  [ ! -e "$dir/DEBIAN/conffiles" ] || chmod 0644 "$dir/DEBIAN/conffiles"
  find "$dir" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
  dpkg-deb --root-owner-group -Zxz --build "$dir" "$out/${package}_${version}_${arch}.deb" >/dev/null
  echo "dist: $out/${package}_${version}_${arch}.deb"
done

install -d "$tarball_dir/share/doc/scantrack"
cp -r "$work/deb/scanadmin/usr/share/doc/scanadmin/." "$tarball_dir/share/doc/scantrack/"
cat > "$tarball_dir/INSTALL" <<EOF
ScanTrack $version (commit $commit) for Linux $arch.

bin/                 scan-agent, scan-aggregator, scanadmin (Swift runtime linked in; they need
                     only the Debian libraries the .deb packages name in Depends)
share/man/man1/      their manual pages
lib/systemd/system/  the units (Type=notify, watchdog, hardening) for /usr/bin; change ExecStart
                     if the programs live elsewhere
etc/scantrack/       configuration templates
share/scantrack/     the schema's migrations and roles.sql (docs/operators-guide.md, "Servers")
share/doc/scantrack/ the guides: start with docs/operators-guide.md

On Debian 12, prefer the .deb packages: they make the scantrack user and the folders too.
EOF
find "$tarball_dir" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
  -C "$work" -cf - "$(basename "$tarball_dir")" | gzip -9n > "$out/scantrack-$version-linux-$arch.tar.gz"
echo "dist: $out/scantrack-$version-linux-$arch.tar.gz"
