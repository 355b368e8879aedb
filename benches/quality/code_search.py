"""Code search: doc-comment questions against a coding agent's conversations over real crates
(benches/corpus), agentmem's mem_search vs SQLite FTS5 (BM25 `rank`) vs rank_bm25.

The corpus and its questions come from benches/corpus/build_code_corpus.py; a question's
relevant messages are those holding the item's definition (file chunks, `rg` output, replies
quoting it). Metrics per question, averaged: R@k = share of the relevant messages in the top k;
MRR@10.
"""

import argparse
import collections
import json
import os
import random
import sqlite3
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import dialogue  # noqa: E402  (fts5_query, the extension default)

CORPUS = os.path.join(REPO, "target", "bench-corpus")
LIMIT = 10


def load(messages_file, queries_file, n, nq, seed):
    msgs = []
    with open(messages_file) as f:
        for i, line in enumerate(f):
            if i >= n:
                break
            msgs.append(json.loads(line))
    qs = []
    with open(queries_file) as f:
        for line in f:
            q = json.loads(line)
            rel = {r for r in q["relevant"] if r < n}
            if rel:
                qs.append((q["query"], rel))
    random.Random(seed).shuffle(qs)
    return msgs, qs[:nq]


def agentmem(msgs, ext):
    c = sqlite3.connect(":memory:", isolation_level=None)
    c.enable_load_extension(True)
    c.load_extension(ext)
    c.execute("SELECT mem_init()")
    c.execute("BEGIN")
    threads = {}
    for m in msgs:
        if m["thread"] not in threads:
            threads[m["thread"]] = c.execute(
                "SELECT mem_thread_create(?, ?)", (m["resource"], m["thread"])).fetchone()[0]
    c.executemany(
        "INSERT INTO mem_messages (id, thread_id, role, raw_content, created_at) VALUES (?,?,?,?,?)",
        (("m%d" % i, threads[m["thread"]], m["role"], m["content"], m["created_at"])
         for i, m in enumerate(msgs)))
    c.execute("COMMIT")
    while c.execute("SELECT mem_optimize()").fetchone()[0] > 0:
        pass
    now = msgs[-1]["created_at"] + 1

    def search(q, opts):
        o = {"limit": LIMIT, "now": now}
        o.update(opts)
        return [int(r[0][1:]) for r in c.execute(
            "SELECT message_id FROM mem_search(?, ?)", (q, json.dumps(o)))]
    return search


def fts5(msgs):
    c = sqlite3.connect(":memory:", isolation_level=None)
    c.execute("CREATE VIRTUAL TABLE t USING fts5(content)")
    c.execute("BEGIN")
    c.executemany("INSERT INTO t(rowid, content) VALUES (?, ?)",
                  ((i + 1, m["content"]) for i, m in enumerate(msgs)))
    c.execute("COMMIT")

    def search(q):
        m = dialogue.fts5_query(q)
        if not m:
            return []
        return [r[0] - 1 for r in c.execute(
            "SELECT rowid FROM t WHERE t MATCH ? ORDER BY rank LIMIT ?", (m, LIMIT))]
    return search


def rank_bm25(msgs):
    from rank_bm25 import BM25Okapi
    bm = BM25Okapi([m["content"].lower().split(" ") for m in msgs])

    def search(q):
        s = bm.get_scores(q.lower().split(" "))
        order = sorted(range(len(s)), key=lambda i: (-s[i], i))
        return [i for i in order if s[i] > 0][:LIMIT]
    return search


def metrics(ranked, rel):
    out = {}
    for k in (5, 10):
        out["R@%d" % k] = len(rel.intersection(ranked[:k])) / len(rel)
    out["MRR@10"] = next((1 / (i + 1) for i, d in enumerate(ranked[:10]) if d in rel), 0.0)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--messages", type=int, default=20000)
    ap.add_argument("--questions", type=int, default=500)
    ap.add_argument("--corpus", default=None, help="messages JSONL (default: the smallest "
                    "target/bench-corpus/code-N.jsonl holding --messages)")
    ap.add_argument("--ext", default=dialogue.DEFAULT_EXT)
    ap.add_argument("--systems", default="agentmem,fts5,rank_bm25")
    ap.add_argument("--variants", default=None,
                    help="JSON object name -> mem_search options, reported as agentmem:<name>")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    path = a.corpus
    if path is None:
        sizes = sorted(int(f[5:-6]) for f in os.listdir(CORPUS)
                       if f.startswith("code-") and f.endswith(".jsonl") and f[5:-6].isdigit())
        fit = [s for s in sizes if s >= a.messages]
        if not fit:
            sys.exit("no corpus of %d messages in %s: run benches/corpus/build_code_corpus.py"
                     % (a.messages, CORPUS))
        path = os.path.join(CORPUS, "code-%d.jsonl" % fit[0])
    msgs, qs = load(path, path[:-6] + "-queries.jsonl", a.messages, a.questions, a.seed)
    variants = {"agentmem": {}}
    if a.variants:
        variants.update({"agentmem:" + k: v for k, v in json.loads(a.variants).items()})
    res = collections.defaultdict(list)
    secs = {}
    for s in a.systems.split(","):
        t = time.perf_counter()
        if s == "agentmem":
            search = agentmem(msgs, a.ext)
            for q, rel in qs:
                for name, o in variants.items():
                    res[name].append(metrics(search(q, o), rel))
        else:
            search = fts5(msgs) if s == "fts5" else rank_bm25(msgs)
            for q, rel in qs:
                res[s].append(metrics(search(q), rel))
        secs[s] = time.perf_counter() - t
    print("%d messages (%s), %d questions" % (len(msgs), os.path.basename(path), len(qs)))
    print("%-24s %7s %7s %7s" % ("system", "R@5", "R@10", "MRR@10"))
    summary = {}
    for name, ms in res.items():
        m = {k: sum(x[k] for x in ms) / len(ms) for k in ("R@5", "R@10", "MRR@10")}
        summary[name] = m
        print("%-24s %7.3f %7.3f %7.3f" % (name, m["R@5"], m["R@10"], m["MRR@10"]))
    print("seconds: " + ", ".join("%s %.0f" % kv for kv in secs.items()))
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"corpus": path, "messages": len(msgs), "questions": len(qs),
                       "variants": variants, "results": summary}, f, indent=1)


if __name__ == "__main__":
    main()
