#!/usr/bin/env python3
"""Graph calls on Postgres timed inside the server, builds of the extension alternated: each
sample is one statement that calls the function for each of the bench's 200 sampled nodes
(`graph_neighbors` at depth 1 and 3, `graph_impact` at depth 3, its answer printed as a client
gets it), so a call's time is the statement's over 200, without the round trip, whose noise
on this machine is larger than most changes to a call.

    server_ab.py --build before=PATH/agentmem.so --build after=PATH/agentmem.so \\
                 [--rounds 4] [--repeats 7] [--out FILE]

The dense bench graph is the one pg_query_count.py loads into its own cluster
(/tmp/agentmem-query-count), made on first use; a server is started on it for the run and
stopped after. Each round puts each build in place in turn (the order swapped every round)
and opens a new connection, which loads it; a query's figure per round is the median of
`--repeats` statements after one to warm up, and the table gives the median of the rounds.
Needs root (to run the server as postgres and to swap the library); the builds must share the
schema version of the cluster's."""

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), HERE]
import graph_bench  # noqa: E402
import pg_query_count  # noqa: E402
import psycopg  # noqa: E402
import single_user  # noqa: E402
from benchlib import report  # noqa: E402

OVER = "FROM unnest(%s::text[]) AS n"
QUERIES = {
    "neighbors depth 1": ("SELECT sum((SELECT count(*) FROM graph_neighbors(n, "
                          "'{\"max_depth\":1,\"limit\":10000}'))) " + OVER, 0),
    "neighbors depth 3": ("SELECT sum((SELECT count(*) FROM graph_neighbors(n, "
                          "'{\"max_depth\":3,\"limit\":10000}'))) " + OVER, 0),
    "impact depth 3": ("SELECT sum(octet_length(graph_impact(n, "
                       "'{\"max_depth\":3,\"limit\":10000}')::text)) " + OVER, 1),
}


def per_call(conn, sql, nodes, repeats):
    """The median over `repeats` statements of a statement's time over its calls, in ms."""
    conn.execute(sql, (nodes,))
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        conn.execute(sql, (nodes,)).fetchall()
        times.append((time.perf_counter() - t) * 1000 / len(nodes))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", action="append", required=True, help="name=PATH/agentmem.so")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--out", default=os.path.join(graph_bench.ROOT, "benches", "results",
                                                  "pg-server-ab-latest.md"))
    a = ap.parse_args()
    builds = [b.split("=", 1) for b in a.build]
    graph_text = graph_bench.load_text()
    sample = graph_bench.sample(json.loads(graph_text), 200, 42)
    figures = {}
    with single_user.swapping_library() as use:
        data = pg_query_count.load(graph_text)
        with single_user.serving(data, pg_query_count.PORT) as dsn:
            for r in range(a.rounds):
                for name, path in (builds if r % 2 == 0 else builds[::-1]):
                    use(path)
                    with psycopg.connect(dsn + " dbname=bench", autocommit=True) as c:
                        for q, (sql, which) in QUERIES.items():
                            ms = per_call(c, sql, sample[which], a.repeats)
                            figures.setdefault(q, {}).setdefault(name, []).append(ms)
                    print(f"round {r + 1} {name}: " + ", ".join(
                        f"{q} {figures[q][name][-1]:.4f} ms" for q in QUERIES), file=sys.stderr)
    names = [name for name, _ in builds]
    lines = [f"`{' '.join(sys.argv)}`: ms per call inside one statement over the dense bench "
             f"graph's 200 sampled nodes, median of {a.repeats} statements per round, median "
             f"of {a.rounds} rounds with the builds alternated (each round's figures in "
             "brackets).", "",
             "| query | " + " | ".join(names) + " | last / first |",
             "|---|" + "---:|" * (len(names) + 1)]
    for q, by_build in figures.items():
        medians = [statistics.median(by_build[n]) for n in names]
        cells = " | ".join(
            f"{m:.4f} ({', '.join(f'{x:.4f}' for x in by_build[n])})"
            for m, n in zip(medians, names))
        lines.append(f"| {q} | {cells} | {medians[-1] / medians[0]:.3f} |")
    report(lines, a.out)


if __name__ == "__main__":
    main()
