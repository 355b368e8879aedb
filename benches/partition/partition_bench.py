"""The search index shared by every resource against one index per resource
(`mem_index_partition('resource')`), on SQLite, on the real-code corpus.

Each layout gets the same messages — a coding agent's conversations over 24 projects, one
`mem_message_add` per message in autocommit (an agent's path) — then the same questions: the
first 8 words of the corpus's doc-comment questions, searched across every resource and within
one (`resource_id`), top 10. Prints a markdown table and writes it to --out.

    /usr/bin/python3 benches/partition/partition_bench.py --ext dist/agentmem0.so \
        --corpus target/bench-corpus/code-20000.jsonl \
        --queries target/bench-corpus/code-20000-queries.jsonl
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from benchlib import fresh_sqlite, pct, report  # noqa: E402


def ingest(c, messages):
    """Writes the messages one call each; returns messages per second."""
    made = set()
    t0 = time.perf_counter()
    for i, m in enumerate(messages):
        if m["thread"] not in made:
            made.add(m["thread"])
            c.execute(
                "SELECT mem_thread_create(?, NULL, NULL, ?)",
                (m["resource"], json.dumps({"id": m["thread"]})),
            )
        c.execute(
            "SELECT mem_message_add(?, ?, ?, ?)",
            (
                m["thread"],
                m["role"],
                m["content"],
                json.dumps({"id": f"m{i}", "created_at": m["created_at"]}),
            ),
        )
    return len(messages) / (time.perf_counter() - t0)


def searches(c, questions, resources, within):
    """Milliseconds per search, and the hits, of every question."""
    times, hits = [], []
    for i, q in enumerate(questions):
        opts = {"limit": 10}
        if within:
            opts["resource_id"] = resources[i % len(resources)]
        t0 = time.perf_counter()
        rows = c.execute(
            "SELECT message_id, score FROM mem_search(?, ?)", (q, json.dumps(opts))
        ).fetchall()
        times.append((time.perf_counter() - t0) * 1000)
        hits.append(rows)
    return times, hits


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ext", default="dist/agentmem0.so")
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--n-queries", type=int, default=300)
    ap.add_argument("--out", default="benches/results/partition-latest.md")
    a = ap.parse_args()
    messages = [json.loads(line) for line in open(a.corpus)]
    questions = [
        " ".join(json.loads(line)["query"].split()[:8]) for line in open(a.queries)
    ][: a.n_queries]
    resources = sorted({m["resource"] for m in messages})
    rows, answers = [], {}
    for layout in ("none", "resource"):
        c = fresh_sqlite("agentmem-partition-bench", a.ext)
        c.execute("SELECT mem_index_partition(?)", (layout,))
        rate = ingest(c, messages)
        across, answers[layout, "across"] = searches(c, questions, resources, False)
        within, answers[layout, "within"] = searches(c, questions, resources, True)
        problems = c.execute("SELECT count(*) FROM mem_index_check()").fetchone()[0]
        assert problems == 0, f"{layout}: {problems} index problems"
        rows.append((layout, rate, across, within))
        c.close()
    # Across resources the rankings are the same: summed statistics.
    for x, y in zip(answers["none", "across"], answers["resource", "across"]):
        assert [h[0] for h in x] == [h[0] for h in y], "across resources, the hits differ"
        assert all(abs(p[1] - q[1]) <= 1e-9 for p, q in zip(x, y)), "the scores differ"
    lines = [
        f"SQLite, {len(messages):,} messages of {len(resources)} resources, "
        f"{len(questions)} questions (first 8 words), top 10; "
        "`/usr/bin/python3 benches/partition/partition_bench.py` (`make bench-partition`).",
        "",
        "| layout | ingest msg/s (one call each) | across resources p50 / p95 ms "
        "| within one resource p50 / p95 ms |",
        "|---|---:|---:|---:|",
    ]
    for layout, rate, across, within in rows:
        name = "one shared index (default)" if layout == "none" else "one index per resource"
        lines.append(
            f"| {name} | {rate:,.0f} | {pct(across, .5):.2f} / {pct(across, .95):.2f} "
            f"| {pct(within, .5):.2f} / {pct(within, .95):.2f} |"
        )
    (_, r0, a0, w0), (_, r1, a1, w1) = rows
    lines += [
        "",
        f"Per resource vs shared: ingest {r1 / r0:.2f}×, across resources "
        f"{pct(a0, .5) / pct(a1, .5):.2f}× the speed, within one resource "
        f"{pct(w0, .5) / pct(w1, .5):.2f}× (p50). Across resources both return the same hits "
        "and scores (checked).",
    ]
    report(lines, a.out)


if __name__ == "__main__":
    main()
