#!/usr/bin/env bash
# Citus for the scale-out tests: built from the vendored source into the local PostgreSQL 15
# when it is missing, and a throwaway cluster of a coordinator and two workers on loopback.
# Usage: scripts/citus.sh install|start|stop
#        scripts/citus.sh node stop|start NAME   stops (immediately) or restarts one node
#                                     (coordinator, worker1, worker2) of the running cluster
#        scripts/citus.sh with CMD…   starts the cluster, runs CMD with AGENTMEM_CITUS (the
#                                     coordinator's connection string), AGENTMEM_CITUS_WORKERS
#                                     (the workers', separated by `;`) and AGENTMEM_CITUS_DIR set,
#                                     and stops the cluster whether CMD passes or fails
#   CITUS_DIR  where the three data folders live (default target/citus)
#   CITUS_PORT the first port tried (default 5610); the chosen ports are written to
#              $CITUS_DIR/ports, the coordinator's first.
#   CITUS_FSYNC the nodes' fsync setting (default off: a throwaway cluster; on to measure
#              what a flush costs, as a real one pays)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VERSION=13.2.2
# The vendored source: $CITUS_VENDOR, else the shared folder beside this checkout, else the
# one beside the main working copy (a CI clone lives elsewhere).
VENDOR=${CITUS_VENDOR:-}
if [ -z "$VENDOR" ]; then
  for d in "$ROOT/../shared/vendor" /work/shared/vendor; do
    [ -f "$d/citus-$VERSION.tar.gz" ] && { VENDOR=$d; break; }
  done
fi
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
BIN=$("$PG_CONFIG" --bindir)
CITUS_DIR=${CITUS_DIR:-$ROOT/target/citus}
CITUS_PORT=${CITUS_PORT:-5610}
CITUS_FSYNC=${CITUS_FSYNC:-off}
case "$CITUS_FSYNC" in
  on | off) ;;
  *) echo "CITUS_FSYNC must be on or off, not '$CITUS_FSYNC'" >&2; exit 2 ;;
esac
NODES=(coordinator worker1 worker2)

as_pg() { if [ "$(id -u)" -eq 0 ]; then sudo -u postgres "$@"; else "$@"; fi; }
psql_on() { local port=$1; shift; psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres -d postgres "$@"; }

# The version of the installed citus.so (its version string), empty when there is none.
installed_version() {
  local so
  so="$("$PG_CONFIG" --pkglibdir)/citus.so"
  [ -f "$so" ] || return 0
  grep -aoE "Citus [0-9]+\.[0-9]+\.[0-9]+" "$so" | head -1 | cut -d' ' -f2
}

install() {
  if [ "$(installed_version)" = "$VERSION" ]; then
    return 0
  fi
  local tarball=$VENDOR/citus-$VERSION.tar.gz patch=$VENDOR/citus-$VERSION-pg15-minor-compat.patch
  [ -n "$VENDOR" ] && [ -f "$tarball" ] || {
    echo "citus: citus-$VERSION.tar.gz not found (set CITUS_VENDOR to its folder)" >&2; exit 1; }
  local debs=(libzstd-dev liblz4-dev libcurl4-openssl-dev libkrb5-dev libpam0g-dev libselinux1-dev
    libxml2-dev libxslt1-dev libreadline-dev postgresql-server-dev-15 autoconf flex bison)
  local missing=()
  for p in "${debs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "citus: installing ${missing[*]}"
    local sudo=; [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
  echo "citus: building $VERSION (about 4 minutes on 2 cores)"
  local build=$ROOT/target/citus-build
  rm -rf "$build" && mkdir -p "$build"
  tar xzf "$tarball" -C "$build"
  cd "$build/citus-$VERSION"
  patch -p1 -s < "$patch"
  ./configure -q PG_CONFIG="$PG_CONFIG" > "$build/configure.log"
  make -s -j2 > "$build/make.log" 2>&1 || { tail -30 "$build/make.log"; exit 1; }
  local sudo=; [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo make -s install > "$build/install.log" 2>&1 || { tail -30 "$build/install.log"; exit 1; }
  cd "$ROOT"
  rm -rf "$build"
  [ "$(installed_version)" = "$VERSION" ] || { echo "citus: install did not take" >&2; exit 1; }
}

free_port() {
  local p=$1
  while (exec 3<>/dev/tcp/127.0.0.1/"$p") 2>/dev/null; do p=$((p + 1)); done
  echo "$p"
}

# Starts node $1 (its data folder made) on port $2.
run_node() {
  local n=$1 port=$2
  as_pg "$BIN/pg_ctl" -D "$CITUS_DIR/$n" -l "$CITUS_DIR/$n.log" -w \
    -o "-p $port -k $CITUS_DIR -c listen_addresses=127.0.0.1 -c fsync=$CITUS_FSYNC \
        -c shared_preload_libraries=citus -c max_connections=100 -c max_prepared_transactions=100 \
        -c wal_level=logical" start >/dev/null \
    || { cat "$CITUS_DIR/$n.log"; exit 1; }
}

# `node stop NAME` stops a running node at once (as a crash would); `node start NAME` starts it
# again on its port (for the tests of a worker lost mid-write).
node() {
  local how=$1 n=$2 ports i=0
  read -r -a ports < "$CITUS_DIR/ports"
  for name in "${NODES[@]}"; do
    if [ "$name" = "$n" ]; then
      case "$how" in
        stop) as_pg "$BIN/pg_ctl" -D "$CITUS_DIR/$n" -m immediate -w stop >/dev/null ;;
        start) run_node "$n" "${ports[$i]}" ;;
        *) echo "citus: node stop|start NAME" >&2; exit 2 ;;
      esac
      return 0
    fi
    i=$((i + 1))
  done
  echo "citus: no node $n (${NODES[*]})" >&2
  exit 2
}

start() {
  stop >/dev/null 2>&1 || true
  mkdir -p "$CITUS_DIR"
  [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$CITUS_DIR"
  local port=$CITUS_PORT ports=()
  for n in "${NODES[@]}"; do
    port=$(free_port "$port")
    ports+=("$port")
    as_pg "$BIN/initdb" -D "$CITUS_DIR/$n" -A trust -U postgres >"$CITUS_DIR/$n.initdb.log" 2>&1 \
      || { cat "$CITUS_DIR/$n.initdb.log"; exit 1; }
    run_node "$n" "$port"
    port=$((port + 1))
  done
  for p in "${ports[@]}"; do
    psql_on "$p" -c "CREATE EXTENSION citus"
  done
  psql_on "${ports[0]}" -c "SELECT citus_set_coordinator_host('127.0.0.1', ${ports[0]})" >/dev/null
  for p in "${ports[@]:1}"; do
    psql_on "${ports[0]}" -c "SELECT citus_add_node('127.0.0.1', $p)" >/dev/null
  done
  echo "${ports[*]}" > "$CITUS_DIR/ports"
  echo "citus: coordinator on 127.0.0.1:${ports[0]}, workers on ${ports[*]:1} ($CITUS_DIR)"
}

stop() {
  local stopped=
  for n in "${NODES[@]}"; do
    if [ -f "$CITUS_DIR/$n/postmaster.pid" ]; then
      as_pg "$BIN/pg_ctl" -D "$CITUS_DIR/$n" -m fast -w stop >/dev/null || true
      stopped=1
    fi
  done
  rm -rf "$CITUS_DIR"
  [ -n "$stopped" ] && echo "citus: stopped"
  return 0
}

with() {
  trap stop EXIT
  start
  local ports
  read -r -a ports < "$CITUS_DIR/ports"
  local dsn="host=127.0.0.1 user=postgres dbname=postgres"
  export AGENTMEM_CITUS="$dsn port=${ports[0]}"
  AGENTMEM_CITUS_WORKERS=
  for p in "${ports[@]:1}"; do AGENTMEM_CITUS_WORKERS+="${AGENTMEM_CITUS_WORKERS:+;}$dsn port=$p"; done
  export AGENTMEM_CITUS_WORKERS
  export AGENTMEM_CITUS_DIR=$CITUS_DIR
  "$@"
}

case "${1:-}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  with) shift; with "$@" ;;
  node) shift; node "$@" ;;
  *) echo "usage: $0 install|start|stop|node stop|start NAME|with CMD…" >&2; exit 2 ;;
esac
