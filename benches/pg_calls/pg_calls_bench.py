#!/usr/bin/env python3
"""Postgres writes one message per round trip, as an application makes them: psycopg over TCP,
one statement per message, autocommit and in transactions of 100 — `mem_message_add` and a
plain `INSERT` into `mem_messages` beside an `INSERT` into the same shape with a stored
`tsvector` and a GIN index (the peer), from the same run, on the same messages.

    pg_calls_bench.py --pg "host=… user=…" [--messages 5000] [--warmup 500] [--out FILE]

Messages are prose and code of 80–600 characters; each system writes into a fresh database
with the same number of earlier messages (`--base`) so that index sizes match. psycopg
prepares each statement after its fifth use (its default), as an application's driver would.
"""

import argparse
import os
import random
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from benchlib import pg_database, report  # noqa: E402

WORDS = ("the login test fails because the users table was not migrated run pnpm db:migrate first "
         "export const LoginSchema = z.object({ email: z.string().email() }) redis client token "
         "session expires refresh rotate cookie httpOnly secure sameSite lax middleware route "
         "handler error stack trace at Object.<anonymous> (src/auth/token.ts:14:7)").split()


def messages(rng, n):
    out = []
    for _ in range(n):
        words = []
        while sum(len(w) + 1 for w in words) < rng.randint(80, 600):
            words.append(rng.choice(WORDS))
        out.append(" ".join(words))
    return out


PEER_SCHEMA = """
CREATE TABLE peer_messages (
  id bigserial PRIMARY KEY,
  thread_id text NOT NULL,
  role text NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'tool')),
  content text NOT NULL,
  created_at bigint NOT NULL DEFAULT (extract(epoch from now()) * 1000)::bigint,
  tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', content)) STORED
);
CREATE INDEX peer_messages_tsv ON peer_messages USING gin (tsv);
CREATE INDEX peer_messages_thread ON peer_messages (thread_id, id);
"""

SYSTEMS = {
    "peer INSERT (tsvector + GIN)": "INSERT INTO peer_messages (thread_id, role, content) VALUES (%s, 'user', %s)",
    "agentmem INSERT": "INSERT INTO mem_messages (thread_id, role, raw_content) VALUES (%s, 'user', %s)",
    "agentmem mem_message_add": "SELECT mem_message_add(%s, 'user', %s)",
}


def setup(c, system, base_rows):
    if system.startswith("peer"):
        c.execute(PEER_SCHEMA)
        c.execute("INSERT INTO peer_messages (thread_id, role, content) SELECT 't' || (i %% 50), 'user', %s FROM generate_series(1, %s) i",
                  (" ".join(WORDS[:40]), base_rows))
        c.execute("VACUUM ANALYZE peer_messages")
    else:
        c.execute("CREATE EXTENSION agentmem")
        for t in range(50):
            c.execute("SELECT mem_thread_create('bench', NULL, '{}', %s)", (f'{{"id":"t{t}"}}',))
        c.execute("INSERT INTO mem_messages (thread_id, role, raw_content) SELECT 't' || (i %% 50), 'user', %s FROM generate_series(1, %s) i",
                  (" ".join(WORDS[:40]), base_rows))
        while c.execute("SELECT mem_optimize()").fetchone()[0] > 0:
            pass
        c.execute("VACUUM ANALYZE")


def run(c, sql, texts, per_tx):
    """Messages per second, one statement per round trip; `per_tx` statements a transaction
    (1: autocommit)."""
    cur = c.cursor()
    t0 = time.perf_counter()
    for i, text in enumerate(texts):
        if per_tx > 1 and i % per_tx == 0:
            cur.execute("BEGIN")
        cur.execute(sql, (f"t{i % 50}", text))
        if per_tx > 1 and (i % per_tx == per_tx - 1 or i == len(texts) - 1):
            cur.execute("COMMIT")
    return len(texts) / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pg", required=True)
    ap.add_argument("--messages", type=int, default=5000)
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--base", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "..", "results", "pg-calls-latest.md"))
    args = ap.parse_args()
    rng = random.Random(11)
    texts = messages(rng, args.messages)
    warm = messages(rng, args.warmup)
    rates = {(s, m): [] for s in SYSTEMS for m in ("autocommit", "transactions of 100")}
    # Rounds alternate the systems, so drift in the machine falls on all of them.
    for _ in range(args.rounds):
        for system, sql in SYSTEMS.items():
            for mode, per_tx in (("autocommit", 1), ("transactions of 100", 100)):
                with pg_database(args.pg, "agentmem_pg_calls") as c:
                    setup(c, system, args.base)
                    run(c, sql, warm, per_tx)
                    rates[(system, mode)].append(run(c, sql, texts, per_tx))
    lines = [
        "# Postgres: one message per round trip",
        "",
        f"`make bench-pg-calls` (benches/pg_calls/pg_calls_bench.py): psycopg 3 over TCP on loopback, "
        f"{args.messages} messages of 80–600 characters after {args.warmup} of warm-up, each system in a fresh "
        f"database holding {args.base} earlier messages; median of {args.rounds} rounds. Messages per second.",
        "",
        "| system | autocommit | ratio to peer | transactions of 100 | ratio to peer |",
        "|---|---:|---:|---:|---:|",
    ]
    peer = next(iter(SYSTEMS))
    for system in SYSTEMS:
        cells = []
        for mode in ("autocommit", "transactions of 100"):
            r = statistics.median(rates[(system, mode)])
            p = statistics.median(rates[(peer, mode)])
            cells += [f"{r:.0f}", f"{r / p:.2f}×"]
        lines.append(f"| {system} | " + " | ".join(cells) + " |")
    lines += ["", "The goal: `mem_message_add` ≥ 0.7× the peer in both columns."]
    report(lines, args.out)


if __name__ == "__main__":
    main()
