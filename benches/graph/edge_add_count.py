#!/usr/bin/env python3
"""Instructions per edge add on SQLite, counted by callgrind: a figure the machine's noise does
not move, for comparing two builds of the extension where p50s differ by less than runs do.

    edge_add_count.py --ext A/libagentmem0 [--ext B/libagentmem0 …] [--adds 40] [--out FILE]

On the dense bench graph (graph_bench.py's, loaded once into /tmp/agentmem-edge-count), the
`--adds` sampled edge adds nearest the median size (ancestors of `from` × descendants of `to`)
run twice each, each in a transaction rolled back, under `valgrind --tool=callgrind` with each
build. A run with no adds is counted too and taken off, so the figure is the adds' own.
Needs valgrind and Debian's python3.
"""

import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import graph_bench  # noqa: E402
from benchlib import open_sqlite, report  # noqa: E402

WORK = "/tmp/agentmem-edge-count"
DB = os.path.join(WORK, "dense.db")
PASSES = 2


def prepare(ext, adds):
    """Loads the graph once and picks the adds nearest the median size; their ids."""
    os.makedirs(WORK, exist_ok=True)
    graph = json.loads(graph_bench.load_text())
    if not os.path.exists(DB):
        c = open_sqlite(DB, ext)
        c.execute("SELECT mem_init()")
        c.execute("SELECT graph_load('bench', ?)", (json.dumps(graph),))
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        c.close()
    pairs = graph_bench.sample(graph, 200, 42)[2]
    c = sqlite3.connect(DB)
    count = ("SELECT count(*) FROM mem_graph_closure c JOIN mem_graph_nodes n "
             "ON n.seq = c.{} WHERE n.id = ?")
    size = {p: (1 + c.execute(count.format("descendant"), (p[0],)).fetchone()[0])
            * (1 + c.execute(count.format("ancestor"), (p[1],)).fetchone()[0]) for p in pairs}
    ranked = sorted(pairs, key=lambda p: (size[p], p))
    mid = len(ranked) // 2
    return ranked[mid - adds // 2: mid - adds // 2 + adds]


def run(ext, pairs):
    """The adds (or none, with `pairs` empty) in this process: what callgrind counts."""
    c = open_sqlite(DB, ext)
    for _ in range(PASSES):
        for a, b in pairs:
            c.execute("BEGIN")
            c.execute("SELECT graph_edge_add(?, ?, 'imports')", (a, b)).fetchall()
            c.execute("ROLLBACK")


def counted(ext, pairs):
    """Instructions callgrind counted for [`run`]."""
    arg = json.dumps(pairs)
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
         os.path.abspath(__file__), "--child", ext, arg],
        capture_output=True, text=True, check=True).stderr
    return int(re.search(r"refs:\s+([\d,]+)", out).group(1).replace(",", ""))


def main():
    if sys.argv[1:2] == ["--child"]:
        return run(sys.argv[2], [tuple(p) for p in json.loads(sys.argv[3])])
    ap = argparse.ArgumentParser()
    ap.add_argument("--ext", action="append", required=True)
    ap.add_argument("--adds", type=int, default=40)
    ap.add_argument("--out", default=os.path.join(graph_bench.ROOT, "benches", "results",
                                                  "edge-add-count-latest.md"))
    a = ap.parse_args()
    pairs = prepare(a.ext[0], a.adds)
    lines = [f"`{' '.join(sys.argv)}`: {len(pairs)} edge adds of the dense bench graph nearest "
             f"the median size, {PASSES} times each, each rolled back; instructions per add "
             "(callgrind, less a run with no adds).", "",
             "| build | instructions per add | / first |", "|---|---:|---:|"]
    first = None
    for ext in a.ext:
        per_add = (counted(ext, pairs) - counted(ext, [])) / (len(pairs) * PASSES)
        first = first or per_add
        lines.append(f"| {ext} | {per_add:,.0f} | {per_add / first:.3f} |")
    report(lines, a.out)


if __name__ == "__main__":
    main()
