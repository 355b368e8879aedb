#!/usr/bin/env bash
# Runs the ORM recipes of docs/orm.md against the built packages, each installed into a clean
# place as a user would: the wheel with SQLAlchemy and Alembic into a fresh venv of Debian's
# python3 (pyenv's cannot load extensions), the npm package with better-sqlite3 and Drizzle
# into a fresh npm project. Everything it makes is under WORK_DIR.
# Usage: scripts/test-orm.sh DIST_DIR WORK_DIR
#   DIST_DIR holds sqlite_agentmem-<version>-*.whl and sqlite-agentmem-<version>.tgz
#   (scripts/dist.sh); WORK_DIR is created if missing.
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: scripts/test-orm.sh DIST_DIR WORK_DIR" >&2
  exit 2
fi
dist=$(cd "$1" && pwd)
mkdir -p "$2"
work=$(cd "$2" && pwd)
cd "$(dirname "$0")/.."
root=$(pwd)
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
wheels=("$dist"/sqlite_agentmem-"$version"-*.whl)
if [ ! -f "${wheels[0]}" ]; then
  echo "test-orm: no sqlite_agentmem-$version wheel in $dist" >&2
  exit 1
fi
tgz=$dist/sqlite-agentmem-$version.tgz
if [ ! -f "$tgz" ]; then
  echo "test-orm: no $(basename "$tgz") in $dist" >&2
  exit 1
fi
# Each recipe runs from an empty directory of its own.
rm -rf "$work/python-run" "$work/node-run"
mkdir "$work/python-run" "$work/node-run"

/usr/bin/python3 -m venv --clear "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "${wheels[0]}" \
  "sqlalchemy>=2,<3" "alembic>=1,<2"
(cd "$work/python-run" \
  && "$work/venv/bin/python" "$root/tests/orm/sqlalchemy_recipe.py" "$root/docs/orm.md")

# better-sqlite3 compiles from source here: node-gyp takes the headers of the installed Node.
[ -f /usr/include/node/node.h ] && export npm_config_nodedir=${npm_config_nodedir:-/usr}
# In 0.x releases the minor version is the breaking one: drizzle-orm is pinned to 0.45.
rm -rf "$work/npm"
mkdir "$work/npm"
(cd "$work/npm" && npm init -y >/dev/null \
  && npm install --silent --no-audit --no-fund "$tgz" better-sqlite3@11 drizzle-orm@0.45 \
  && cp "$root/tests/orm/drizzle_recipe.js" . \
  && node drizzle_recipe.js "$root/docs/orm.md" "$work/node-run")
