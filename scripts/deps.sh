#!/usr/bin/env bash
# Installs what building and testing agentmem needs, skipping whatever is already there.
# Usage: scripts/deps.sh sqlite|pg|ui
set -euo pipefail
what=${1:-sqlite}
export DEBIAN_FRONTEND=noninteractive

need_debs=(build-essential pkg-config clang libclang-dev sqlite3 libsqlite3-dev python3 python3-venv
  universal-ctags)
# Node and npm for the npm package's test; a Node from elsewhere (NodeSource) is kept.
command -v npm >/dev/null || need_debs+=(nodejs npm)
if [ "$what" = pg ]; then
  need_debs+=(postgresql-15 postgresql-server-dev-15 sudo)
fi
# The panel's browser test: Debian's Chromium and its WebDriver.
if [ "$what" = ui ]; then
  need_debs+=(chromium chromium-driver)
fi
missing=()
for p in "${need_debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  SUDO=; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if [ "$what" = pg ]; then
  PGRX_VERSION=0.18.0
  if ! cargo pgrx --version 2>/dev/null | grep -q "$PGRX_VERSION"; then
    echo "deps: installing cargo-pgrx $PGRX_VERSION (about 8 minutes, once)"
    cargo install --locked cargo-pgrx --version "$PGRX_VERSION"
  fi
  PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
  if ! grep -qs "pg15" "${PGRX_HOME:-$HOME/.pgrx}/config.toml"; then
    cargo pgrx init --pg15 "$PG_CONFIG"
  fi
fi
