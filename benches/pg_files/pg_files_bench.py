#!/usr/bin/env python3
"""How much of the Postgres files of the search index its live pages fill.

    pg_files_bench.py --pg "host=… user=…" --corpus FILE.jsonl [--sizes 200000,1000000,2000000]
                      [--batch 1000] [--out FILE]

Loads the corpus' messages (repeated to size, fresh ids) into `mem_messages` by plain INSERT in
transactions of `--batch` rows, as `make bench` does, then reports the files of the `mem_idx_*`
tables (heap, TOAST, indexes and their maps: `pg_total_relation_size`) against the bytes the
index's current version needs (its pages, segment headers and deletion lists, delta rows) at
four points: at the end of the load, after `VACUUM`, after `mem_optimize()` (called until it
returns 0, each call its own transaction, as docs/functions.md says to), and after a second
`VACUUM`.
"""

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from benchlib import pg_database, report  # noqa: E402

FILES = """SELECT coalesce(sum(pg_total_relation_size(oid)), 0)::bigint FROM pg_class
           WHERE relkind = 'r' AND relname LIKE 'mem\\_idx\\_%'"""
LIVE = """SELECT (SELECT coalesce(sum(octet_length(data)), 0) FROM agentmem_private.mem_idx_pages)
               + (SELECT coalesce(sum(octet_length(header) + coalesce(octet_length(dead), 0)), 0)
                  FROM agentmem_private.mem_idx_segments)
               + (SELECT coalesce(sum(coalesce(octet_length(terms), 0)
                                      + coalesce(octet_length(old_terms), 0)), 0)
                  FROM agentmem_private.mem_idx_delta)"""
SEGMENTS = "SELECT count(*) FROM agentmem_private.mem_idx_segments"
PER_TABLE = """SELECT relname, pg_relation_size(oid), pg_total_relation_size(oid) FROM pg_class
               WHERE relkind = 'r' AND relname LIKE 'mem\\_idx\\_%' ORDER BY relname"""


def corpus(path, n):
    """`n` messages of the corpus, repeated with fresh threads when it holds fewer."""
    rows = []
    with open(path) as f:
        for line in f:
            rows.append(json.loads(line))
    out, rep = [], 0
    while len(out) < n:
        for m in rows:
            if len(out) == n:
                break
            out.append((f"{m['thread']}-{rep}", m["resource"], m["role"], m["content"],
                        m["created_at"] + rep))
        rep += 1
    return out


def sizes(c):
    files = c.execute(FILES).fetchone()[0]
    live = int(c.execute(LIVE).fetchone()[0])
    tables = c.execute(PER_TABLE).fetchall()
    segments = c.execute(SEGMENTS).fetchone()[0]
    return files, live, segments, tables


def run(dsn, msgs, batch):
    with pg_database(dsn, "agentmem_pg_files") as c:
        c.execute("CREATE EXTENSION agentmem")
        threads = {}
        with c.transaction():
            for t, res, _, _, _ in msgs:
                if t not in threads:
                    threads[t] = c.execute("SELECT mem_thread_create(%s, %s)::text",
                                           (res, t)).fetchone()[0]
        started = time.time()
        for i in range(0, len(msgs), batch):
            chunk = msgs[i:i + batch]
            c.execute(
                "INSERT INTO mem_messages (thread_id, role, raw_content, created_at) "
                "SELECT t, r, c, ca FROM unnest(%s::text[], %s::text[], %s::text[], "
                "%s::bigint[]) AS m (t, r, c, ca)",
                ([threads[m[0]] for m in chunk], [m[2] for m in chunk], [m[3] for m in chunk],
                 [m[4] for m in chunk]))
        load = time.time() - started
        points = [("end of load", sizes(c))]
        c.execute("VACUUM")
        points.append(("after VACUUM", sizes(c)))
        started = time.time()
        calls = 1
        while c.execute("SELECT mem_optimize()").fetchone()[0] > 0:
            calls += 1
        opt = time.time() - started
        points.append(("after mem_optimize()", sizes(c)))
        c.execute("VACUUM")
        points.append(("after VACUUM", sizes(c)))
        return load, opt, calls, points


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pg", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--sizes", default="200000,1000000,2000000")
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--out", default="benches/results/pg-files-latest.md")
    a = ap.parse_args()
    ns = [int(s) for s in a.sizes.split(",")]
    all_msgs = corpus(a.corpus, max(ns))
    lines = ["# Postgres index files against their live pages", "",
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} · "
             f"`make bench-pg-files` (benches/pg_files/pg_files_bench.py --sizes {a.sizes}) · "
             f"plain INSERT, {a.batch} rows per transaction · code corpus", "",
             "| messages | point | segments | files MB | live MB | files / live |",
             "|---:|---|---:|---:|---:|---:|"]
    detail, timing = [], []
    for n in ns:
        load, opt, calls, points = run(a.pg, all_msgs[:n], a.batch)
        timing.append(f"- {n:,}: load {load:.1f} s ({n / load:,.0f} messages/s); "
                      f"mem_optimize() {opt:.1f} s in {calls} calls")
        print(timing[-1], file=sys.stderr)
        for name, (files, live, segments, tables) in points:
            lines.append(f"| {n:,} | {name} | {segments} | {files / 1e6:.1f} | {live / 1e6:.1f} | "
                         f"{files / max(live, 1):.2f}× |")
            print(lines[-1], file=sys.stderr)
            detail.append(f"- {n:,}, {name}: " + ", ".join(
                f"{t} {rel / 1e6:.1f}/{tot / 1e6:.1f} MB" for t, rel, tot in tables))
    lines += [""] + timing + ["", "Per table (heap / total with TOAST and indexes):", ""] + detail
    report(lines, a.out)


if __name__ == "__main__":
    main()
