#!/usr/bin/env bash
# Puts a built library at its destination without touching the file a running process may
# have mapped: copy to a temporary file beside it, then rename over the old name. The old
# inode lives on for processes that loaded it (overwriting it in place kills them with SIGBUS).
# Usage: scripts/place.sh SOURCE DEST
set -euo pipefail
src=$1 dst=$2
mkdir -p "$(dirname "$dst")"
tmp=$(mktemp "$(dirname "$dst")/.$(basename "$dst").XXXXXX")
trap 'rm -f "$tmp"' EXIT
cp "$src" "$tmp"
chmod 0755 "$tmp"
mv -f "$tmp" "$dst"
trap - EXIT
