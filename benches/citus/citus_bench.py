"""agentmem on a Citus cluster against one node: ingest (one `mem_message_add` per call, an
agent's path) and searches within a resource (`mem_search` with `resource_id`, top 10), with
N concurrent clients, on the real-code corpus (messages of 24 projects).

Three layouts of the same data: one node (a database of the coordinator without Citus, its
index partitioned by resource as the cluster's is), and `mem_distribute()` over one and over
two workers of the local cluster (scripts/citus.sh). Every node runs on this machine and
shares its two cores, so the cluster cannot be faster here: the run measures what each call
costs each node — CPU seconds per call of the coordinator's and the workers' processes, read
from /proc — and projects from those costs what a cluster of 8 workers holds, stated as a
projection. Prints a markdown report and writes it to --out.

    target/bench-citus/venv/bin/python benches/citus/citus_bench.py \
        --coordinator "host=127.0.0.1 port=5610 user=postgres" --workers "…;…" \
        --citus-dir target/citus --corpus target/bench-corpus/code-20000.jsonl \
        --queries target/bench-corpus/code-20000-queries.jsonl
"""

import argparse
import json
import os
import sys
import threading
import time

import psycopg

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from benchlib import pct, report  # noqa: E402

NODES = ("coordinator", "worker1", "worker2")


def node_cpu(citus_dir, node):
    """CPU seconds used by a node's processes: the live ones, and those it has reaped."""
    with open(os.path.join(citus_dir, node, "postmaster.pid")) as f:
        master = int(f.readline())
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # fields[1] is the parent; utime, stime, cutime, cstime are fields 11..14 after ")".
        if int(pid) == master:
            total += sum(int(x) for x in fields[11:15])
        elif int(fields[1]) == master:
            total += int(fields[11]) + int(fields[12])
    return total / tick


def cpu(citus_dir):
    return {n: node_cpu(citus_dir, n) for n in NODES}


def database(coordinator, workers, name, distributed_over):
    """A fresh database `name`: on the coordinator only when `distributed_over` is 0; else on
    every node with Citus, `distributed_over` workers added, agentmem distributed."""
    nodes = [coordinator] + (workers if distributed_over else [])
    for dsn in nodes:
        with psycopg.connect(dsn, autocommit=True) as a:
            a.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            a.execute(f"CREATE DATABASE {name}")
    if distributed_over:
        for dsn in nodes:
            with psycopg.connect(dsn, dbname=name, autocommit=True) as c:
                c.execute("CREATE EXTENSION citus")
    c = psycopg.connect(coordinator, dbname=name, autocommit=True)
    if distributed_over:
        port = lambda dsn: int(dict(kv.split("=") for kv in dsn.split())["port"])
        c.execute("SELECT citus_set_coordinator_host('127.0.0.1', %s)", (port(coordinator),))
        for w in workers[:distributed_over]:
            c.execute("SELECT citus_add_node('127.0.0.1', %s)", (port(w),))
    c.execute("CREATE EXTENSION agentmem")
    c.execute("SELECT mem_index_partition('resource')")
    if distributed_over:
        c.execute("SELECT mem_distribute()")
    return c


def run_clients(dsn, clients, jobs, work):
    """Runs `jobs` (a list per client) on `clients` connections at once; the seconds taken and
    every job's milliseconds."""
    times = [[] for _ in range(clients)]
    conns = [psycopg.connect(dsn, autocommit=True) for _ in range(clients)]

    def go(i):
        for job in jobs[i]:
            t0 = time.perf_counter()
            work(conns[i], job)
            times[i].append((time.perf_counter() - t0) * 1000)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.perf_counter() - t0
    for c in conns:
        c.close()
    return took, [t for ts in times for t in ts]


def add(c, m):
    """One message, naming its resource as an agent that knows its project does."""
    options = {"created_at": m["created_at"], "resource_id": m["resource"]}
    c.execute(
        "SELECT mem_message_add(%s, %s, %s, %s)",
        (m["thread"], m["role"], m["content"], json.dumps(options)),
    )


def add_by_thread(c, m):
    """One message named by its thread alone: the coordinator looks the thread up first."""
    c.execute(
        "SELECT mem_message_add(%s, %s, %s, %s)",
        (m["thread"], m["role"], m["content"], json.dumps({"created_at": m["created_at"]})),
    )


def search(c, job):
    q, resource = job
    c.execute(
        "SELECT message_id, score FROM mem_search(%s, %s)",
        (q, json.dumps({"resource_id": resource, "limit": 10})),
    ).fetchall()


def measure(args, label, c, dsn, messages, questions, writer=add):
    """Ingest and search with the clients; throughput, latencies and CPU per call per node."""
    threads = {}
    for m in messages:
        threads.setdefault(m["thread"], m["resource"])
    for t, r in threads.items():
        c.execute("SELECT mem_thread_create(%s, NULL, NULL, %s)", (r, json.dumps({"id": t})))
    # Each client writes whole threads, so a thread's messages keep their order.
    jobs = [[] for _ in range(args.clients)]
    order = {t: i % args.clients for i, t in enumerate(threads)}
    for m in messages:
        jobs[order[m["thread"]]].append(m)
    before = cpu(args.citus_dir)
    took, add_ms = run_clients(dsn, args.clients, jobs, writer)
    after = cpu(args.citus_dir)
    add_cpu = {n: (after[n] - before[n]) / len(messages) * 1000 for n in NODES}
    resources = sorted(set(threads.values()))
    qjobs = [[] for _ in range(args.clients)]
    for i, q in enumerate(questions):
        qjobs[i % args.clients].append((q, resources[i % len(resources)]))
    before = cpu(args.citus_dir)
    qtook, q_ms = run_clients(dsn, args.clients, qjobs, search)
    after = cpu(args.citus_dir)
    q_cpu = {n: (after[n] - before[n]) / len(questions) * 1000 for n in NODES}
    problems = c.execute("SELECT count(*) FROM mem_index_check()").fetchone()[0]
    return {
        "label": label,
        "ingest": len(messages) / took,
        "add_p50": pct(add_ms, 0.5),
        "add_cpu": add_cpu,
        "qps": len(questions) / qtook,
        "q_p50": pct(q_ms, 0.5),
        "q_p95": pct(q_ms, 0.95),
        "q_cpu": q_cpu,
        "problems": problems,
        "bytes": int(c.execute(
            "SELECT sum(citus_total_relation_size(logicalrelid)) FROM pg_dist_partition "
            "WHERE partmethod = 'h'"
        ).fetchone()[0])
        if label != "one node"
        else int(c.execute(
            "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind = 'r' AND n.nspname IN ('public', 'agentmem_private') "
            "AND (c.relname LIKE 'mem_threads' OR c.relname LIKE 'mem_messages' "
            "OR c.relname LIKE 'mem_compactions' OR c.relname LIKE 'mem_idx_%')"
        ).fetchone()[0]),
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--coordinator", required=True)
    p.add_argument("--workers", required=True, help="connection strings separated by ';'")
    p.add_argument("--citus-dir", required=True)
    p.add_argument("--corpus", required=True)
    p.add_argument("--queries", required=True)
    p.add_argument("--messages", type=int, default=6000)
    p.add_argument("--questions", type=int, default=1500)
    p.add_argument("--clients", type=int, default=4)
    p.add_argument("--out", default="benches/results/citus-latest.md")
    args = p.parse_args()
    workers = [w for w in args.workers.split(";") if w]
    with open(args.corpus) as f:
        messages = [json.loads(line) for _, line in zip(range(args.messages), f)]
    with open(args.queries) as f:
        questions = [" ".join(json.loads(line)["query"].split()[:8]) for line in f]
    questions = questions[: args.questions]
    rows = []
    dsn = psycopg.conninfo.make_conninfo(args.coordinator, dbname="agentmem_bench")
    layouts = (
        ("one node", 0, add),
        ("1 worker", 1, add),
        ("2 workers", 2, add),
        ("2 workers, thread looked up", 2, add_by_thread),
    )
    for label, over, writer in layouts:
        c = database(args.coordinator, workers, "agentmem_bench", over)
        rows.append(measure(args, label, c, dsn, messages, questions, writer))
        c.close()
        print(rows[-1], file=sys.stderr)
    base = rows[0]
    out = [
        f"# agentmem on Citus ({time.strftime('%Y-%m-%d')})",
        "",
        f"{len(messages)} messages of the real-code corpus ({len({m['resource'] for m in messages})} "
        f"resources), one `mem_message_add` per call naming its resource (the last row: naming "
        f"only the thread); {len(questions)} searches within a resource "
        f"(`mem_search` with `resource_id`, top 10); {args.clients} concurrent clients over TCP. "
        "Coordinator and workers share this machine's two cores. "
        "`make bench-citus` (quick: `BENCH_CITUS_ARGS=\"--messages 2000 --questions 500\"`).",
        "",
        "| layout | ingest msg/s | ratio | add p50 ms | search q/s | ratio | search p50 / p95 ms | index problems |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        out.append(
            f"| {r['label']} | {r['ingest']:,.0f} | {r['ingest'] / base['ingest']:.2f}× | "
            f"{r['add_p50']:.2f} | {r['qps']:,.0f} | {r['qps'] / base['qps']:.2f}× | "
            f"{r['q_p50']:.2f} / {r['q_p95']:.2f} | {r['problems']} |"
        )
    out += [
        "",
        "CPU milliseconds per call, by node (all processes of the node, from /proc):",
        "",
        "| layout | add: coordinator | add: workers | search: coordinator | search: workers |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        wa = r["add_cpu"]["worker1"] + r["add_cpu"]["worker2"]
        wq = r["q_cpu"]["worker1"] + r["q_cpu"]["worker2"]
        out.append(
            f"| {r['label']} | {r['add_cpu']['coordinator']:.2f} | {wa:.2f} | "
            f"{r['q_cpu']['coordinator']:.2f} | {wq:.2f} |"
        )
    two = rows[2]
    co_add, co_q = two["add_cpu"]["coordinator"], two["q_cpu"]["coordinator"]
    w_add = two["add_cpu"]["worker1"] + two["add_cpu"]["worker2"]
    w_q = two["q_cpu"]["worker1"] + two["q_cpu"]["worker2"]
    per_msg = two["bytes"] / len(messages)
    cores, workers_n, disk = 8, 8, 500e9
    ingest = min(cores * 1000 / co_add, workers_n * cores * 1000 / w_add)
    qps = min(cores * 1000 / co_q, workers_n * cores * 1000 / w_q)
    out += [
        "",
        f"**Projection** (not a measurement) for 8 workers of {cores} cores and "
        f"{disk / 1e9:.0f} GB each and a coordinator of {cores} cores, from the 2-worker row's CPU "
        "per call (a call's work on a worker is independent of the number of workers: it reads "
        "and writes only its resource's shards; the coordinator's is the lookup and the handover):",
        "",
        f"* ingest: min({cores} × 1000 / {co_add:.2f} coordinator, 8 × {cores} × 1000 / {w_add:.2f} "
        f"workers) ≈ **{ingest:,.0f} msg/s**;",
        f"* searches within a resource: min({cores} × 1000 / {co_q:.2f}, 8 × {cores} × 1000 / "
        f"{w_q:.2f}) ≈ **{qps:,.0f} q/s**;",
        f"* storage: {per_msg:,.0f} bytes per message (rows and index, this corpus) → "
        f"≈ **{8 * disk / per_msg / 1e9:.1f} billion messages** over 8 × {disk / 1e9:.0f} GB, in "
        "any number of resources (each on one worker; a resource larger than a worker's disk "
        "does not fit).",
        "",
        "Where the coordinator bounds it, more coordinators help: Citus runs these calls from any "
        "node, workers included.",
    ]
    report(out, args.out)


if __name__ == "__main__":
    main()
