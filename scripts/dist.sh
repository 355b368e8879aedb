#!/usr/bin/env bash
# Builds the packages into one directory: the Python wheel (sqlite-agentmem), the npm package
# (sqlite-agentmem), both with the `agentmem` command, and the Debian package for PostgreSQL 15
# (postgresql-15-agentmem), with the SQLite library and the command beside them.
# Usage: scripts/dist.sh [--profile dist|release|dev] [--out DIR]
#   dist (default): fully optimised, for release; dev: the debug builds the tests already made.
set -euo pipefail
cd "$(dirname "$0")/.."
profile=dist out=dist
while [ $# -gt 0 ]; do
  case $1 in
    --profile) profile=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "dist: unknown option $1 (expected --profile, --out)" >&2; exit 2 ;;
  esac
done
case $profile in
  dev) dir=debug pgrx_profile=(--debug) ;;
  dist|release) dir=$profile pgrx_profile=(--profile "$profile") ;;
  *) echo "dist: --profile must be dist, release or dev" >&2; exit 2 ;;
esac
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "dist: SQLite library and the agentmem command ($profile)" >&2
cargo build --profile "$profile" -p agentmem-sqlite -p agentmem-cli >&2
lib=target/$dir/libagentmem0.so
cli=target/$dir/agentmem
strip --strip-unneeded -o "$out/agentmem0.so" "$lib"
strip --strip-unneeded -o "$out/agentmem" "$cli"

echo "dist: Python wheel" >&2
python3 packages/python/build_wheel.py --lib "$lib" --cli "$cli" --version "$version" --out "$out"

echo "dist: npm package" >&2
npm_dir=$work/npm
mkdir -p "$npm_dir/lib/linux-x64" "$npm_dir/bin"
# The loader, its declarations and the framework adapters beside it.
find packages/node -maxdepth 1 \( -name "*.js" -o -name "*.mjs" -o -name "*.d.ts" \) -exec cp {} "$npm_dir/" \;
cp packages/node/README.md LICENSE-MIT LICENSE-APACHE "$npm_dir/"
cp packages/node/bin/agentmem.js "$npm_dir/bin/"
cp "$out/agentmem" "$npm_dir/lib/linux-x64/agentmem"
sed "s/@VERSION@/$version/" packages/node/package.json > "$npm_dir/package.json"
cp "$out/agentmem0.so" "$npm_dir/lib/linux-x64/agentmem0.so"
(cd "$npm_dir" && npm pack --silent --pack-destination "$out" >/dev/null)
echo "$out/sqlite-agentmem-$version.tgz"

echo "dist: Debian package for PostgreSQL 15" >&2
(cd pg-ext && cargo pgrx package "${pgrx_profile[@]}" --pg-config "$PG_CONFIG" --out-dir "$work/pg") >&2
packages/deb/build_deb.sh "$work/pg" "$version" "$out"
