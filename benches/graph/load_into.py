#!/usr/bin/env python3
"""graph_load of a small graph into a large indexed one: 50 new functions and about 240 call
edges between them and the graph's own functions (a fifth of them into the new ones), each
load in a transaction rolled back after it, builds alternated round by round. Usage:
  /usr/bin/python3 benches/graph/load_into.py --db target/bench-code/bench.db \\
      --ext before=/path/to/agentmem0 --ext after=dist/agentmem0 [--rounds 4]
The database is one `agentmem index` wrote (make bench-graph's tree bench writes
target/bench-code/bench.db, resource `bench`). Debian's Python is the one whose sqlite3 loads
extensions."""
import argparse, json, random, sqlite3, statistics, time


def graph(db_path, seed, n_nodes=50, n_edges=200):
    db = sqlite3.connect(db_path)
    ids = [r[0] for r in db.execute(
        "SELECT id FROM mem_graph_nodes WHERE resource_id = 'bench' "
        "AND type IN ('function', 'method') ORDER BY id")]
    db.close()
    rnd = random.Random(seed)
    nodes = [{"id": f"new:{seed}:{i}", "type": "function", "label": f"f{i}"} for i in range(n_nodes)]
    edges = []
    for _ in range(n_edges):
        a = nodes[rnd.randrange(n_nodes)]["id"]
        b = rnd.choice(ids) if rnd.random() < 0.7 else nodes[rnd.randrange(n_nodes)]["id"]
        if a != b:
            edges.append({"from": a, "to": b, "type": "calls"})
        if rnd.random() < 0.2:
            edges.append({"from": rnd.choice(ids), "to": a, "type": "calls"})
    return json.dumps({"nodes": nodes, "edges": edges})


def timed(db_path, ext, write):
    """Runs `write(db)` with the build `ext` loaded, in a transaction rolled back after it:
    (seconds, what `write` returned)."""
    db = sqlite3.connect(db_path, isolation_level=None)
    db.enable_load_extension(True)
    db.load_extension(ext)
    db.execute("BEGIN")
    t = time.perf_counter()
    out = write(db)
    secs = time.perf_counter() - t
    db.execute("ROLLBACK")
    db.close()
    return secs, out


def load(db_path, ext, g):
    return timed(db_path, ext, lambda db: json.loads(
        db.execute("SELECT graph_load('bench', ?)", (g,)).fetchone()[0]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--ext", action="append", required=True, help="NAME=PATH of a build")
    ap.add_argument("--rounds", type=int, default=4)
    a = ap.parse_args()
    builds = [e.split("=", 1) for e in a.ext]
    times = {name: [] for name, _ in builds}
    for r in range(a.rounds):
        g = graph(a.db, r)
        order = builds if r % 2 == 0 else builds[::-1]
        rows = set()
        for name, path in order:
            secs, out = load(a.db, path, g)
            times[name].append(secs)
            rows.add(out["closureRows"])
            print(f"round {r} {name}: {secs:.3f} s, {out}", flush=True)
        assert len(rows) == 1, f"the builds disagree on the closure's rows: {rows}"
    print("| build | p50 s | runs |\n|---|---:|---|")
    for name, _ in builds:
        runs = ", ".join(f"{t:.2f}" for t in times[name])
        print(f"| {name} | {statistics.median(times[name]):.3f} | {runs} |")


if __name__ == "__main__":
    main()
