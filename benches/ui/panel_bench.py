#!/usr/bin/env python3
"""The memory panel's server time per page at scale: `agentmem ui` on a SQLite file of 1M
messages and 100k memories (and tasks, a code graph, observed sessions), each page's calls
made as the page makes them, the database time of each read from the answer's
`Server-Timing` header and summed per page. The budget is 50 ms per page.

Beside it, from the same run, what a panel without keyset pages would do on a deep page: the
1000th page of the memory list by `OFFSET` against the panel's cursor.

    panel_bench.py --ext dist/agentmem0 --agentmem target/release/agentmem
                   [--messages 1000000] [--memories 100000] [--runs 20] [--out FILE]

Messages and memories are written with plain INSERT in 5,000-row transactions (the triggers
keep the search index and counters), memories with a realistic mix: 2% waiting for review,
1% stale, a few superseded, each naming up to three of 5,000 files of the code graph.
"""

import argparse
import http.client
import json
import os
import random
import re
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from benchlib import drop_sqlite, fresh_sqlite, pct, report  # noqa: E402

RESOURCE = "project:bench"
WORDS = ("auth token session redis migrate login test docker cache queue worker retry timeout "
         "schema index query deploy build config route handler error module import export "
         "payment invoice user account email webhook cron lock pool leak race flaky").split()
TYPES = ["gotcha", "decision", "pattern", "error_pattern", "module_insight", "dead_end", "workflow_recipe"]
BUDGET_MS = 50.0


def sentence(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def batched(c, sql, rows, size=5000):
    """Plain INSERTs of `rows`, `size` to a transaction."""
    batch = []
    for r in rows:
        batch.append(r)
        if len(batch) == size:
            c.execute("BEGIN")
            c.executemany(sql, batch)
            c.execute("COMMIT")
            batch.clear()
    if batch:
        c.execute("BEGIN")
        c.executemany(sql, batch)
        c.execute("COMMIT")


def fill(c, args, rng):
    t0 = time.time()
    files = [f"src/{rng.choice(WORDS)}/{rng.choice(WORDS)}_{i}.ts" for i in range(5000)]
    threads = [(f"t{i}", RESOURCE if i % 10 else "project:other") for i in range(args.threads)]
    c.execute("BEGIN")
    c.executemany("INSERT INTO mem_threads (id, resource_id) VALUES (?, ?)", threads)
    c.execute("COMMIT")
    base = 1_790_000_000_000
    batched(c, "INSERT INTO mem_messages (thread_id, role, raw_content, created_at) VALUES (?, ?, ?, ?)",
            ((threads[i % len(threads)][0], ("user", "assistant", "tool")[i % 3], sentence(rng, 8 + i % 24),
              base + i * 1000) for i in range(args.messages)))
    print(f"  {args.messages} messages in {time.time() - t0:.0f} s", file=sys.stderr)

    t0 = time.time()
    def memory(i):
        at = base + i * 10_000
        return (RESOURCE, rng.choice(TYPES), f"memory {i}: " + sentence(rng, 12),
                json.dumps(rng.sample(files, rng.randint(0, 3))), 1 if i % 50 == 0 else 0,
                at if i % 100 == 7 else None, f"s{i % 200}", at, at)

    batched(c, "INSERT INTO mem_memories (resource_id, type, content, related_files, needs_review, "
               "stale_at, session_id, created_at, last_accessed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (memory(i) for i in range(args.memories)))
    # A few supersede chains.
    ids = [r[0] for r in c.execute("SELECT id FROM mem_memories ORDER BY seq LIMIT 300")]
    c.execute("BEGIN")
    for a, b in zip(ids[0::3], ids[1::3]):
        c.execute("UPDATE mem_memories SET superseded_by = ? WHERE id = ?", (b, a))
    c.execute("COMMIT")
    print(f"  {args.memories} memories in {time.time() - t0:.0f} s", file=sys.stderr)

    t0 = time.time()
    nodes = [{"id": f"f{i}", "type": "file", "label": os.path.basename(p), "file_path": p} for i, p in enumerate(files)]
    edges = [{"from": f"f{i}", "to": f"f{rng.randrange(len(files))}", "type": "imports"}
             for i in range(len(files)) for _ in range(3)]
    edges = [e for e in edges if e["from"] != e["to"]]
    c.execute("SELECT graph_load(?, ?)", (RESOURCE, json.dumps({"nodes": nodes, "edges": edges}))).fetchall()
    c.execute("BEGIN")
    for i in range(2000):
        c.execute("SELECT task_create(?, ?)", (f"task {i}: " + sentence(rng, 5), json.dumps({"id": f"task-{i}", "priority": i % 4}))).fetchall()
    for i in range(2000):
        if i % 3 == 0 and i > 10:
            c.execute("SELECT task_dep_add(?, ?)", (f"task-{i}", f"task-{rng.randrange(i)}")).fetchall()
    for i in range(200):
        c.execute("SELECT mem_session_start(?, ?)", (RESOURCE, json.dumps({"id": f"s{i}"}))).fetchall()
    c.execute("COMMIT")
    print(f"  graph, tasks and sessions in {time.time() - t0:.0f} s", file=sys.stderr)
    return files


class Panel:
    def __init__(self, agentmem, db):
        self.proc = subprocess.Popen([agentmem, "--db", db, "ui", "--resource", RESOURCE], stdout=subprocess.PIPE, text=True)
        m = re.match(r"agentmem ui: http://127\.0\.0\.1:(\d+)/#token=(\w+)", self.proc.stdout.readline())
        self.port, self.token = int(m.group(1)), m.group(2)
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port)
        # Database time per function during the current page.
        self.last = {}

    def call(self, fn, **args):
        """The answer and the database's time in ms (Server-Timing)."""
        # Bytes: http.client then sends the head and the body in one write, as a browser does.
        body = json.dumps(args).encode()
        self.conn.request("POST", f"/api/{fn}", body, {"X-Agentmem-Token": self.token, "Content-Type": "application/json"})
        r = self.conn.getresponse()
        answer = json.loads(r.read())
        assert r.status == 200, (fn, answer)
        dur = float(re.search(r"dur=([\d.]+)", r.getheader("Server-Timing")).group(1))
        self.last[fn] = self.last.get(fn, 0.0) + dur
        return answer, dur

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def pages(p, files, rng):
    """Each page as the panel's script loads it: the calls in order, answers feeding the next."""
    R = RESOURCE
    memory_ids = [r["memory_id"] for r in p.call("mem_memory_list", resource_id=R, options={"limit": 50})[0]["rows"]]
    deep = p.call("mem_memory_list", resource_id=R, options={"limit": 50})[0]["rows"][-1]["cursor"]

    def health():
        return [p.call("mem_health", resource_id=R)]

    def memories():
        return [p.call("mem_memory_list", resource_id=R, options={"limit": 50})]

    def memories_next():
        return [p.call("mem_memory_list", resource_id=R, options={"limit": 50, "cursor": deep})]

    def memories_filtered():
        return [p.call("mem_memory_list", resource_id=R, options={"limit": 50, "types": ["gotcha"], "file": rng.choice(files)})]

    def search():
        return [p.call("mem_memory_search", query=f"{rng.choice(WORDS)} {rng.choice(WORDS)}", options={"resource_id": R, "limit": 20})]

    def search_hybrid():
        return [p.call("mem_recall_hybrid", query=f"{rng.choice(WORDS)} {rng.choice(WORDS)}", options={"resource_id": R, "limit": 20, "touch": False})]

    def memory():
        return [p.call("mem_memory_get", id=rng.choice(memory_ids))]

    def review():
        return [p.call("mem_memory_list", resource_id=R, options={"limit": 50, "needs_review": True})]

    def threads():
        return [p.call("mem_thread_list", options={"resource_id": R, "limit": 50})]

    def thread():
        t = f"t{rng.randrange(1, 1000) * 10 + 1}"
        return [p.call("mem_thread_get", thread_id=t),
                p.call("mem_messages_page", thread_id=t, options={"limit": 50, "order": "desc"}),
                p.call("om_status", thread_id=t),
                p.call("om_context", thread_id=t)]

    def tasks():
        return [p.call("task_ready", options={"limit": 20}), p.call("task_list", options={"limit": 100, "status": "open"})]

    def task():
        first = p.call("task_show", task_id=f"task-{rng.randrange(1000, 2000)}")
        calls = [first]
        for d in first[0]["value"]["task"].get("dependencies", [])[:10]:
            calls.append(p.call("task_show", task_id=d["dependsOnId"]))
        return calls

    def graph():
        target = rng.choice(files)
        tool, d = p.call("mem_tool", name="graph_neighbors", input={"target": target, "maxDepth": 2, "limit": 60}, context={"resourceId": R})
        return [(tool, d),
                p.call("graph_neighbors", node_id=tool["value"]["nodeId"], options={"max_depth": 2, "direction": "both", "limit": 60})]

    def sessions():
        return [p.call("mem_session_list", resource_id=R, options={"limit": 20})]

    def session():
        return [p.call("mem_session_summary", session_id=f"s{rng.randrange(200)}")]

    return [("health", health), ("memories", memories), ("memories, next page", memories_next),
            ("memories by type and file", memories_filtered), ("search (BM25)", search),
            ("search (hybrid)", search_hybrid), ("memory", memory), ("review", review),
            ("threads", threads), ("thread", thread), ("tasks", tasks), ("task", task),
            ("code graph", graph), ("sessions", sessions), ("session", session)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ext", required=True)
    ap.add_argument("--agentmem", required=True)
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--memories", type=int, default=100_000)
    ap.add_argument("--threads", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--out", default=os.path.join(HERE, "..", "results", "ui-latest.md"))
    ap.add_argument("--keep", action="store_true", help="keep the database (/tmp/agentmem-ui-bench) and reuse it when there")
    args = ap.parse_args()
    rng = random.Random(7)
    if args.keep and os.path.exists(os.path.join("/tmp/agentmem-ui-bench", "files.json")):
        c = sqlite3.connect(os.path.join("/tmp/agentmem-ui-bench", "bench.db"), isolation_level=None)
        c.enable_load_extension(True)
        c.load_extension(args.ext)
        with open(os.path.join("/tmp/agentmem-ui-bench", "files.json")) as f:
            files = json.load(f)
    else:
        c = fresh_sqlite("agentmem-ui-bench", args.ext)
        print(f"ui bench: filling {args.messages} messages, {args.memories} memories", file=sys.stderr)
        files = fill(c, args, rng)
        with open(os.path.join("/tmp/agentmem-ui-bench", "files.json"), "w") as f:
            json.dump(files, f)
    c.execute("ANALYZE")
    db = c.execute("PRAGMA database_list").fetchone()[2]

    # The peer: a deep page by OFFSET against the panel's cursor, on the same file.
    offset_sql = ("SELECT id, type, content FROM mem_memories WHERE resource_id = ? AND deprecated = 0 "
                  "AND superseded_by IS NULL AND stale_at IS NULL ORDER BY seq DESC LIMIT 50 OFFSET ?")
    page = 1000

    def offset_page():
        return c.execute(offset_sql, (RESOURCE, 50 * page)).fetchall()

    cursor = None
    for _ in range(page):
        rows = c.execute("SELECT cursor FROM mem_memory_list(?, ?)", (RESOURCE, json.dumps({"limit": 50, **({"cursor": cursor} if cursor else {})}))).fetchall()
        cursor = rows[-1][0] if rows else cursor

    def keyset_page():
        return c.execute("SELECT memory_id FROM mem_memory_list(?, ?)", (RESOURCE, json.dumps({"limit": 50, "cursor": cursor}))).fetchall()

    def timed(f):
        f()
        xs = []
        for _ in range(args.runs):
            t = time.perf_counter()
            f()
            xs.append((time.perf_counter() - t) * 1000)
        return pct(xs, 0.5), pct(xs, 0.95)

    off, key = timed(offset_page), timed(keyset_page)
    c.close()

    panel = Panel(args.agentmem, db)
    lines = [
        "# The memory panel: server time per page",
        "",
        f"`make bench-ui` (benches/ui/panel_bench.py): SQLite, {args.messages:,} messages in "
        f"{args.threads:,} threads, {args.memories:,} memories, 5,000 files in the code graph, 2,000 tasks, "
        f"200 sessions. Each page's calls as the panel makes them; the database time of each call "
        f"from `Server-Timing`, summed per page; {args.runs} runs. Budget {BUDGET_MS:.0f} ms per page.",
        "",
        "| page | calls | server p50 ms | server p95 ms | round trip p50 ms | slowest call, p50 ms | within budget |",
        "|---|---|---|---|---|---|---|",
    ]
    worst = 0.0
    try:
        for name, run in pages(panel, files, rng):
            run()
            server, wall, calls = [], [], 0
            per_fn = {}
            for _ in range(args.runs):
                panel.last = {}
                t = time.perf_counter()
                answers = run()
                for fn, d in panel.last.items():
                    per_fn.setdefault(fn, []).append(d)
                wall.append((time.perf_counter() - t) * 1000)
                server.append(sum(d for _, d in answers))
                calls = len(answers)
            p50, p95 = pct(server, 0.5), pct(server, 0.95)
            worst = max(worst, p95)
            slowest = max(per_fn, key=lambda fn: pct(per_fn[fn], 0.5))
            lines.append(f"| {name} | {calls} | {p50:.2f} | {p95:.2f} | {pct(wall, 0.5):.2f} | "
                         f"`{slowest}` {pct(per_fn[slowest], 0.5):.2f} | {'yes' if p95 <= BUDGET_MS else 'NO'} |")
    finally:
        panel.stop()
    lines += [
        "",
        f"Slowest page at p95: {worst:.2f} ms ({'within' if worst <= BUDGET_MS else 'OVER'} the {BUDGET_MS:.0f} ms budget).",
        "",
        f"The memory list's page {page} (memories {50 * page:,}–{50 * page + 49:,}), same file, same run:",
        "",
        "| | p50 ms | p95 ms |",
        "|---|---|---|",
        f"| `OFFSET` (a panel without cursors) | {off[0]:.2f} | {off[1]:.2f} |",
        f"| `mem_memory_list` with the cursor | {key[0]:.2f} | {key[1]:.2f} |",
        f"| ratio (OFFSET / cursor) | {off[0] / key[0]:.1f}× | |",
    ]
    report(lines, args.out)
    if not args.keep:
        drop_sqlite("agentmem-ui-bench")
    if worst > BUDGET_MS:
        sys.exit(f"a page took {worst:.2f} ms at p95, over the {BUDGET_MS:.0f} ms budget")


if __name__ == "__main__":
    main()
