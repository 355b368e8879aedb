#!/usr/bin/env python3
"""Instructions per graph query on Postgres, counted by callgrind in a single-user backend: a
figure the machine's noise does not move, for comparing builds of the extension where the
p50s of two runs differ by more than the change.

    target/bench-graph/venv/bin/python benches/graph/pg_query_count.py \\
        --build before=PATH/agentmem.so --build after=PATH/agentmem.so [--out FILE]

The dense bench graph (graph_bench.py's) is loaded once into a cluster of this tool's own
(/tmp/agentmem-query-count, a server started for the load and stopped after it). Then for
each build, put in place of the installed library, a single-user backend (`postgres
--single`, run as the postgres user) answers `graph_neighbors` at depth 1 and 3 of the bench's
200 sampled start nodes, `graph_impact` at depth 3 of its impact nodes and `graph_neighbors`
of its nodes with no edge out, and `graph_edge_add` of the adds nearest the median size
(edge_add_count.py picks them from its SQLite copy of the graph, with `--sqlite-ext`; each add
rolled back), each query file under `valgrind --tool=callgrind`; a file of as many trivial
statements is counted too and taken off, so the figure is the calls' own, parse and plan of
their statement included. The installed library is put back at the end. Needs
valgrind, root (to run as postgres and to swap the library) and the schema version of the
builds to be the installed one's."""

import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE)), HERE]
import edge_add_count  # noqa: E402
import graph_bench  # noqa: E402
import single_user  # noqa: E402
from benchlib import report  # noqa: E402

WORK = "/tmp/agentmem-query-count"
PORT = "5497"


def load(graph_text):
    """A cluster holding the graph in database `bench`, made once; its data directory."""
    def fill(c):
        c.execute("CREATE EXTENSION agentmem")
        c.execute("SELECT graph_load('bench', %s)", (graph_text,))
        c.execute("VACUUM ANALYZE")
    return single_user.own_cluster(WORK, PORT, "bench", fill)


def query_files(sample, adds):
    """The query files, by name, each with its calls' count and the file of as many trivial
    calls (the baseline taken off)."""
    outs, ins, _, leaves = sample
    neighbors = "SELECT count(*) FROM graph_neighbors('{}', '{{\"max_depth\":{},\"limit\":10000}}');"
    # The answer printed as a client gets it, measured in bytes: `length` would count its
    # characters, an eighth of the figure that no client pays.
    impact = "SELECT octet_length(graph_impact('{}', '{{\"max_depth\":3,\"limit\":10000}}')::text);"
    trivial = "SELECT count(*) FROM (SELECT '{}') x;"
    # Each add rolled back, so that every add meets the graph as loaded; run twice, so that
    # the first call's catalog reads count for half as much.
    add = "BEGIN;\nSELECT graph_edge_add('{}', '{}', 'imports');\nROLLBACK;"
    base_add = "BEGIN;\n" + trivial + "\nROLLBACK;"
    files = {
        "no rows": [neighbors.format(n, 1) for n in leaves],
        "neighbors depth 1": [neighbors.format(n, 1) for n in outs],
        "neighbors depth 3": [neighbors.format(n, 3) for n in outs],
        "impact depth 3": [impact.format(n) for n in ins],
        "edge add (median size)": [add.format(a, b) for a, b in adds * 2],
        "baseline": [trivial.format(n) for n in outs],
        "add baseline": [base_add.format(a) for a, _ in adds * 2],
    }
    paths = {}
    for name, lines in files.items():
        fd, path = tempfile.mkstemp(suffix=".sql", dir=WORK)
        with os.fdopen(fd, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.chmod(path, 0o644)
        base = "add baseline" if name.startswith("edge add") else "baseline"
        paths[name] = (path, len(lines), base)
    return paths


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", action="append", required=True, help="name=PATH/agentmem.so")
    ap.add_argument("--out", default=os.path.join(graph_bench.ROOT, "benches", "results",
                                                  "pg-query-count-latest.md"))
    ap.add_argument("--adds", type=int, default=40)
    ap.add_argument("--sqlite-ext", default=os.path.join(graph_bench.ROOT, "target", "release",
                                                         "libagentmem0"),
                    help="the SQLite extension edge_add_count.py picks the adds with")
    a = ap.parse_args()
    builds = [b.split("=", 1) for b in a.build]
    graph_text = graph_bench.load_text()
    graph = json.loads(graph_text)
    sample = graph_bench.sample(graph, 200, 42)
    files = None
    rows = {}
    with single_user.swapping_library() as use:
        try:
            data = load(graph_text)
            edge_pairs = edge_add_count.prepare(a.sqlite_ext, a.adds)
            files = query_files(sample, edge_pairs)
            for name, path in builds:
                use(path)
                per_call = {q: single_user.counted(data, "bench", f) / n
                            for q, (f, n, _) in files.items()}
                for q, (_, _, base) in files.items():
                    if not q.endswith("baseline"):
                        rows.setdefault(q, []).append(per_call[q] - per_call[base])
        finally:
            for path, _, _ in (files or {}).values():
                os.remove(path)
    lines = [f"`{' '.join(sys.argv)}`: instructions per call in a single-user backend "
             "(callgrind, less as many trivial statements), the dense bench graph's 200 "
             f"sampled nodes per query; the {len(edge_pairs)} edge adds nearest the median size "
             "(edge_add_count.py's), twice each, each rolled back.", ""]
    lines += single_user.count_table("query", builds, rows)
    report(lines, a.out)


if __name__ == "__main__":
    main()
