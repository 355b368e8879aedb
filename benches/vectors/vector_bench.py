#!/usr/bin/env python3
"""Exact top-10 vector search: agentmem's mem_vector_search against sqlite-vec (vec0, brute
force) on SQLite and against pgvector (exact scan, and HNSW for reference) on Postgres, on the
same seeded vectors and queries.

    vector_bench.py --ext dist/agentmem0 [--pg "host=… dbname=…"] [--n 100000]
                    [--dims 384,1024] [--queries 100] [--out FILE]

Vectors are uniform in [-1, 1) from a seeded generator (speed does not depend on their
meaning); every engine answers the same queries, cosine distance, top 10, all rows fetched.
Each engine's answers are checked against numpy's brute force (recall@10 of the ids). Needs
Debian's python3 (its sqlite3 loads extensions), numpy, sqlite-vec and psycopg from PyPI
(benches/vectors/README.md). pgvector is used when `CREATE EXTENSION vector` works; otherwise
its rows say why.
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.dirname(HERE))
from benchlib import drop_sqlite, fresh_sqlite, pct, pg_database  # noqa: E402
K = 10


def timed(run, qs):
    out, answers = [], []
    for q in qs:
        t = time.perf_counter()
        answers.append(run(q))
        out.append((time.perf_counter() - t) * 1000)
    return out, answers


def truth(data, qs):
    """The exact top-10 by cosine distance (numpy, float64)."""
    d = data.astype(np.float64)
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    out = []
    for q in qs:
        qq = q.astype(np.float64) / np.linalg.norm(q)
        sims = d @ qq
        out.append(set(np.argsort(-sims, kind="stable")[:K].tolist()))
    return out


def recall(answers, want):
    return statistics.mean(len(set(a) & w) / K for a, w in zip(answers, want))


def bench_sqlite(args, data, qs):
    c = fresh_sqlite("agentmem-vector-bench", args.ext, vec=True)
    n, dims = data.shape
    # Owners: one memory per vector (the memory's id is its row number).
    c.execute("BEGIN")
    c.executemany(
        "INSERT INTO mem_memories (id, resource_id, type, content) VALUES (?, 'bench', 'gotcha', ?)",
        ((str(i), f"memory {i}") for i in range(n)))
    c.execute("COMMIT")
    t = time.perf_counter()
    c.execute("BEGIN")
    for i in range(n):
        c.execute("SELECT mem_embed_set('memory', ?, 'bench', ?)", (str(i), data[i].tobytes()))
    c.execute("COMMIT")
    ours_load = time.perf_counter() - t
    c.execute(f"CREATE VIRTUAL TABLE vec USING vec0(embedding float[{dims}] distance_metric=cosine)")
    t = time.perf_counter()
    c.execute("BEGIN")
    c.executemany("INSERT INTO vec (rowid, embedding) VALUES (?, ?)",
                  ((i, data[i].tobytes()) for i in range(n)))
    c.execute("COMMIT")
    peer_load = time.perf_counter() - t
    ours = lambda q: [int(r[0]) for r in c.execute(
        "SELECT id FROM mem_vector_search('bench', ?)", (q.tobytes(),)).fetchall()]
    peer = lambda q: [r[0] for r in c.execute(
        f"SELECT rowid FROM vec WHERE embedding MATCH ? AND k = {K}", (q.tobytes(),)).fetchall()]
    for q in qs[:3]:
        ours(q), peer(q)
    o, oa = timed(ours, qs)
    p, pa = timed(peer, qs)
    c.close()
    drop_sqlite("agentmem-vector-bench")
    return {"ours": o, "ours_answers": oa, "peer": p, "peer_answers": pa,
            "ours_load": ours_load, "peer_load": peer_load, "peer_name": "sqlite-vec vec0"}


def bench_postgres(args, data, qs):
    with pg_database(args.pg, "agentmem_vector_bench") as c:
        n, dims = data.shape
        c.execute("CREATE EXTENSION agentmem")
        with c.transaction():
            with c.cursor() as cur:
                cur.executemany(
                    "INSERT INTO mem_memories (id, resource_id, type, content) VALUES (%s, 'bench', 'gotcha', %s)",
                    [(str(i), f"memory {i}") for i in range(n)])
        t = time.perf_counter()
        with c.transaction():
            with c.cursor() as cur:
                cur.executemany("SELECT mem_embed_set('memory', %s, 'bench', %s)",
                                [(str(i), data[i].tobytes()) for i in range(n)])
        ours_load = time.perf_counter() - t
        ours = lambda q: [int(r[0]) for r in c.execute(
            "SELECT id FROM mem_vector_search('bench', %s)", (q.tobytes(),)).fetchall()]
        for q in qs[:3]:
            ours(q)
        o, oa = timed(ours, qs)
        res = {"ours": o, "ours_answers": oa, "ours_load": ours_load}
        try:
            c.execute("CREATE EXTENSION vector")
        except Exception as e:  # pgvector not installed here
            res["peer_note"] = f"pgvector unavailable: {str(e).splitlines()[0]}"
            return res
        c.execute(f"CREATE TABLE vec (id bigint PRIMARY KEY, embedding vector({dims}))")
        lit = lambda v: "[" + ",".join(repr(float(x)) for x in v) + "]"
        t = time.perf_counter()
        with c.cursor().copy("COPY vec (id, embedding) FROM STDIN") as cp:
            for i in range(n):
                cp.write_row((i, lit(data[i])))
        res["peer_load"] = time.perf_counter() - t
        c.execute("ANALYZE vec")
        exact = lambda q: [r[0] for r in c.execute(
            f"SELECT id FROM vec ORDER BY embedding <=> %s::vector LIMIT {K}", (lit(q),)).fetchall()]
        for q in qs[:3]:
            exact(q)
        res["peer"], res["peer_answers"] = timed(exact, qs)
        res["peer_name"] = "pgvector exact scan"
        # The graph must fit in memory for pgvector's fast build.
        c.execute("SET maintenance_work_mem = '2GB'")
        t = time.perf_counter()
        c.execute("CREATE INDEX ON vec USING hnsw (embedding vector_cosine_ops)")
        res["hnsw_build"] = time.perf_counter() - t
        for q in qs[:3]:
            exact(q)
        res["hnsw"], res["hnsw_answers"] = timed(exact, qs)
        return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ext", default=os.path.join(ROOT, "dist", "agentmem0"))
    ap.add_argument("--pg", default=os.environ.get("AGENTMEM_PG"))
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--dims", default="384,1024")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", default=os.path.join(ROOT, "benches", "results", "vectors-latest.md"))
    args = ap.parse_args()
    lines = [f"# Vector search benchmark ({time.strftime('%Y-%m-%d')})", "",
             f"`{' '.join(sys.argv)}` — {args.n} vectors uniform in [-1, 1) (seed {args.seed}), "
             f"{args.queries} queries, cosine, exact top {K}, all rows fetched. Latencies in ms; "
             "ratio = peer p50 / agentmem p50 (above 1: agentmem faster); recall@10 against "
             "numpy's brute force. Targets: at or below sqlite-vec's exact top-10 (SQLite) and "
             "pgvector's exact scan (Postgres).", "",
             "| backend | dims | engine | load s | p50 | p95 | recall@10 | peer p50 / ours |",
             "|---|---:|---|---:|---:|---:|---:|---:|"]
    for dims in [int(x) for x in args.dims.split(",")]:
        rng = np.random.default_rng(args.seed + dims)
        data = rng.uniform(-1, 1, size=(args.n, dims)).astype(np.float32)
        qs = rng.uniform(-1, 1, size=(args.queries, dims)).astype(np.float32)
        want = truth(data, qs)
        runs = [("sqlite", bench_sqlite(args, data, qs))]
        print(f"sqlite {dims} done", file=sys.stderr)
        if args.pg:
            runs.append(("postgres", bench_postgres(args, data, qs)))
            print(f"postgres {dims} done", file=sys.stderr)
        for backend, r in runs:
            o50 = statistics.median(r["ours"])
            lines.append(f"| {backend} | {dims} | agentmem | {r['ours_load']:.1f} | {o50:.2f} | "
                         f"{pct(r['ours'], 0.95):.2f} | {recall(r['ours_answers'], want):.3f} | |")
            if "peer" in r:
                p50 = statistics.median(r["peer"])
                lines.append(f"| {backend} | {dims} | {r['peer_name']} | {r['peer_load']:.1f} | "
                             f"{p50:.2f} | {pct(r['peer'], 0.95):.2f} | "
                             f"{recall(r['peer_answers'], want):.3f} | {p50 / o50:.2f}× |")
            if "hnsw" in r:
                h50 = statistics.median(r["hnsw"])
                lines.append(f"| {backend} | {dims} | pgvector HNSW (approximate; build "
                             f"{r['hnsw_build']:.0f} s) | | {h50:.2f} | {pct(r['hnsw'], 0.95):.2f} | "
                             f"{recall(r['hnsw_answers'], want):.3f} | {h50 / o50:.2f}× |")
            if "peer_note" in r:
                lines.append(f"| {backend} | {dims} | {r['peer_note']} | | | | | |")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    open(args.out, "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
