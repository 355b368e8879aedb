#!/usr/bin/env python3
"""Instructions per message written one statement a transaction on Postgres, counted by
callgrind in a single-user backend: a figure the machine's noise does not move, for comparing
builds of the extension where pg_calls_bench.py's rates differ by less than from run to run.

    target/bench-graph/venv/bin/python benches/pg_calls/calls_count.py \\
        --build before=PATH/agentmem.so --build after=PATH/agentmem.so [--out FILE]

pg_calls_bench.py's database (its earlier messages, threads and peer table, agentmem's and
the peer's in one database) is made once in a cluster of this tool's own
(/tmp/agentmem-calls-count, a server started for the load and stopped after it) and copied
aside. For each build, put in place of the installed library, and each statement (the peer's
`INSERT`, agentmem's `INSERT` and `mem_message_add`), the copy is put back and a single-user
backend (`postgres --single`, run as the postgres user) runs `PREPARE` and then `--small` and
`--large` `EXECUTE`s of the bench's messages, each its own transaction, under
`valgrind --tool=callgrind`; the difference over the extra calls is the cost of one. The
installed library is put back at the end. Needs valgrind, root (to run as postgres and to swap
the library) and the schema version of the builds to be the installed one's."""

import argparse
import os
import random
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]
import pg_calls_bench  # noqa: E402
from benchlib import report  # noqa: E402

WORK = "/tmp/agentmem-calls-count"
DATA = os.path.join(WORK, "data")
SAVED = os.path.join(WORK, "saved")
BIN = "/usr/lib/postgresql/15/bin"
PORT = "5495"

STATEMENTS = {
    "peer INSERT (tsvector + GIN)":
        "INSERT INTO peer_messages (thread_id, role, content) VALUES ($1, 'user', $2)",
    "agentmem INSERT": "INSERT INTO mem_messages (thread_id, role, raw_content) VALUES ($1, 'user', $2)",
    "agentmem mem_message_add": "SELECT mem_message_add($1, 'user', $2)",
}


def as_postgres(cmd, **kw):
    return subprocess.run(["su", "postgres", "-c", cmd], check=True, **kw)


def load(base_rows):
    """The database `calls`, made once and copied aside."""
    if os.path.exists(os.path.join(WORK, "loaded")):
        return
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    shutil.chown(WORK, "postgres")
    as_postgres(f"{BIN}/initdb -D {DATA} -A trust -U postgres", stdout=subprocess.DEVNULL)
    as_postgres(f"{BIN}/pg_ctl -D {DATA} -l {WORK}/server.log -w -o \"-p {PORT} -k /tmp -h ''\" "
                "start", stdout=subprocess.DEVNULL)
    try:
        import psycopg
        dsn = f"host=/tmp port={PORT} user=postgres"
        with psycopg.connect(dsn + " dbname=postgres", autocommit=True) as c:
            c.execute("CREATE DATABASE calls")
        with psycopg.connect(dsn + " dbname=calls", autocommit=True) as c:
            pg_calls_bench.setup(c, "peer", base_rows)
            pg_calls_bench.setup(c, "agentmem", base_rows)
    finally:
        as_postgres(f"{BIN}/pg_ctl -D {DATA} -m fast -w stop", stdout=subprocess.DEVNULL)
    as_postgres(f"cp -a {DATA} {SAVED}")
    open(os.path.join(WORK, "loaded"), "w").close()


def literal(s):
    return "'" + s.replace("'", "''") + "'"


def query_file(name, sql, texts):
    """A file that prepares `sql` and runs it once per text (a statement per line, as the
    single-user backend reads them)."""
    lines = [f"PREPARE p(text, text) AS {sql};"]
    lines += [f"EXECUTE p({literal(f't{i % 50}')}, {literal(t)});" for i, t in enumerate(texts)]
    path = os.path.join(WORK, f"{name}-{len(texts)}.sql")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.chmod(path, 0o644)
    return path


def counted(sql_file):
    """Instructions callgrind counted for a single-user backend running `sql_file` on the
    database as it was loaded."""
    as_postgres(f"rm -rf {DATA} && cp -a {SAVED} {DATA}")
    out = subprocess.run(
        ["su", "postgres", "-c", f"valgrind --tool=callgrind --callgrind-out-file=/dev/null "
         f"{BIN}/postgres --single -D {DATA} calls < {sql_file} > /dev/null"],
        capture_output=True, text=True, check=True).stderr
    return int(re.search(r"refs:\s+([\d,]+)", out).group(1).replace(",", ""))


def install(path, lib):
    """Puts `path` in place of `lib` as a new file (a mapped library is never written over)."""
    shutil.copy(path, lib + ".new")
    os.rename(lib + ".new", lib)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", action="append", required=True, help="name=PATH/agentmem.so")
    ap.add_argument("--small", type=int, default=200)
    ap.add_argument("--large", type=int, default=1200)
    ap.add_argument("--base", type=int, default=20000)
    ap.add_argument("--out", default=os.path.join(HERE, "..", "results", "calls-count-latest.md"))
    a = ap.parse_args()
    builds = [b.split("=", 1) for b in a.build]
    lib = subprocess.run(["pg_config", "--pkglibdir"], capture_output=True, text=True,
                         check=True).stdout.strip() + "/agentmem.so"
    texts = pg_calls_bench.messages(random.Random(7), a.large)
    saved = lib + ".saved"
    shutil.copy(lib, saved)
    rows = {}
    try:
        load(a.base)
        files = {name: (query_file(f"s{i}", sql, texts[:a.small]),
                        query_file(f"s{i}", sql, texts))
                 for i, (name, sql) in enumerate(STATEMENTS.items())}
        for _, path in builds:
            install(path, lib)
            for name, (small, large) in files.items():
                per_call = (counted(large) - counted(small)) / (a.large - a.small)
                rows.setdefault(name, []).append(per_call)
    finally:
        install(saved, lib)
        os.remove(saved)
    head = " | ".join(name for name, _ in builds)
    lines = [f"`{' '.join(sys.argv)}`: instructions per statement, each its own transaction, "
             f"in a single-user backend (callgrind; {a.large} calls less {a.small}, the "
             f"database restored before each count: {a.base} earlier messages, 50 threads).", "",
             f"| statement | {head} | last / first |", "|---|" + "---:|" * (len(builds) + 1)]
    for name, counts in rows.items():
        cells = " | ".join(f"{c:,.0f}" for c in counts)
        lines.append(f"| {name} | {cells} | {counts[-1] / counts[0]:.3f} |")
    report(lines, a.out)


if __name__ == "__main__":
    main()
