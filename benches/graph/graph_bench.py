#!/usr/bin/env python3
"""The knowledge-graph benchmark: agentmem's closure against a recursive CTE over the same
edges table (SQLite and Postgres) and against Kùzu, an embedded graph database, on the module,
`use` and item graph of real Rust crates (build_code_graph.py).

    graph_bench.py --ext dist/agentmem0 [--pg "host=… dbname=…"] [--queries 200]
                   [--max-crates N] [--out FILE]

Measures per engine: bulk load time and size (closure rows for agentmem), then p50/p95 over the
same sampled nodes of: neighbours at depth 1 and 3 (out), impact at depth 3 (in), and for
agentmem edge add and edge remove (each its own transaction). Every query fetches all its rows.
Needs Debian's python3 (its sqlite3 loads extensions), `kuzu` and `psycopg` from PyPI
(benches/graph/README.md).
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.dirname(HERE))
from benchlib import fresh_sqlite, pct, pg_database, sqlite_file  # noqa: E402

CTE_OUT = """WITH RECURSIVE r(n, d) AS (
  SELECT {p1}, 0
  UNION
  SELECT e.to_id, r.d + 1 FROM r JOIN mem_graph_edges e ON e.from_id = r.n
  WHERE r.d < {p2} AND e.stale_at IS NULL AND e.invalid_at IS NULL)
SELECT n, min(d) FROM r WHERE n <> {p1} GROUP BY n"""
CTE_IN = CTE_OUT.replace("SELECT e.to_id", "SELECT e.from_id").replace(
    "e.from_id = r.n", "e.to_id = r.n")
# The same walk keeping each node's path (what graph_neighbors returns): every simple path is
# enumerated, then the shortest per node is kept.
CTE_PATHS_SQLITE = """WITH RECURSIVE r(n, d, path) AS (
  SELECT ?1, 0, ',' || ?1 || ','
  UNION ALL
  SELECT e.to_id, r.d + 1, r.path || e.to_id || ',' FROM r JOIN mem_graph_edges e ON e.from_id = r.n
  WHERE r.d < ?2 AND e.stale_at IS NULL AND e.invalid_at IS NULL
    AND instr(r.path, ',' || e.to_id || ',') = 0)
SELECT r.n, min(r.d), r.path, g.type, g.label, g.file_path
FROM r JOIN mem_graph_nodes g ON g.id = r.n WHERE r.d > 0 GROUP BY r.n"""
CTE_PATHS_PG = """WITH RECURSIVE r(n, d, path) AS (
  SELECT %(n)s::text COLLATE "C", 0, ARRAY[%(n)s::text COLLATE "C"]
  UNION ALL
  SELECT e.to_id, r.d + 1, r.path || e.to_id FROM r JOIN mem_graph_edges e ON e.from_id = r.n
  WHERE r.d < %(d)s AND e.stale_at IS NULL AND e.invalid_at IS NULL AND NOT e.to_id = ANY(r.path))
SELECT DISTINCT ON (r.n) r.n, r.d, r.path, g.type, g.label, g.file_path
FROM r JOIN mem_graph_nodes g ON g.id = r.n WHERE r.d > 0 ORDER BY r.n, r.d"""


def timed(run, args_list):
    out = []
    for a in args_list:
        t = time.perf_counter()
        run(a)
        out.append((time.perf_counter() - t) * 1000)
    return out


def sample(graph, n, seed):
    rng = random.Random(seed)
    outs = sorted({e["from"] for e in graph["edges"] if e["type"] != "defines"})
    ins = sorted({e["to"] for e in graph["edges"] if e["type"] in ("imports", "depends")})
    files = sorted(x["id"] for x in graph["nodes"] if x["type"] == "file")
    linked = {(e["from"], e["to"]) for e in graph["edges"]}
    pairs = []
    while len(pairs) < n:
        a, b = rng.choice(files), rng.choice(files)
        if a != b and (a, b) not in linked:
            pairs.append((a, b))
    return rng.sample(outs, min(n, len(outs))), rng.sample(ins, min(n, len(ins))), pairs


def bench_sqlite(graph_text, graph, s, args):
    c = fresh_sqlite("agentmem-graph-bench", args.ext)
    t = time.perf_counter()
    loaded = json.loads(c.execute("SELECT graph_load('bench', ?)", (graph_text,)).fetchone()[0])
    load_s = time.perf_counter() - t
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = os.path.getsize(sqlite_file("agentmem-graph-bench"))
    outs, ins, pairs = s
    ours = {
        "neighbors depth 1": timed(lambda n: c.execute(
            "SELECT * FROM graph_neighbors(?, '{\"max_depth\":1,\"limit\":10000}')", (n,)).fetchall(), outs),
        "neighbors depth 3": timed(lambda n: c.execute(
            "SELECT * FROM graph_neighbors(?, '{\"max_depth\":3,\"limit\":10000}')", (n,)).fetchall(), outs),
        "impact depth 3": timed(lambda n: c.execute(
            "SELECT graph_impact(?, '{\"max_depth\":3,\"limit\":10000}')", (n,)).fetchall(), ins),
    }
    peer = {
        "neighbors depth 1": timed(lambda n: c.execute(CTE_OUT.format(p1="?1", p2="?2"), (n, 1)).fetchall(), outs),
        "neighbors depth 3": timed(lambda n: c.execute(CTE_OUT.format(p1="?1", p2="?2"), (n, 3)).fetchall(), outs),
        "impact depth 3": timed(lambda n: c.execute(CTE_IN.format(p1="?1", p2="?2"), (n, 3)).fetchall(), ins),
        "neighbors depth 3, with paths": timed(lambda n: c.execute(CTE_PATHS_SQLITE, (n, 3)).fetchall(), outs),
    }
    ours["neighbors depth 3, with paths"] = ours["neighbors depth 3"]
    ids = []
    ours["edge add"] = timed(lambda p: ids.append(c.execute(
        "SELECT graph_edge_add(?, ?, 'imports')", p).fetchone()[0]), pairs)
    ours["edge remove"] = timed(lambda i: c.execute("SELECT graph_edge_remove(?)", (i,)).fetchone(), ids)
    c.close()
    return {"load_s": load_s, "rows": loaded["closureRows"], "bytes": size, "ours": ours, "peer": peer}


def bench_postgres(graph_text, s, args):
    with pg_database(args.pg, "agentmem_graph_bench") as c:
        c.execute("CREATE EXTENSION agentmem")
        t = time.perf_counter()
        loaded = c.execute("SELECT graph_load('bench', %s)", (graph_text,)).fetchone()[0]
        load_s = time.perf_counter() - t
        c.execute("VACUUM ANALYZE")
        size = c.execute("SELECT pg_database_size(current_database())").fetchone()[0]
        outs, ins, pairs = s
        q = lambda sql: (lambda a: c.execute(sql, a if isinstance(a, tuple) else (a,)).fetchall())
        ours = {
            "neighbors depth 1": timed(q("SELECT * FROM graph_neighbors(%s, '{\"max_depth\":1,\"limit\":10000}')"), outs),
            "neighbors depth 3": timed(q("SELECT * FROM graph_neighbors(%s, '{\"max_depth\":3,\"limit\":10000}')"), outs),
            "impact depth 3": timed(q("SELECT graph_impact(%s, '{\"max_depth\":3,\"limit\":10000}')"), ins),
        }
        peer = {
            "neighbors depth 1": timed(lambda n: c.execute(CTE_OUT.format(p1="(%(n)s::text COLLATE \"C\")", p2="1"), {"n": n}).fetchall(), outs),
            "neighbors depth 3": timed(lambda n: c.execute(CTE_OUT.format(p1="(%(n)s::text COLLATE \"C\")", p2="3"), {"n": n}).fetchall(), outs),
            "impact depth 3": timed(lambda n: c.execute(CTE_IN.format(p1="(%(n)s::text COLLATE \"C\")", p2="3"), {"n": n}).fetchall(), ins),
            "neighbors depth 3, with paths": timed(lambda n: c.execute(CTE_PATHS_PG, {"n": n, "d": 3}).fetchall(), outs),
        }
        ours["neighbors depth 3, with paths"] = ours["neighbors depth 3"]
        ids = []
        ours["edge add"] = timed(lambda p: ids.append(c.execute(
            "SELECT graph_edge_add(%s, %s, 'imports')", p).fetchone()[0]), pairs)
        ours["edge remove"] = timed(lambda i: c.execute("SELECT graph_edge_remove(%s)", (i,)).fetchone(), ids)
        return {"load_s": load_s, "rows": loaded["closureRows"], "bytes": size, "ours": ours, "peer": peer}


def bench_kuzu(graph, s):
    import kuzu
    d = "/tmp/agentmem-graph-bench-kuzu"
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    with open(os.path.join(d, "nodes.csv"), "w") as f:
        for n in graph["nodes"]:
            f.write(f"{n['id']},{n['type']}\n")
    with open(os.path.join(d, "edges.csv"), "w") as f:
        for e in graph["edges"]:
            f.write(f"{e['from']},{e['to']},{e['type']}\n")
    db = kuzu.Database(os.path.join(d, "db"))
    c = kuzu.Connection(db)
    t = time.perf_counter()
    c.execute("CREATE NODE TABLE N(id STRING, type STRING, PRIMARY KEY (id))")
    c.execute("CREATE REL TABLE E(FROM N TO N, type STRING)")
    c.execute(f"COPY N FROM '{d}/nodes.csv' (HEADER=false)")
    c.execute(f"COPY E FROM '{d}/edges.csv' (HEADER=false)")
    load_s = time.perf_counter() - t
    outs, ins, _ = s
    run = lambda q: (lambda n: c.execute(q, {"id": n}).get_all())
    times = {
        "neighbors depth 1": timed(run("MATCH (a:N {id: $id})-[:E*1..1]->(b:N) RETURN DISTINCT b.id"), outs),
        "neighbors depth 3": timed(run("MATCH (a:N {id: $id})-[:E*1..3]->(b:N) RETURN DISTINCT b.id"), outs),
        "impact depth 3": timed(run("MATCH (a:N {id: $id})<-[:E*1..3]-(b:N) RETURN DISTINCT b.id"), ins),
    }
    return {"load_s": load_s, "times": times}


def row(name, ours, peer, kz=None):
    cells = [name, f"{statistics.median(ours):.3f}", f"{pct(ours, 0.95):.3f}"]
    for other in (peer, kz):
        if other:
            cells += [f"{statistics.median(other):.3f}",
                      f"{statistics.median(other) / statistics.median(ours):.1f}×"]
        else:
            cells += ["—", "—"]
    return "| " + " | ".join(cells) + " |"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ext", default=os.path.join(ROOT, "dist", "agentmem0"))
    ap.add_argument("--pg", default=os.environ.get("AGENTMEM_PG"))
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--max-crates", type=int, default=0)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", default=os.path.join(ROOT, "benches", "results", "graph-latest.md"))
    args = ap.parse_args()
    gpath = os.path.join(ROOT, "target", "bench-graph", f"graph-{args.max_crates or 'all'}.json")
    if not os.path.exists(gpath):
        cmd = [sys.executable, os.path.join(HERE, "build_code_graph.py"), "--items", "--out", gpath]
        if args.max_crates:
            cmd += ["--max-crates", str(args.max_crates)]
        subprocess.run(cmd, check=True)
    graph_text = open(gpath).read()
    graph = json.loads(graph_text)
    s = sample(graph, args.queries, args.seed)
    results = {"sqlite": bench_sqlite(graph_text, graph, s, args)}
    print("sqlite done", file=sys.stderr)
    if args.pg:
        results["postgres"] = bench_postgres(graph_text, s, args)
        print("postgres done", file=sys.stderr)
    try:
        kz = bench_kuzu(graph, s)
    except ImportError:
        kz = None
    lines = [
        f"# Knowledge-graph benchmark ({time.strftime('%Y-%m-%d')})", "",
        f"`{' '.join(sys.argv)}` — the module, `use` and item graph of {len(graph['nodes'])} nodes "
        f"and {len(graph['edges'])} edges built from the Rust crates in the local cargo registry "
        f"(benches/graph/build_code_graph.py); {len(s[0])} sampled start nodes per query. "
        "Latencies in ms, p50 over the same nodes for every engine, all rows fetched; ratios are "
        "peer p50 / agentmem p50 (above 1: agentmem faster). Targets: depth ≤ 3 p50 ≤ 1 ms (SQLite), "
        "≤ 3 ms (Postgres), ≥ 20× the recursive CTE, faster than Kùzu; edge add ≤ 1 ms p50.", ""]
    for backend, r in results.items():
        lines += [f"## {backend}", "",
                  f"Load (`graph_load`): {r['load_s']:.1f} s, {r['rows']} closure rows, database "
                  f"{r['bytes'] / 1e6:.0f} MB" + (f"; Kùzu COPY {kz['load_s']:.1f} s" if kz else "") + ".", "",
                  "| query | agentmem p50 | p95 | recursive CTE p50 | CTE / ours | Kùzu p50 | Kùzu / ours |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for q in ("neighbors depth 1", "neighbors depth 3", "impact depth 3"):
            lines.append(row(q, r["ours"][q], r["peer"][q], kz["times"][q] if kz else None))
        q = "neighbors depth 3, with paths"
        lines.append(row(q, r["ours"][q], r["peer"][q]))
        for q in ("edge add", "edge remove"):
            lines.append(row(q, r["ours"][q], None))
        lines.append("")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    open(args.out, "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
