#!/usr/bin/env python3
"""mem_recall_hybrid at 100k memories: p50/p95 on SQLite and Postgres, without and with
384-dim query vectors, beside the seed's own stack as the peer — FTS5 (or tsvector) BM25 top
20, sqlite-vec (or pgvector) top 30, reciprocal rank fusion in the client — on the same data
and queries.

    recall_bench.py --ext dist/agentmem0 [--pg "host=… dbname=…"] [--n 100000]
                    [--dims 384] [--queries 200] [--out FILE]

The memories come from a seeded generator (speed does not depend on their meaning): a
Zipf-distributed vocabulary of prose words and code identifiers, 1–3 related files each out of
2 000 files, which form a graph of 6 000 imports. Half the queries name the files the agent is
working in (`current_files`), a quarter are identifier queries. The peer does less than
agentmem (no graph list, no boost, no phase/trust/decay weights, no token packing): its figure
is a floor for doing the same in the client.
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.dirname(HERE))
from benchlib import drop_sqlite, fresh_sqlite, pct, pg_database, report  # noqa: E402
TYPES = ["gotcha", "decision", "pattern", "error_pattern", "module_insight", "dead_end",
         "workflow_recipe", "requirement", "causal_dependency"]
SOURCES = ["agent_explicit", "observer_inferred", "qa_auto", "user_taught"]
FILES = 2000


def vocabulary(rng):
    syll = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "shi", "pe", "dra", "con", "fig", "ser",
            "log", "ent", "ion", "at", "us", "or", "em"]
    words = sorted({"".join(rng.choice(syll, size=rng.integers(2, 4))) for _ in range(4000)})
    idents = []
    for i in range(600):
        a, b = rng.choice(words, size=2)
        idents.append(f"{a}{b.capitalize()}" if i % 2 else f"{a}_{b}")
    return words, idents


def generate(n, seed):
    rng = np.random.default_rng(seed)
    words, idents = vocabulary(rng)
    pool = words + idents
    zipf = 1.0 / np.arange(1, len(pool) + 1) ** 1.1
    zipf /= zipf.sum()
    order = rng.permutation(len(pool))
    memories = []
    for i in range(n):
        k = int(rng.integers(12, 31))
        text = " ".join(pool[order[j]] for j in rng.choice(len(pool), size=k, p=zipf))
        files = sorted({f"src/m{int(f) // 50}/f{int(f)}.rs" for f in rng.integers(0, FILES, size=rng.integers(1, 4))})
        memories.append((f"m{i}", TYPES[i % len(TYPES)], f"{text} (note {i})", json.dumps(files),
                         SOURCES[i % len(SOURCES)]))
    nodes = [{"id": f"f{f}", "type": "file", "label": f"f{f}.rs", "file_path": f"src/m{f // 50}/f{f}.rs"}
             for f in range(FILES)]
    edges, seen = [], set()
    while len(edges) < 3 * FILES:
        a, b = (int(x) for x in rng.integers(0, FILES, size=2))
        if a != b and (a, b) not in seen:
            seen.add((a, b))
            edges.append({"from": f"f{a}", "to": f"f{b}", "type": "imports"})
    queries = []
    for q in range(200):
        if q % 4 == 0:
            text = f"{idents[int(rng.integers(0, len(idents)))]} {words[int(rng.integers(0, 400))]}"
        else:
            text = " ".join(pool[order[j]] for j in rng.choice(400, size=3))
        opts = {"resource_id": "bench", "now": 1_800_000_000_000}
        if q % 2 == 0:
            opts["current_files"] = [n["file_path"] for n in rng.choice(nodes, size=2)]
        queries.append((text, opts))
    return memories, {"nodes": nodes, "edges": edges}, queries


def rrf(lists, k=60):
    scores = {}
    for weight, ids in lists:
        for rank, i in enumerate(ids):
            scores[i] = scores.get(i, 0.0) + weight / (k + rank + 1)
    return sorted(scores, key=lambda i: -scores[i])[:20]


def timed(run, queries):
    out = []
    for q in queries:
        t = time.perf_counter()
        run(q)
        out.append((time.perf_counter() - t) * 1000)
    return out


def fts_query(text):
    return " OR ".join('"' + w.replace('"', "") + '"' for w in text.split())


def bench_sqlite(args, memories, graph, queries, vectors, qvecs):
    c = fresh_sqlite("agentmem-recall-bench", args.ext, vec=True)
    t = time.perf_counter()
    c.execute("BEGIN")
    c.executemany("INSERT INTO mem_memories (id, resource_id, type, content, related_files, source, "
                  "last_accessed_at, created_at) VALUES (?, 'bench', ?, ?, ?, ?, 1700000000000, 1700000000000)",
                  memories)
    c.execute("SELECT graph_load('bench', ?)", (json.dumps(graph),))
    c.execute("COMMIT")
    c.execute("SELECT mem_optimize()")
    load = time.perf_counter() - t
    c.execute("CREATE VIRTUAL TABLE fts USING fts5(content)")
    c.execute("INSERT INTO fts (rowid, content) SELECT seq, content FROM mem_memories")
    res = {"load": load}
    run = lambda q: c.execute("SELECT kind, id, content, score FROM mem_recall_hybrid(?, ?)",
                              (q[0], json.dumps(q[1]))).fetchall()

    def peer(q):
        ids = [r[0] for r in c.execute("SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT 20",
                                       (fts_query(q[0]),))]
        lists = [(0.25, ids)]
        if len(q) > 2:
            lists.append((0.5, [r[0] for r in c.execute(
                "SELECT rowid FROM vec WHERE embedding MATCH ? AND k = 30", (q[2].tobytes(),))]))
        top = rrf(lists)
        marks = ",".join("?" * len(top))
        return c.execute(f"SELECT id, content FROM mem_memories WHERE seq IN ({marks})", top).fetchall()

    for q in queries[:5]:
        run(q), peer(q)
    res["ours"], res["peer"] = timed(run, queries), timed(peer, queries)
    if vectors is not None:
        t = time.perf_counter()
        c.execute("BEGIN")
        c.executemany("INSERT INTO mem_embeddings (kind, owner_id, model, dims, vector) VALUES ('memory', ?, 'bench', ?, ?)",
                      ((m[0], vectors.shape[1], vectors[i].tobytes()) for i, m in enumerate(memories)))
        c.execute("COMMIT")
        res["vec_load"] = time.perf_counter() - t
        c.execute(f"CREATE VIRTUAL TABLE vec USING vec0(embedding float[{vectors.shape[1]}] distance_metric=cosine)")
        c.execute("BEGIN")
        c.executemany("INSERT INTO vec (rowid, embedding) VALUES (?, ?)",
                      ((i + 1, vectors[i].tobytes()) for i in range(len(memories))))
        c.execute("COMMIT")
        vq = [(t_, dict(o, model="bench", query_vector=[float(x) for x in v]), v)
              for (t_, o), v in zip(queries, qvecs)]
        for q in vq[:5]:
            run(q), peer(q)
        res["ours_vec"], res["peer_vec"] = timed(run, vq), timed(peer, vq)
    c.close()
    drop_sqlite("agentmem-recall-bench")
    return res


def bench_postgres(args, memories, graph, queries, vectors, qvecs):
    with pg_database(args.pg, "agentmem_recall_bench") as c:
        c.execute("CREATE EXTENSION agentmem")
        t = time.perf_counter()
        with c.transaction():
            with c.cursor() as cur:
                cur.executemany(
                    "INSERT INTO mem_memories (id, resource_id, type, content, related_files, source, "
                    "last_accessed_at, created_at) VALUES (%s, 'bench', %s, %s, %s::jsonb, %s, 1700000000000, 1700000000000)",
                    memories)
            c.execute("SELECT graph_load('bench', %s)", (json.dumps(graph),))
        c.execute("SELECT mem_optimize()")
        # Only the loaded tables: statistics taken of an empty mem_embeddings would plan the
        # vector load's lookups as scans.
        # Derived tables live in the extension's private schema: found by name in the catalog.
        for table in ("mem_memories", "mem_memory_files", "mem_graph_nodes", "mem_graph_closure"):
            schema = c.execute("SELECT relnamespace::regnamespace::text FROM pg_class "
                               "WHERE relname = %s AND relkind IN ('r', 'p')", (table,)).fetchone()[0]
            c.execute("VACUUM ANALYZE %s.%s" % (schema, table))
        res = {"load": time.perf_counter() - t}
        c.execute("CREATE TABLE fts (seq bigint PRIMARY KEY, tsv tsvector)")
        c.execute("INSERT INTO fts SELECT seq, to_tsvector('simple', content) FROM mem_memories")
        c.execute("CREATE INDEX ON fts USING gin (tsv)")
        c.execute("ANALYZE fts")
        run = lambda q: c.execute("SELECT kind, id, content, score FROM mem_recall_hybrid(%s, %s)",
                                  (q[0], json.dumps(q[1]))).fetchall()
        have_vector = True
        try:
            c.execute("CREATE EXTENSION vector")
        except Exception as e:
            have_vector = False
            res["peer_note"] = f"pgvector unavailable: {str(e).splitlines()[0]}"

        def peer(q):
            tsq = " | ".join(w.replace("'", "") for w in q[0].split())
            ids = [r[0] for r in c.execute(
                "SELECT seq FROM fts WHERE tsv @@ to_tsquery('simple', %s) "
                "ORDER BY ts_rank(tsv, to_tsquery('simple', %s)) DESC LIMIT 20", (tsq, tsq))]
            lists = [(0.25, ids)]
            if len(q) > 2 and have_vector:
                lists.append((0.5, [r[0] for r in c.execute(
                    "SELECT seq FROM vec ORDER BY embedding <=> %s::vector LIMIT 30", (q[3],))]))
            top = rrf(lists)
            return c.execute("SELECT id, content FROM mem_memories WHERE seq = ANY(%s)", (top,)).fetchall()

        for q in queries[:5]:
            run(q), peer(q)
        res["ours"], res["peer"] = timed(run, queries), timed(peer, queries)
        if vectors is not None:
            t = time.perf_counter()
            with c.transaction():
                with c.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO mem_embeddings (kind, owner_id, model, dims, vector) VALUES ('memory', %s, 'bench', %s, %s)",
                        [(m[0], vectors.shape[1], vectors[i].tobytes()) for i, m in enumerate(memories)])
            res["vec_load"] = time.perf_counter() - t
            lit = lambda v: "[" + ",".join(repr(float(x)) for x in v) + "]"
            if have_vector:
                c.execute(f"CREATE TABLE vec (seq bigint PRIMARY KEY, embedding vector({vectors.shape[1]}))")
                with c.cursor().copy("COPY vec (seq, embedding) FROM STDIN") as cp:
                    for i in range(len(memories)):
                        cp.write_row((i + 1, lit(vectors[i])))
                c.execute("ANALYZE vec")
            c.execute("VACUUM ANALYZE")
            vq = [(t_, dict(o, model="bench", query_vector=[float(x) for x in v]), v, lit(v))
                  for (t_, o), v in zip(queries, qvecs)]
            for q in vq[:5]:
                run(q), peer(q)
            res["ours_vec"], res["peer_vec"] = timed(run, vq), timed(peer, vq)
        return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ext", default=os.path.join(ROOT, "dist", "agentmem0"))
    ap.add_argument("--pg", default=os.environ.get("AGENTMEM_PG"))
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--dims", type=int, default=384)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", default=os.path.join(ROOT, "benches", "results", "recall-latest.md"))
    args = ap.parse_args()
    memories, graph, queries = generate(args.n, args.seed)
    queries = queries[:args.queries]
    rng = np.random.default_rng(args.seed)
    vectors = rng.uniform(-1, 1, size=(args.n, args.dims)).astype(np.float32) if args.dims else None
    qvecs = rng.uniform(-1, 1, size=(len(queries), args.dims)).astype(np.float32) if args.dims else None
    lines = [f"# Hybrid recall benchmark ({time.strftime('%Y-%m-%d')})", "",
             f"`{' '.join(sys.argv)}` — {args.n} generated memories (seed {args.seed}), "
             f"{len(graph['nodes'])} files, {len(graph['edges'])} imports, {len(queries)} queries "
             "(half with current_files), all rows fetched. Latencies in ms. Peer: the seed's stack "
             "(FTS5 / tsvector BM25 top 20, sqlite-vec / pgvector top 30, RRF in Python), which "
             "does less. Targets: p50 ≤ 10 ms (SQLite, no vectors), ≤ 25 ms (384-dim vectors).", "",
             "| backend | vectors | load s | agentmem p50 | p95 | peer p50 | p95 | peer p50 / ours |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    runs = [("sqlite", bench_sqlite(args, memories, graph, queries, vectors, qvecs))]
    print("sqlite done", file=sys.stderr)
    if args.pg:
        runs.append(("postgres", bench_postgres(args, memories, graph, queries, vectors, qvecs)))
        print("postgres done", file=sys.stderr)
    for backend, r in runs:
        for suffix, label, load in [("", "none", r["load"]), ("_vec", f"{args.dims} dims", r.get("vec_load"))]:
            if f"ours{suffix}" not in r:
                continue
            o, p = r[f"ours{suffix}"], r[f"peer{suffix}"]
            lines.append(f"| {backend} | {label} | {load:.1f} | {statistics.median(o):.2f} | {pct(o, 0.95):.2f} | "
                         f"{statistics.median(p):.2f} | {pct(p, 0.95):.2f} | "
                         f"{statistics.median(p) / statistics.median(o):.2f} |")
        if "peer_note" in r:
            lines.append(f"\n{backend}: {r['peer_note']} (peer without its dense list)")
    report(lines, args.out)


if __name__ == "__main__":
    main()
