#!/usr/bin/env python3
"""Edge adds on Postgres' dense bench graph, builds of the extension alternated: the graph of
graph_bench.py is loaded once into a template database, and each run copies it, reads the
closure and node tables into shared buffers (pg_prewarm), and times `graph_edge_add` on the
bench's sampled pairs, each its own transaction (with `--impact`, `graph_impact` at depth 3
of the bench's sampled impact nodes instead, read as text as the bench reads it; with
`--neighbors D`, `graph_neighbors` at depth D of its sampled start nodes, every column, as the
bench reads them). Between runs
the next build's library is put in place of the installed one (a new connection loads it); the
installed library is put back at the end. For a server of your own, with `pg_prewarm`
available (PostgreSQL's contrib).

    add_ab.py --pg "host=… user=postgres" --build before=PATH/agentmem.so \\
              --build after=PATH/agentmem.so [--rounds 3] [--adds 200] [--impact | --neighbors D]

The builds must share the schema version (the template is loaded by the first)."""
import argparse, json, os, shutil, statistics, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(ROOT, "benches"), HERE]
import graph_bench  # noqa: E402
import psycopg  # noqa: E402

TEMPLATE, RUN = "agentmem_add_template", "agentmem_add_run"
PREWARM = ["agentmem_private.mem_graph_closure", "agentmem_private.mem_graph_closure_pkey",
           "agentmem_private.mem_graph_closure_reverse", "mem_graph_nodes", "mem_graph_edges"]


def connect(dsn, db):
    return psycopg.connect(psycopg.conninfo.make_conninfo(dsn, dbname=db), autocommit=True)


def load_template(admin, dsn, graph_text):
    admin.execute(f"DROP DATABASE IF EXISTS {TEMPLATE}")
    admin.execute(f"CREATE DATABASE {TEMPLATE}")
    with connect(dsn, TEMPLATE) as c:
        c.execute("CREATE EXTENSION agentmem")
        c.execute("SELECT graph_load('bench', %s)", (graph_text,))
        c.execute("VACUUM ANALYZE")


def install(path, installed):
    """Puts the library at `path` in place as a new file: a backend that still maps the old
    one keeps it (writing over a mapped library kills such a backend with SIGBUS)."""
    shutil.copyfile(path, installed + ".new")
    os.replace(installed + ".new", installed)


def run(admin, dsn, pairs, queries):
    """The times (ms) of the adds of `pairs`, or of `queries` (a statement and its nodes), on
    a fresh copy of the template."""
    admin.execute(f"DROP DATABASE IF EXISTS {RUN}")
    admin.execute(f"CREATE DATABASE {RUN} TEMPLATE {TEMPLATE}")
    try:
        with connect(dsn, RUN) as c:
            c.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
            names = PREWARM + [r[0] for r in c.execute(
                "SELECT indexrelid::regclass::text FROM pg_index "
                "WHERE indrelid IN ('mem_graph_nodes'::regclass, 'mem_graph_edges'::regclass)")]
            for n in names:
                c.execute("SELECT pg_prewarm(%s::regclass)", (n,))
            if queries:
                raw, (sql, nodes) = graph_bench.raw_cursor(c), queries
                return graph_bench.timed(lambda n: raw.execute(sql, (n,)).fetchall(), nodes)
            return graph_bench.timed(
                lambda p: c.execute("SELECT graph_edge_add(%s, %s, 'imports')", p).fetchall(),
                pairs)
    finally:
        admin.execute(f"DROP DATABASE IF EXISTS {RUN}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pg", required=True)
    ap.add_argument("--build", action="append", required=True, help="NAME=PATH of agentmem.so")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--adds", type=int, default=200)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--impact", action="store_true")
    ap.add_argument("--neighbors", type=int, metavar="DEPTH")
    args = ap.parse_args()
    builds = [b.split("=", 1) for b in args.build]
    libdir = subprocess.run(["pg_config", "--pkglibdir"], capture_output=True, text=True,
                            check=True).stdout.strip()
    installed = os.path.join(libdir, "agentmem.so")
    kept = installed + ".add_ab"
    shutil.copyfile(installed, kept)
    graph_text = graph_bench.load_text()
    sample = graph_bench.sample(json.loads(graph_text), args.adds, args.seed)
    pairs, queries = sample[2], None
    if args.impact:
        queries = ("SELECT graph_impact(%s, '{\"max_depth\":3,\"limit\":10000}')", sample[1])
    elif args.neighbors:
        queries = (f"SELECT {graph_bench.NEIGHBOR_COLUMNS} FROM graph_neighbors(%s, "
                   f"'{{\"max_depth\":{args.neighbors},\"limit\":10000}}')", sample[0])
    admin = connect(args.pg, "postgres")
    results = {name: [] for name, _ in builds}
    try:
        install(builds[0][1], installed)
        load_template(admin, args.pg, graph_text)
        for r in range(args.rounds):
            # Each round swaps the order, so neither build always runs first.
            for name, path in (builds if r % 2 == 0 else builds[::-1]):
                install(path, installed)
                t = run(admin, args.pg, pairs, queries)
                results[name].append(t)
                print(f"round {r + 1} {name}: p50 {statistics.median(t):.3f} ms, "
                      f"mean {statistics.mean(t):.3f} ms", file=sys.stderr)
    finally:
        install(kept, installed)
        os.remove(kept)
        admin.execute(f"DROP DATABASE IF EXISTS {TEMPLATE}")
    what = ("`graph_impact` calls" if args.impact else
            f"`graph_neighbors` calls at depth {args.neighbors}" if queries else "edge adds")
    print(f"# {what[0].upper()}{what[1:]} on Postgres, builds alternated ({time.strftime('%Y-%m-%d')})\n")
    print(f"`{' '.join(sys.argv)}`: {len(queries[1] if queries else pairs)} {what} per run, each its own "
          "transaction, on a fresh copy of the loaded bench graph with its tables in shared "
          "buffers.\n")
    print("| build | p50 of each run, ms | median of the runs' p50 | median of the runs' mean |")
    print("|---|---|---:|---:|")
    for name, runs in results.items():
        p50s = [statistics.median(t) for t in runs]
        means = [statistics.mean(t) for t in runs]
        print(f"| {name} | {', '.join(f'{p:.3f}' for p in p50s)} | "
              f"{statistics.median(p50s):.3f} | {statistics.median(means):.3f} |")


if __name__ == "__main__":
    main()
