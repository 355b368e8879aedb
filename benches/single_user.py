"""What the instruction-counting benchmarks share: a Postgres cluster of the tool's own, loaded
once; builds of the extension put in place of the installed library in turn; and a
single-user backend (`postgres --single`, run as the postgres user) counted by callgrind.
Needs valgrind and root (to run as postgres and to swap the library)."""

import contextlib
import os
import re
import shutil
import subprocess

BIN = "/usr/lib/postgresql/15/bin"


def as_postgres(cmd, **kw):
    return subprocess.run(["su", "postgres", "-c", cmd], check=True, **kw)


def own_cluster(work, port, db, fill):
    """A cluster in `work`/data whose database `db` `fill(connection)` loads, made once (a
    server started for the load and stopped after it); its data directory."""
    data = os.path.join(work, "data")
    if os.path.exists(os.path.join(work, "loaded")):
        return data
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    shutil.chown(work, "postgres")
    as_postgres(f"{BIN}/initdb -D {data} -A trust -U postgres", stdout=subprocess.DEVNULL)
    with serving(data, port) as dsn:
        import psycopg
        with psycopg.connect(dsn + " dbname=postgres", autocommit=True) as c:
            c.execute(f"CREATE DATABASE {db}")
        with psycopg.connect(f"{dsn} dbname={db}", autocommit=True) as c:
            fill(c)
    open(os.path.join(work, "loaded"), "w").close()
    return data


@contextlib.contextmanager
def serving(data, port):
    """A server on the cluster at `data`, listening on a socket in /tmp only, for the body of
    the `with`; yields its connection string (no database named). Its log goes beside
    `data`."""
    log = os.path.join(os.path.dirname(data), "server.log")
    as_postgres(f"{BIN}/pg_ctl -D {data} -l {log} -w -o \"-p {port} -k /tmp -h ''\" start",
                stdout=subprocess.DEVNULL)
    try:
        yield f"host=/tmp port={port} user=postgres"
    finally:
        as_postgres(f"{BIN}/pg_ctl -D {data} -m fast -w stop", stdout=subprocess.DEVNULL)


def counted(data, db, sql_file):
    """Instructions callgrind counted for a single-user backend on `data` running `sql_file`
    (one statement per line) in database `db`."""
    out = subprocess.run(
        ["su", "postgres", "-c", f"valgrind --tool=callgrind --callgrind-out-file=/dev/null "
         f"{BIN}/postgres --single -D {data} {db} < {sql_file} > /dev/null"],
        capture_output=True, text=True, check=True).stderr
    return int(re.search(r"refs:\s+([\d,]+)", out).group(1).replace(",", ""))


@contextlib.contextmanager
def swapping_library():
    """Yields `use(path)`, which puts the build at `path` in place of the installed library
    (as a new file: a mapped library is never written over); the installed one is put back at
    the end."""
    lib = subprocess.run(["pg_config", "--pkglibdir"], capture_output=True, text=True,
                         check=True).stdout.strip() + "/agentmem.so"

    def use(path):
        shutil.copy(path, lib + ".new")
        os.rename(lib + ".new", lib)

    saved = lib + ".saved"
    shutil.copy(lib, saved)
    try:
        yield use
    finally:
        use(saved)
        os.remove(saved)


def count_table(first_column, builds, rows):
    """Markdown rows of counts: one line per entry of `rows` (name → a count per build), the
    last build's count over the first's at the end."""
    head = " | ".join(name for name, _ in builds)
    lines = [f"| {first_column} | {head} | last / first |", "|---|" + "---:|" * (len(builds) + 1)]
    for name, counts in rows.items():
        cells = " | ".join(f"{c:,.0f}" for c in counts)
        lines.append(f"| {name} | {cells} | {counts[-1] / counts[0]:.3f} |")
    return lines
