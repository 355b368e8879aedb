#!/usr/bin/env bash
# Wraps `cargo pgrx package` output into postgresql-15-agentmem_<version>_<arch>.deb.
# Usage: build_deb.sh <pgrx package dir> <version> <out dir>
# The package dir is what `cargo pgrx package` writes (target/<profile>/agentmem-pg15): the
# library and extension files under the paths pg_config names, which are Debian's own.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$1 version=$2 out=$3
arch=$(dpkg --print-architecture)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
cp -a "$src/." "$root/"
find "$root" -name '*.so' -exec strip --strip-unneeded {} +
doc="$root/usr/share/doc/postgresql-15-agentmem"
mkdir -p "$doc" "$root/DEBIAN"
{
  echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
  echo "Upstream-Name: agentmem"
  echo
  echo "Files: *"
  echo "License: MIT or Apache-2.0"
  sed 's/^$/./; s/^/ /' "$here/../../LICENSE-MIT"
} > "$doc/copyright"
sed "s/@VERSION@/$version/; s/@ARCH@/$arch/" "$here/control.in" > "$root/DEBIAN/control"
echo "Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)" >> "$root/DEBIAN/control"
chmod -R u+rwX,go+rX,go-w "$root"
mkdir -p "$out"
deb="$out/postgresql-15-agentmem_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
