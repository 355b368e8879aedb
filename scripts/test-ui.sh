#!/usr/bin/env bash
# The memory panel's browser test (tests/ui/panel_test.py): `agentmem ui` on a SQLite file and
# on a fresh Postgres cluster, in Debian's headless Chromium through Selenium (Makefile:
# $(UI_VENV)). Screenshots of every page go to target/ui-screenshots/.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/agentmem-ui.XXXXXX)
chmod 755 "$work"
export PG_DIR=$work/pg PG_PORT=5495
cleanup() { scripts/pg-cluster.sh stop >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT

cargo build -q -p agentmem-cli -p agentmem-sqlite
panel_test() {
  target/ui-venv/bin/python tests/ui/panel_test.py --agentmem target/debug/agentmem \
    --axe target/ui-node/node_modules/axe-core/axe.min.js --shots target/ui-screenshots "$@"
}

echo "ui: the panel on SQLite"
panel_test --name sqlite --db "$work/panel.db" --extension target/debug/libagentmem0.so

echo "ui: the shell block of docs/ui.md, as pasted"
awk '/^```sh$/{on=1; next} /^```$/{on=0} on' docs/ui.md > "$work/doc.sh"
(cd "$work" && PATH="$OLDPWD/target/debug:$PATH" bash -euo pipefail doc.sh)

echo "ui: the panel on Postgres"
scripts/pg-cluster.sh start >/dev/null
port=$(cat "$PG_DIR/port")
psql -X -q -h 127.0.0.1 -p "$port" -U postgres -d agentmem_test -c "CREATE EXTENSION agentmem"
panel_test --name postgres --pg "host=127.0.0.1 port=$port user=postgres dbname=agentmem_test"
