#!/usr/bin/env python3
"""mem_stats at 1M messages: p50/p95 on SQLite and Postgres beside the naive peer in the same
run — the same numbers computed by GROUP BY over the tables (messages joined to their threads,
tasks by status, memories counted), which is what an application without maintained counters
does.

    stats_bench.py --ext dist/agentmem0 [--pg "host=… dbname=…"] [--messages 1000000]
                   [--threads 10000] [--runs 30] [--out FILE]

Messages are short (speed of the statistics does not depend on their text) and written with
plain INSERT in 5 000-row transactions, interleaved across the threads as many agents writing
at once produce them, so the counters are the ones the triggers keep. (Written thread after
thread instead, one transaction updates a thread's row a hundred times; Postgres cannot
prune those versions inside the transaction, the threads table grows to hold them, and
VACUUM does not shrink it: mem_stats then reads 16 ms of mostly empty pages.) Both
sides' answers are compared before timing: the benchmark fails if they disagree.
"""

import argparse
import json
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.dirname(HERE))
from benchlib import drop_sqlite, fresh_sqlite, pct, pg_database  # noqa: E402

RESOURCES = 100
AGENTS = 20
WORDS = ["cache", "login", "token", "refresh", "build", "deploy", "schema", "retry", "flaky",
         "timeout", "parser", "index", "review", "merge", "config", "error", "route", "test"]


def plan(n_messages, n_threads, seed=7):
    """Threads (id, resource, agent, state) and, per thread, its message count."""
    rng = random.Random(seed)
    threads = []
    for i in range(n_threads):
        state = "deleted" if i % 50 == 0 else ("archived" if i % 10 == 0 else "active")
        threads.append((f"t{i}", f"r{i % RESOURCES}", f"agent{i % AGENTS}", state))
    per = [n_messages // n_threads] * n_threads
    for i in range(n_messages - sum(per)):
        per[i] += 1
    return threads, per, rng


def messages(threads, per, rng):
    """(thread_id, role, text, created_at) rows, interleaved across the threads as many agents
    writing at once produce them (each transaction touches a thread about once)."""
    t0 = 1_760_000_000_000
    for j in range(max(per)):
        for (tid, _, _, _), n in zip(threads, per):
            if j < n:
                text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 6)))
                yield (tid, "user" if j % 2 == 0 else "assistant", text, t0 + j * 60_000)


# The peer: what an application computes without counters.
NAIVE = {
    "totals": [
        "SELECT t.state, count(DISTINCT t.id), count(m.seq), coalesce(sum(m.token_count), 0) "
        "FROM mem_threads t LEFT JOIN mem_messages m ON m.thread_id = t.id GROUP BY t.state",
        "SELECT status, count(*) FROM mem_tasks GROUP BY status",
        "SELECT count(*) FROM mem_memories",
    ],
    "by resource": [
        "SELECT t.resource_id, count(DISTINCT t.id), count(m.seq), coalesce(sum(m.token_count), 0) "
        "FROM mem_threads t LEFT JOIN mem_messages m ON m.thread_id = t.id "
        "GROUP BY t.resource_id ORDER BY t.resource_id",
    ],
    "by agent": [
        "SELECT t.agent_id, count(DISTINCT t.id), count(m.seq), coalesce(sum(m.token_count), 0) "
        "FROM mem_threads t LEFT JOIN mem_messages m ON m.thread_id = t.id "
        "GROUP BY t.agent_id ORDER BY t.agent_id",
    ],
}
OURS = {
    "totals": "SELECT mem_stats()",
    "by resource": "SELECT mem_stats('{\"by\":\"resource\"}')",
    "by agent": "SELECT mem_stats('{\"by\":\"agent\"}')",
}


def as_json(v):
    return v if isinstance(v, dict) else json.loads(v)


def check(ours, naive_rows):
    """The totals agree: messages and tokens of mem_stats() equal the naive sums."""
    rows = naive_rows[0]
    msgs = sum(int(r[2]) for r in rows)
    toks = sum(int(r[3]) for r in rows)
    if ours["messages"] != msgs or ours["tokens"] != toks:
        sys.exit(f"mem_stats disagrees with the naive count: {ours['messages']}/{ours['tokens']} vs {msgs}/{toks}")


def timed(run, runs):
    run()  # warm
    xs = []
    for _ in range(runs):
        t = time.perf_counter()
        run()
        xs.append((time.perf_counter() - t) * 1000)
    return pct(xs, 0.5), pct(xs, 0.95)


def load(cur, commit, threads, per, rng, placeholder):
    p = placeholder
    cur.executemany(
        f"INSERT INTO mem_threads (id, resource_id, agent_id) VALUES ({p}, {p}, {p})",
        [(t[0], t[1], t[2]) for t in threads])
    commit()
    batch = []
    sql = f"INSERT INTO mem_messages (thread_id, role, raw_content, created_at) VALUES ({p}, {p}, {p}, {p})"
    for m in messages(threads, per, rng):
        batch.append(m)
        if len(batch) == 5000:
            cur.executemany(sql, batch)
            commit()
            batch.clear()
    if batch:
        cur.executemany(sql, batch)
        commit()
    for t in threads:
        if t[3] != "active":
            cur.execute(f"UPDATE mem_threads SET state = {p} WHERE id = {p}", (t[3], t[0]))
    for i in range(200):
        cur.execute(f"SELECT task_create({p})", (f"task {i}",))
    commit()


def run_backend(name, conn, cur, commit, args, placeholder, out):
    threads, per, rng = plan(args.messages, args.threads)
    t = time.perf_counter()
    load(cur, commit, threads, per, rng, placeholder)
    load_s = time.perf_counter() - t
    print(f"{name}: loaded {args.messages} messages in {load_s:.0f} s", flush=True)
    if name == "postgres":
        # Every message updates its thread's counters: a million dead row versions until
        # autovacuum; both sides are measured in the steady state after it.
        conn.commit()
        conn.autocommit = True
        cur.execute("VACUUM ANALYZE")
        conn.autocommit = False

    def one(sql):
        cur.execute(sql)
        return cur.fetchall()

    check(as_json(one(OURS["totals"])[0][0]), [one(NAIVE["totals"][0])])
    for what in OURS:
        ours = timed(lambda: one(OURS[what]), args.runs)
        peer = timed(lambda: [one(s) for s in NAIVE[what]], max(3, args.runs // 5))
        out.append((name, what, load_s, ours, peer))
        print(f"{name} {what}: {ours[0]:.2f} ms vs naive {peer[0]:.1f} ms", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ext", default=os.path.join(ROOT, "dist", "agentmem0"))
    ap.add_argument("--pg", default=os.environ.get("AGENTMEM_PG"))
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--threads", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--out", default=os.path.join(ROOT, "benches", "results", "stats-latest.md"))
    args = ap.parse_args()
    rows = []

    c = fresh_sqlite("agentmem-stats-bench", args.ext)
    cur = c.cursor()
    cur.execute("PRAGMA temp_store = MEMORY")
    cur.execute("BEGIN")

    def commit_sqlite():
        cur.execute("COMMIT")
        cur.execute("BEGIN")
    run_backend("sqlite", c, cur, commit_sqlite, args, "?", rows)
    cur.execute("COMMIT")
    c.close()
    drop_sqlite("agentmem-stats-bench")

    if args.pg:
        with pg_database(args.pg, "agentmem_stats_bench") as pc:
            pc.execute("CREATE EXTENSION agentmem")
            pc.autocommit = False
            pcur = pc.cursor()
            run_backend("postgres", pc, pcur, pc.commit, args, "%s", rows)
            pc.commit()
            pc.autocommit = True
    else:
        print("postgres: skipped (no --pg)")

    stamp = time.strftime("%Y-%m-%d")
    lines = [
        f"# Statistics benchmark ({stamp})",
        "",
        f"`benches/stats/stats_bench.py --messages {args.messages} --threads {args.threads} --runs {args.runs}` — "
        f"{args.threads} threads over {RESOURCES} resources and {AGENTS} agents (2% deleted, 8% archived), "
        "short messages written with plain INSERT (Postgres: then VACUUM ANALYZE, as autovacuum would). Latencies in ms; ratio = naive p50 / agentmem p50 "
        "(above 1: agentmem faster). Targets: mem_stats p50 ≤ 5 ms on SQLite, ≤ 15 ms on Postgres at 1M messages.",
        "",
        "| backend | statistics | load s | agentmem p50 | p95 | naive GROUP BY p50 | p95 | naive / ours |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, what, load_s, ours, peer in rows:
        lines.append(f"| {name} | {what} | {load_s:.0f} | {ours[0]:.2f} | {ours[1]:.2f} | "
                     f"{peer[0]:.1f} | {peer[1]:.1f} | {peer[0] / ours[0]:.0f}× |")
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
