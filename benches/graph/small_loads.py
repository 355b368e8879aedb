#!/usr/bin/env python3
"""graph_load of small graphs into a large indexed one, beside the same nodes and edges written
one call each (graph_node_upsert, graph_edge_add): new functions and call edges between them and
the graph's own functions, as load_into.py makes them, at several sizes. Each write runs in a
transaction rolled back after it; the builds alternate round by round. Usage:
  /usr/bin/python3 benches/graph/small_loads.py --db target/bench-code/bench.db \\
      --ext before=/path/to/agentmem0 --ext after=dist/agentmem0 [--rounds 5] [--sizes 1x2,10x40]
The database is one `agentmem index` wrote (make bench-graph's tree bench writes
target/bench-code/bench.db, resource `bench`). Debian's Python is the one whose sqlite3 loads
extensions."""
import argparse, json, statistics

from load_into import graph, timed


def one_call_each(g):
    def write(db):
        for n in g["nodes"]:
            db.execute("SELECT graph_node_upsert('bench', ?)", (json.dumps(n),)).fetchone()
        for e in g["edges"]:
            db.execute("SELECT graph_edge_add(?, ?, ?)", (e["from"], e["to"], e["type"])).fetchone()
    return write


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--ext", action="append", required=True, help="NAME=PATH of a build")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--sizes", default="1x2,10x40,50x200,200x1000")
    a = ap.parse_args()
    builds = [e.split("=", 1) for e in a.ext]
    lines = ["| nodes × edges asked | " + " | ".join(f"{n}: graph_load p50 ms" for n, _ in builds)
             + " | one call each p50 ms (" + builds[-1][0] + ") |",
             "|---|" + "---:|" * (len(builds) + 1)]
    for size in a.sizes.split(","):
        n_nodes, n_edges = map(int, size.split("x"))
        times = {name: [] for name, _ in builds}
        calls = []
        for r in range(a.rounds):
            g = json.loads(graph(a.db, 100 + r, n_nodes, n_edges))
            text = json.dumps(g)
            for name, path in (builds if r % 2 == 0 else builds[::-1]):
                times[name].append(timed(a.db, path, lambda db: db.execute(
                    "SELECT graph_load('bench', ?)", (text,)).fetchone())[0])
            calls.append(timed(a.db, builds[-1][1], one_call_each(g))[0])
        cells = [f"{1000 * statistics.median(times[n]):.1f}" for n, _ in builds]
        lines.append(f"| {n_nodes} × {n_edges} | " + " | ".join(cells)
                     + f" | {1000 * statistics.median(calls):.1f} |")
        print(lines[-1], flush=True)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
