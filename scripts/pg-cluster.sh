#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster on loopback for the tests.
# Usage: scripts/pg-cluster.sh start|stop   (PG_DIR, PG_PORT override the defaults)
set -euo pipefail
BIN=/usr/lib/postgresql/15/bin
PG_DIR=${PG_DIR:-/tmp/agentmem-test-pg}
PG_PORT=${PG_PORT:-5499}
# initdb refuses to run as root: run the server as the postgres user.
as_pg() { if [ "$(id -u)" -eq 0 ]; then sudo -u postgres "$@"; else "$@"; fi; }

case "${1:-}" in
  start)
    "$0" stop >/dev/null 2>&1 || true
    # Take the first free port from PG_PORT up; the chosen one is written to $PG_DIR/port.
    while (exec 3<>/dev/tcp/127.0.0.1/"$PG_PORT") 2>/dev/null; do PG_PORT=$((PG_PORT + 1)); done
    rm -rf "$PG_DIR"
    mkdir -p "$PG_DIR"
    [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$PG_DIR"
    as_pg "$BIN/initdb" -D "$PG_DIR/data" -A trust -U postgres >"$PG_DIR/initdb.log" 2>&1 \
      || { cat "$PG_DIR/initdb.log"; exit 1; }
    as_pg "$BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w \
      -o "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100" start >/dev/null \
      || { cat "$PG_DIR/server.log"; exit 1; }
    psql -X -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -c "CREATE DATABASE agentmem_test" >/dev/null
    echo "$PG_PORT" > "$PG_DIR/port"
    echo "postgres: started on 127.0.0.1:$PG_PORT ($PG_DIR)"
    ;;
  stop)
    if [ -f "$PG_DIR/data/postmaster.pid" ]; then
      as_pg "$BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w stop >/dev/null || true
      echo "postgres: stopped"
    fi
    rm -rf "$PG_DIR"
    ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
