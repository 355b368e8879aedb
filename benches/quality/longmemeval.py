#!/usr/bin/env python3
"""LongMemEval retrieval quality: agentmem's mem_search vs SQLite FTS5 vs rank_bm25.

For every LongMemEval question a fresh in-memory index of that question's own haystack is
built and the question is asked; the ranked turns are scored at turn level (relevant = turns
with has_answer) and at session level (sessions ranked by their best turn; relevant =
answer_session_ids). See benches/quality/README.md for the method and the commands.

Run with a Python whose sqlite3 can load extensions (Debian's /usr/bin/python3 or a venv made
from it) and with rank_bm25 installed (target/quality/venv).
"""

import argparse
import collections
import datetime
import json
import math
import os
import random
import re
import sqlite3
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_DATA = "/work/data-cache/longmemeval/longmemeval_s_498.json"
DEFAULT_EXT = os.path.join(REPO, "dist", "agentmem0")
DEFAULT_OUT = os.path.join(REPO, "target", "quality", "longmemeval.json")

LIMIT = 50  # every system returns at most this many turns
KS = (1, 3, 5, 10, 30, 50)
SYSTEMS = ("agentmem", "fts5", "rank_bm25")
HEADLINE = ("recall_any@5", "recall_any@10", "recall_all@5", "ndcg_any@10")


# --------------------------------------------------------------------------- data


def parse_date(s):
    """'2023/05/20 (Sat) 07:47' -> epoch ms (read as UTC)."""
    s = re.sub(r"\s*\([A-Za-z]{3}\)\s*", " ", s).strip()
    dt = datetime.datetime.strptime(s, "%Y/%m/%d %H:%M").replace(tzinfo=datetime.timezone.utc)
    return int(dt.timestamp() * 1000)


class Corpus:
    """The indexed turns of one question's haystack, in haystack order."""

    def __init__(self, q, user_only):
        self.docs = []  # (session_no, turn_no, role, content, created_at_ms)
        self.session_ids = q["haystack_session_ids"]
        gold_turns = set()
        for si, (sess, date) in enumerate(zip(q["haystack_sessions"], q["haystack_dates"])):
            base = parse_date(date)
            for ti, turn in enumerate(sess):
                if user_only and turn["role"] != "user":
                    continue
                if turn.get("has_answer"):
                    gold_turns.add(len(self.docs))
                self.docs.append((si, ti, turn["role"], turn["content"], base + ti * 60_000))
        self.gold_turns = gold_turns
        answer = set(q["answer_session_ids"])
        if user_only:
            # official baseline: an evidence session without an indexed has_answer turn is
            # relabelled non-gold (its evidence is not in the corpus)
            self.gold_sessions = {self.docs[i][0] for i in gold_turns}
        else:
            self.gold_sessions = {si for si, sid in enumerate(self.session_ids) if sid in answer}
        self.n_sessions = len(self.session_ids)
        if q.get("question_date"):
            self.now = parse_date(q["question_date"])
        else:
            self.now = parse_date(q["haystack_dates"][-1])


def eligible(q, user_only):
    """Official filter: skip abstention questions and questions without an evidence turn
    (in user-turns-only mode: without a *user* evidence turn, exactly like the official eval)."""
    if "_abs" in q["question_id"]:
        return False
    return any(
        t.get("has_answer") and (not user_only or t["role"] == "user")
        for s in q["haystack_sessions"]
        for t in s
    )


def stratified(questions, n, seed):
    by_type = collections.defaultdict(list)
    for q in questions:
        by_type[q["question_type"]].append(q)
    total = len(questions)
    if n >= total:
        return questions
    rng = random.Random(seed)
    # largest-remainder allocation, at least one per type
    quota = {t: n * len(v) / total for t, v in by_type.items()}
    alloc = {t: max(1, int(quota[t])) for t in by_type}
    rest = n - sum(alloc.values())
    for t in sorted(by_type, key=lambda t: quota[t] - int(quota[t]), reverse=True):
        if rest <= 0:
            break
        if alloc[t] < len(by_type[t]):
            alloc[t] += 1
            rest -= 1
    picked = set()
    for t, v in by_type.items():
        ids = sorted(q["question_id"] for q in v)
        picked.update(rng.sample(ids, min(alloc[t], len(ids))))
    return [q for q in questions if q["question_id"] in picked]


# --------------------------------------------------------------------------- systems


def connect(ext):
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.enable_load_extension(True)
    conn.load_extension(ext)
    conn.enable_load_extension(False)
    conn.execute("SELECT mem_init()")
    return conn


def run_agentmem(corpus, question, qid, ext, variants):
    """Returns ({variant: ranked doc numbers}, ingest s, search s); one ingest serves every
    variant (a dict of mem_search options)."""
    conn = connect(ext)
    t0 = time.perf_counter()
    conn.execute("BEGIN")
    threads = {}
    for si in sorted({d[0] for d in corpus.docs}):
        threads[si] = conn.execute(
            "SELECT mem_thread_create(?, ?)", (qid, corpus.session_ids[si])
        ).fetchone()[0]
    add = "SELECT mem_message_add(?, ?, ?, ?)"
    for n, (si, ti, role, content, ts) in enumerate(corpus.docs):
        conn.execute(
            add, (threads[si], role, content, json.dumps({"created_at": ts, "id": "d%d" % n}))
        ).fetchone()
    conn.execute("COMMIT")
    t1 = time.perf_counter()
    ranked = {}
    for name, extra_opts in variants.items():
        opts = {"limit": LIMIT, "now": corpus.now}
        opts.update(extra_opts)
        rows = conn.execute(
            "SELECT message_id, score FROM mem_search(?, ?)", (question, json.dumps(opts))
        ).fetchall()
        ranked[name] = [int(mid[1:]) for mid, _ in rows]
    t2 = time.perf_counter()
    conn.close()
    return ranked, t1 - t0, t2 - t1


def fts5_query(question):
    words = [w for w in question.split() if re.search(r"\w", w)]
    return " OR ".join('"%s"' % w.replace('"', '""') for w in words)


def run_fts5(corpus, question):
    conn = sqlite3.connect(":memory:", isolation_level=None)
    t0 = time.perf_counter()
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(content)")
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO t(rowid, content) VALUES (?, ?)",
        ((n + 1, d[3]) for n, d in enumerate(corpus.docs)),
    )
    conn.execute("COMMIT")
    t1 = time.perf_counter()
    q = fts5_query(question)
    rows = []
    if q:
        rows = conn.execute(
            "SELECT rowid FROM t WHERE t MATCH ? ORDER BY rank LIMIT ?", (q, LIMIT)
        ).fetchall()
    t2 = time.perf_counter()
    conn.close()
    return [r[0] - 1 for r in rows], t1 - t0, t2 - t1


def run_rank_bm25(corpus, question, lowercase=True):
    from rank_bm25 import BM25Okapi

    norm = (lambda s: s.lower()) if lowercase else (lambda s: s)
    t0 = time.perf_counter()
    bm25 = BM25Okapi([norm(d[3]).split(" ") for d in corpus.docs], k1=1.5, b=0.75)
    t1 = time.perf_counter()
    scores = bm25.get_scores(norm(question).split(" "))
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    ranked = [i for i in order if scores[i] > 0][:LIMIT]
    t2 = time.perf_counter()
    return ranked, t1 - t0, t2 - t1


# --------------------------------------------------------------------------- metrics


def dcg(rels):
    # the official LongMemEval variant: rel[0] + sum_{i>=1} rel[i] / log2(i + 1)
    return sum(r if i == 0 else r / math.log2(i + 1) for i, r in enumerate(rels))


def metrics(ranked, gold):
    """ranked: list of unique item ids (best first); gold: set of relevant ids (non-empty)."""
    out = {}
    for k in KS:
        top = ranked[:k]
        hit = set(top) & gold
        out["recall_any@%d" % k] = float(bool(hit))
        out["recall_all@%d" % k] = float(len(hit) == len(gold))
        ideal = dcg([1] * min(k, len(gold)))
        out["ndcg_any@%d" % k] = dcg([1 if x in gold else 0 for x in top]) / ideal
    return out


def sessions_of(ranked_turns, corpus):
    seen, out = set(), []
    for d in ranked_turns:
        s = corpus.docs[d][0]
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


def first_gold_rank(ranked, gold):
    for i, x in enumerate(ranked):
        if x in gold:
            return i + 1
    return None


# --------------------------------------------------------------------------- report


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def aggregate(per_q, systems):
    """-> {system: {level: {group: {metric: mean, 'n': count}}}}"""
    res = {}
    for sysname in systems:
        res[sysname] = {}
        for level in ("turn", "session"):
            groups = collections.defaultdict(list)
            for r in per_q:
                m = r["systems"][sysname][level]
                groups["ALL"].append(m)
                groups[r["question_type"]].append(m)
            res[sysname][level] = {
                g: dict({k: mean([m[k] for m in ms]) for k in ms[0]}, n=len(ms))
                for g, ms in groups.items()
            }
    return res


def print_tables(agg, systems):
    cols = HEADLINE
    for level in ("turn", "session"):
        print("\n== %s level (relevant: %s) ==" % (
            level, "has_answer turns" if level == "turn" else "answer sessions"))
        hdr = "%-22s %-26s %4s " % ("system", "question_type", "n") + " ".join(
            "%13s" % c for c in cols)
        print(hdr)
        print("-" * len(hdr))
        groups = sorted(agg[systems[0]][level], key=lambda g: (g != "ALL", g))
        for g in groups:
            for sysname in systems:
                m = agg[sysname][level][g]
                print("%-22s %-26s %4d " % (sysname, g, m["n"]) + " ".join(
                    "%13.3f" % m[c] for c in cols))
            if len(systems) > 1:
                print()


# --------------------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--ext", default=DEFAULT_EXT, help="agentmem extension (no suffix)")
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--limit-questions", type=int, default=0,
                    help="stratified sample (by question_type) of N questions")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--agentmem-options", default="{}",
                    help="JSON merged into mem_search's options, e.g. '{\"recency_weight\":0}'")
    ap.add_argument("--variants", default=None,
                    help="JSON object name -> mem_search options: each is reported as the "
                         "system agentmem:<name> (one ingest serves all), e.g. "
                         "'{\"nostem\":{\"stem_weight\":0}}'")
    ap.add_argument("--user-turns-only", action="store_true",
                    help="index only user turns (like the official baseline)")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--bm25-keep-case", action="store_true",
                    help="rank_bm25 without lowercasing (the official script's exact tokenisation)")
    ap.add_argument("--questions-out", default=None,
                    help="per-question JSONL (default: <out>.questions.jsonl)")
    args = ap.parse_args()

    systems = [s for s in args.systems.split(",") if s]
    for s in systems:
        if s not in SYSTEMS:
            ap.error("unknown system %r" % s)
    extra = json.loads(args.agentmem_options)
    variants = {"agentmem": extra}
    if args.variants:
        for name, opts in json.loads(args.variants).items():
            variants["agentmem:" + name] = dict(extra, **opts)
    if "agentmem" in systems:
        i = systems.index("agentmem")
        systems[i:i + 1] = list(variants)

    t_start = time.perf_counter()
    with open(args.data) as f:
        data = json.load(f)
    t_load = time.perf_counter() - t_start
    questions = [q for q in data if eligible(q, args.user_turns_only)]
    n_eligible = len(questions)
    if args.limit_questions:
        questions = stratified(questions, args.limit_questions, args.seed)
    print("%d questions in file, %d eligible, running %d (%s corpus); data loaded in %.1fs"
          % (len(data), n_eligible, len(questions),
             "user-turns-only" if args.user_turns_only else "all turns", t_load),
          file=sys.stderr)

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    qout = args.questions_out or re.sub(r"\.json$", "", args.out) + ".questions.jsonl"
    timing = {s: {"ingest_s": 0.0, "search_s": 0.0} for s in systems}
    per_q = []
    t_run = time.perf_counter()
    with open(qout, "w") as fq:
        for qi, q in enumerate(questions):
            corpus = Corpus(q, args.user_turns_only)
            rec = {
                "question_id": q["question_id"],
                "question_type": q["question_type"],
                "question": q["question"],
                "n_docs": len(corpus.docs),
                "gold_turns": [list(corpus.docs[i][:2]) for i in sorted(corpus.gold_turns)],
                "gold_sessions": sorted(corpus.gold_sessions),
                "systems": {},
            }
            ours = {}
            for s in systems:
                if s.startswith("agentmem"):
                    if not ours:
                        ours, ti, ts = run_agentmem(corpus, q["question"], q["question_id"],
                                                    args.ext, variants)
                    else:
                        ti = ts = 0.0
                    ranked = ours[s]
                elif s == "fts5":
                    ranked, ti, ts = run_fts5(corpus, q["question"])
                else:
                    ranked, ti, ts = run_rank_bm25(corpus, q["question"],
                                                   lowercase=not args.bm25_keep_case)
                timing[s]["ingest_s"] += ti
                timing[s]["search_s"] += ts
                sess = sessions_of(ranked, corpus)
                rec["systems"][s] = {
                    "turn": metrics(ranked, corpus.gold_turns),
                    "session": metrics(sess, corpus.gold_sessions),
                    "first_gold_turn_rank": first_gold_rank(ranked, corpus.gold_turns),
                    "first_gold_session_rank": first_gold_rank(sess, corpus.gold_sessions),
                    "top5": [list(corpus.docs[d][:2]) for d in ranked[:5]],
                }
            per_q.append(rec)
            fq.write(json.dumps(rec) + "\n")
            if (qi + 1) % 25 == 0:
                print("  %d/%d questions, %.0fs" % (qi + 1, len(questions),
                                                     time.perf_counter() - t_run),
                      file=sys.stderr)
    runtime = time.perf_counter() - t_run

    agg = aggregate(per_q, systems)
    print_tables(agg, systems)
    print("\nruntime %.1fs for %d questions (+%.1fs loading); per system ingest/search s: %s"
          % (runtime, len(per_q), t_load,
             ", ".join("%s %.1f/%.1f" % (s, timing[s]["ingest_s"], timing[s]["search_s"])
                       for s in systems)))

    summary = {
        "data": os.path.abspath(args.data),
        "extension": os.path.abspath(args.ext),
        "corpus": "user_turns_only" if args.user_turns_only else "all_turns",
        "n_questions": len(per_q),
        "n_eligible": n_eligible,
        "sampled": bool(args.limit_questions) and len(per_q) < n_eligible,
        "seed": args.seed,
        "limit": LIMIT,
        "agentmem_options": extra,
        "rank_bm25_lowercase": not args.bm25_keep_case,
        "runtime_s": round(runtime, 1),
        "timing_s": {s: {k: round(v, 2) for k, v in t.items()} for s, t in timing.items()},
        "results": agg,
        "questions_file": os.path.abspath(qout),
    }
    with open(args.out, "w") as f:
        json.dump(summary, f, indent=1)
    print("wrote %s and %s" % (args.out, qout), file=sys.stderr)


if __name__ == "__main__":
    main()
