#!/usr/bin/env bash
# Builds every package from the debug builds and installs each into a clean place, as a new
# user would: the wheel into a fresh venv of Debian's python3, the npm package into a fresh
# npm project beside better-sqlite3 (and its TypeScript declarations through tsc), and the
# Debian package with dpkg -i, then a fresh cluster where the application role runs a
# session. Each runs its package README's example as pasted.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d /tmp/agentmem-packages.XXXXXX)
chmod 755 "$work"
export PG_DIR=$work/pg PG_PORT=5497
cleanup() { scripts/pg-cluster.sh stop >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
# The official MCP client (Makefile: $(MCP_VENV)).
mcp_python=${AGENTMEM_MCP_PYTHON:-$root/target/mcp-venv/bin/python}

scripts/dist.sh --profile dev --out "$work/dist" >/dev/null

echo "packages: Python wheel into a fresh venv"
/usr/bin/python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --no-index "$work"/dist/sqlite_agentmem-*.whl
(cd "$work" && "$work/venv/bin/python" "$root/tests/packages/python_smoke.py" "$version" \
  "$root/packages/python/README.md" "$root/docs/install.md" "$root/docs/tools.md")

echo "packages: the wheel's agentmem command, and an MCP session through it"
"$work/venv/bin/agentmem" --version | grep -qx "agentmem $version"
"$work/venv/bin/agentmem" --db "$work/cli.db" tasks create "ship the CLI" >/dev/null
"$work/venv/bin/agentmem" --db "$work/cli.db" --json tasks ready | grep -q '"ship the CLI"'
"$mcp_python" tests/mcp/mcp_client.py "$work/venv/bin/agentmem" --db "$work/mcp-pip.db" >/dev/null
echo "python agentmem command: ok"

echo "packages: LangGraph's store in agentmem (SQLite here, Postgres below)"
"$work/venv/bin/pip" install --quiet 'langgraph>=1,<2' 'psycopg[binary]>=3,<4'
(cd "$work" && "$work/venv/bin/python" "$root/tests/packages/langgraph_test.py")
"$work/venv/bin/python" tests/docs/run_blocks.py --python "$work/venv/bin/python" docs/integrations.md >/dev/null
echo "Python blocks of docs/integrations.md: ok"

echo "packages: npm package into a fresh project"
# better-sqlite3 compiles from source here: node-gyp takes the headers of the installed Node.
[ -f /usr/include/node/node.h ] && export npm_config_nodedir=${npm_config_nodedir:-/usr}
mkdir -p "$work/npm"
(cd "$work/npm" && npm init -y >/dev/null \
  && npm install --silent --no-audit --no-fund "$work/dist/sqlite-agentmem-$version.tgz" \
       better-sqlite3@11 typescript@5 @types/node@20 @types/json-schema@7 ai@7 pg@8 libsql@0.5 \
       @mastra/core@1 @mastra/memory@1 zod@4 \
  && cp "$root"/tests/packages/{node_smoke.js,types_check.ts,provider_test.js,ai_tools_test.mjs,mastra_test.mjs} . \
  && node node_smoke.js "$version" \
       "$root/packages/node/README.md" "$root/docs/install.md" \
  && npx tsc --noEmit --strict --target es2022 --module nodenext types_check.ts)
echo "npm types: ok"
# The framework adapters on SQLite here; on Postgres once the cluster below runs.
adapters() { (cd "$work/npm" && node provider_test.js && node ai_tools_test.mjs); }
adapters
node tests/docs/run_blocks.js "$work/npm/node_modules" >/dev/null
node tests/docs/run_blocks.js "$work/npm/node_modules" docs/integrations.md >/dev/null
echo "JavaScript blocks of the README and docs/integrations.md: ok"
(cd "$work/npm" && node "$root/tests/libsql/run_cases.js" "$root/tests/cases")
# PyPI's libsql cannot load extensions yet; the check fails when a release can.
"$work/venv/bin/pip" install --quiet 'libsql==0.1.*'
(cd "$work" && "$work/venv/bin/python" "$root/tests/libsql/pypi_libsql_check.py")
"$work/npm/node_modules/.bin/agentmem" --version | grep -qx "agentmem $version"
"$mcp_python" tests/mcp/mcp_client.py "$work/npm/node_modules/.bin/agentmem" --db "$work/mcp-npm.db" >/dev/null
echo "npm agentmem command and MCP session: ok"

echo "packages: ORM recipes (SQLAlchemy, Drizzle) through the packages"
scripts/test-orm.sh "$work/dist" "$work/orm"

echo "packages: Debian package with dpkg -i, then a fresh cluster"
dpkg -i "$work"/dist/postgresql-15-agentmem_*.deb >/dev/null
dpkg-query -W -f='${Status}\n' postgresql-15-agentmem | grep -q "install ok installed"
scripts/pg-cluster.sh start >/dev/null
port=$(cat "$PG_DIR/port")
# The application owns its database, as is usual; agentmem goes into its public schema.
psql_as() { psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U "$1" -d appdb "${@:2}"; }
psql -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres \
  -c "CREATE ROLE app LOGIN" -c "CREATE DATABASE appdb OWNER app"
# Even the database's owner cannot install it: the control file is not trusted
# (docs/install.md says why).
if psql_as app -c "CREATE EXTENSION agentmem" 2>"$work/err"; then
  echo "a non-superuser installed agentmem" >&2; exit 1
fi
grep -q 'permission denied to create extension "agentmem"' "$work/err" || { cat "$work/err" >&2; exit 1; }
psql_as postgres -c "CREATE EXTENSION agentmem" \
  -c "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO app" \
  -c "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO app"
out=$(psql_as app -At -f tests/packages/pg_smoke.sql)
expected=$'t\n1\nt\n1\n1\n2'
if [ "$out" != "$expected" ]; then
  echo "pg smoke session gave:"$'\n'"$out"$'\n'"expected:"$'\n'"$expected" >&2; exit 1
fi
echo "debian package: ok"

echo "packages: the npm adapters on Postgres"
psql -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -c "CREATE DATABASE adapters"
AGENTMEM_PG="postgres://postgres@127.0.0.1:$port/adapters" adapters
(cd "$work" && AGENTMEM_PG="postgresql://postgres@127.0.0.1:$port/adapters" \
  "$work/venv/bin/python" "$root/tests/packages/langgraph_test.py")
# Mastra's flows, on SQLite and on Postgres in one run.
(cd "$work/npm" && AGENTMEM_PG="postgres://postgres@127.0.0.1:$port/adapters" node mastra_test.mjs)
