#!/usr/bin/env python3
"""Edge adds on SQLite's dense bench graph, builds of the extension alternated, in wall-clock
time: each run copies the graph loaded once by edge_add_count.py (/tmp/agentmem-edge-count)
and times `graph_edge_add` on graph_bench.py's 200 sampled pairs, each its own transaction,
as the bench does; then, with `--remove`, `graph_edge_remove` of the same edges. The mean
says what the p50 hides: the few adds that join thousands of pairs.

    add_wall.py --ext A/libagentmem0 --ext B/libagentmem0 [--rounds 3] [--remove] [--out FILE]

The builds must share the schema version (the graph is loaded by the first). Needs Debian's
python3 (extension loading).
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import edge_add_count  # noqa: E402
import graph_bench  # noqa: E402
from benchlib import open_sqlite, report  # noqa: E402

COPY = os.path.join(edge_add_count.WORK, "copy.db")


def fresh_copy():
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(COPY + suffix):
            os.remove(COPY + suffix)
    shutil.copyfile(edge_add_count.DB, COPY)


def timed(c, sql, args):
    out = []
    for a in args:
        t = time.perf_counter()
        out.append(c.execute(sql, a).fetchone()[0])
        yield (time.perf_counter() - t) * 1000, out[-1]


def run(ext, pairs, remove):
    """(add times, remove times) in ms of one build on a fresh copy."""
    fresh_copy()
    c = open_sqlite(COPY, ext)
    adds = list(timed(c, "SELECT graph_edge_add(?, ?, 'imports')", pairs))
    removes = []
    if remove:
        ids = [(edge,) for _, edge in adds]
        removes = [t for t, _ in timed(c, "SELECT graph_edge_remove(?)", ids)]
    c.close()
    return [t for t, _ in adds], removes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ext", action="append", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--remove", action="store_true")
    ap.add_argument("--out", default=os.path.join(graph_bench.ROOT, "benches", "results",
                                                  "add-wall-latest.md"))
    a = ap.parse_args()
    edge_add_count.prepare(a.ext[0], 2)
    pairs = graph_bench.sample(json.loads(graph_bench.load_text()), 200, 42)[2]
    times = {ext: ([], []) for ext in a.ext}
    for _ in range(a.rounds):
        for ext in a.ext:
            adds, removes = run(ext, pairs, a.remove)
            times[ext][0].extend(adds)
            times[ext][1].extend(removes)
    lines = [f"`{' '.join(sys.argv)}`: {len(pairs)} edge adds of the dense bench graph, each "
             f"its own transaction, on a fresh copy of the loaded graph per run; {a.rounds} "
             "rounds, the builds alternated; ms.", "",
             "| build | add p50 | add mean | remove p50 | remove mean |",
             "|---|---:|---:|---:|---:|"]
    for ext, (adds, removes) in times.items():
        rem = (f"{statistics.median(removes):.3f} | {statistics.mean(removes):.3f}"
               if removes else "— | —")
        lines.append(f"| {ext} | {statistics.median(adds):.3f} | {statistics.mean(adds):.3f} | "
                     f"{rem} |")
    report(lines, a.out)
    os.remove(COPY)


if __name__ == "__main__":
    main()
