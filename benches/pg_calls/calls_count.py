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
`--large` `EXECUTE`s of the bench's messages, each its own transaction and then in
transactions of 100, under `valgrind --tool=callgrind`; the difference over the extra calls is
the cost of one. The installed library is put back at the end. Needs valgrind, root (to run as
postgres and to swap the library) and the schema version of the builds to be the installed
one's."""

import argparse
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]
import pg_calls_bench  # noqa: E402
import single_user  # noqa: E402
from benchlib import report  # noqa: E402

WORK = "/tmp/agentmem-calls-count"
SAVED = os.path.join(WORK, "saved")
PORT = "5495"

STATEMENTS = {
    "peer INSERT (tsvector + GIN)":
        "INSERT INTO peer_messages (thread_id, role, content) VALUES ($1, 'user', $2)",
    "agentmem INSERT": "INSERT INTO mem_messages (thread_id, role, raw_content) VALUES ($1, 'user', $2)",
    "agentmem mem_message_add": "SELECT mem_message_add($1, 'user', $2)",
}


def load(base_rows):
    """The database `calls`, made once and copied aside; the cluster's data directory."""
    def fill(c):
        pg_calls_bench.setup(c, "peer", base_rows)
        pg_calls_bench.setup(c, "agentmem", base_rows)
    fresh = not os.path.exists(os.path.join(WORK, "loaded"))
    data = single_user.own_cluster(WORK, PORT, "calls", fill)
    if fresh:
        single_user.as_postgres(f"rm -rf {SAVED} && cp -a {data} {SAVED}")
    return data


def literal(s):
    return "'" + s.replace("'", "''") + "'"


#: How the calls are grouped into transactions: calls per transaction (1: autocommit).
SHAPES = {"autocommit": 1, "transactions of 100": 100}


def query_file(name, sql, texts, per_transaction):
    """A file that prepares `sql` and runs it once per text (a statement per line, as the
    single-user backend reads them), `per_transaction` calls in each transaction."""
    lines = [f"PREPARE p(text, text) AS {sql};"]
    for i, t in enumerate(texts):
        if per_transaction > 1 and i % per_transaction == 0:
            lines += ["BEGIN;"] if i == 0 else ["COMMIT;", "BEGIN;"]
        lines.append(f"EXECUTE p({literal(f't{i % 50}')}, {literal(t)});")
    if per_transaction > 1:
        lines.append("COMMIT;")
    path = os.path.join(WORK, f"{name}-{per_transaction}-{len(texts)}.sql")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.chmod(path, 0o644)
    return path


def counted(data, sql_file):
    """Instructions for `sql_file` on the database as it was loaded."""
    single_user.as_postgres(f"rm -rf {data} && cp -a {SAVED} {data}")
    return single_user.counted(data, "calls", sql_file)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", action="append", required=True, help="name=PATH/agentmem.so")
    ap.add_argument("--small", type=int, default=200)
    ap.add_argument("--large", type=int, default=1200)
    ap.add_argument("--base", type=int, default=20000)
    ap.add_argument("--out", default=os.path.join(HERE, "..", "results", "calls-count-latest.md"))
    a = ap.parse_args()
    builds = [b.split("=", 1) for b in a.build]
    texts = pg_calls_bench.messages(random.Random(7), a.large)
    rows = {}
    with single_user.swapping_library() as use:
        data = load(a.base)
        files = {f"{name}, {shape}": (query_file(f"s{i}", sql, texts[:a.small], n),
                                      query_file(f"s{i}", sql, texts, n))
                 for i, (name, sql) in enumerate(STATEMENTS.items())
                 for shape, n in SHAPES.items()}
        for _, path in builds:
            use(path)
            for name, (small, large) in files.items():
                per_call = (counted(data, large) - counted(data, small)) / (a.large - a.small)
                rows.setdefault(name, []).append(per_call)
    lines = [f"`{' '.join(sys.argv)}`: instructions per statement, each its own transaction "
             f"or 100 to a transaction, in a single-user backend (callgrind; {a.large} calls "
             f"less {a.small}, the database restored before each count: {a.base} earlier "
             f"messages, 50 threads).", ""]
    lines += single_user.count_table("statement", builds, rows)
    report(lines, a.out)


if __name__ == "__main__":
    main()
