#!/usr/bin/env python3
"""`agentmem index` over a 5,000-file tree of real Rust code, beside universal-ctags on the
same tree: the cold index (files/s, MB/s), a run with nothing changed, and one file changed
(end to end: the process, the walk, the stat of every file, the call; and as `--watch`
sees it), on SQLite and, with --pg, on Postgres. The tree is the crates Cargo.lock pins, in its order, as cargo's registry
holds them (files over 1 MiB left out), copied to target/bench-code/tree.

  python3 benches/code/tree_bench.py [--files 5000] [--pg CONNINFO] [--out FILE]

Needs the release CLI (`cargo build --release -p agentmem-cli`) and, for the core-only
figure, the release library (`make sqlite-release`), loaded by a Python whose sqlite3 loads
extensions (Debian's)."""
import argparse, glob, json, os, shutil, statistics, subprocess, sys, time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.path.join(REPO, "target/release/agentmem")
LIB = os.path.join(REPO, "target/release/libagentmem0")
WORK = os.path.join(REPO, "target/bench-code")
TREE = os.path.join(WORK, "tree")
RUNS = 7
sys.path[:0] = [os.path.join(REPO, "benches"), os.path.join(REPO, "benches", "graph")]
import benchlib  # noqa: E402
import graph_bench  # noqa: E402


def pinned_crates():
    """(name, version) of every package of Cargo.lock from the registry, in the lock's order."""
    out = []
    for block in open(os.path.join(REPO, "Cargo.lock")).read().split("[[package]]")[1:]:
        fields = dict(
            (l.split(" = ")[0], l.split(" = ")[1].strip('"'))
            for l in block.strip().splitlines()
            if " = " in l
        )
        if fields.get("source", "").startswith("registry+"):
            out.append((fields["name"], fields["version"]))
    return out


def build_tree(n):
    """Copies the first n .rs files of the pinned crates into TREE (kept between runs)."""
    stamp = os.path.join(WORK, f"tree-{n}.done")
    if os.path.exists(stamp):
        return
    shutil.rmtree(TREE, ignore_errors=True)
    count = 0
    for name, version in pinned_crates():
        found = glob.glob(os.path.expanduser(f"~/.cargo/registry/src/*/{name}-{version}"))
        if not found:
            continue
        for root, dirs, files in os.walk(found[0]):
            dirs.sort()
            for f in sorted(files):
                src = os.path.join(root, f)
                if not f.endswith(".rs") or os.path.getsize(src) > 1 << 20 or os.path.islink(src):
                    continue
                dst = os.path.join(TREE, os.path.relpath(src, os.path.dirname(found[0])))
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copyfile(src, dst)
                count += 1
                if count >= n:
                    open(stamp, "w").close()
                    return
    open(stamp, "w").close()


def index(target):
    """Runs `agentmem index` on the tree; (wall seconds, its JSON answer)."""
    t = time.perf_counter()
    out = subprocess.run(
        [CLI, *target, "index", TREE, "--resource", "bench", "--quiet", "--json"],
        check=True, capture_output=True, text=True,
    ).stdout
    return time.perf_counter() - t, json.loads(out)


def median_file():
    files = []
    for root, _, names in os.walk(TREE):
        files += [os.path.join(root, f) for f in names]
    files.sort(key=lambda p: (os.path.getsize(p), p))
    return files[len(files) // 2]


def one_changed(target, path, original):
    """p50 of RUNS end-to-end runs, each after adding a new function to the file."""
    times = []
    for i in range(RUNS):
        with open(path, "w") as f:
            f.write(original + f"\nfn bench_added_{i}() {{}}\n")
        secs, answer = index(target)
        assert answer["indexed"] == 1, answer
        times.append(secs)
    with open(path, "w") as f:
        f.write(original)
    index(target)
    return statistics.median(times)


def watched(target, path, original):
    """p50 of RUNS changes seen by `agentmem index --watch`: from the write to its line."""
    w = subprocess.Popen(
        [CLI, *target, "index", TREE, "--resource", "bench", "--quiet", "--json", "--watch"],
        stdout=subprocess.PIPE, text=True,
    )
    json.loads(w.stdout.readline())
    times = []
    for i in range(RUNS):
        t = time.perf_counter()
        with open(path, "w") as f:
            f.write(original + f"\nfn watch_added_{i}() {{}}\n")
        answer = json.loads(w.stdout.readline())
        times.append(time.perf_counter() - t)
        assert answer["indexed"] == 1, answer
    with open(path, "w") as f:
        f.write(original)
    json.loads(w.stdout.readline())
    w.kill()
    w.wait()
    return statistics.median(times)


def connect(db_path):
    """The database as a client that follows docs/install.md opens it, the extension loaded."""
    return benchlib.open_sqlite(db_path, LIB)


def core_only(db_path, rel, original, name):
    """p50 of graph_index_file alone on the SQLite database, each run adding a function
    `name(i)` (the file given back its original text between runs, untimed)."""
    db = connect(db_path)
    times = []
    for i in range(RUNS):
        t = time.perf_counter()
        db.execute("SELECT graph_index_file('bench', ?, ?)", (rel, original + f"\nfn {name(i)}() {{}}\n"))
        times.append(time.perf_counter() - t)
        db.execute("SELECT graph_index_file('bench', ?, ?)", (rel, original))
    db.close()
    return statistics.median(times)


def code_sample(rows_of):
    """Start nodes and new edges of the code graph (graph_bench.sample_edges), from its
    nodes and present edges as `rows_of(sql)` returns them."""
    nodes = rows_of("SELECT id, type FROM mem_graph_nodes WHERE resource_id = 'bench'")
    edges = rows_of("SELECT from_id, to_id, type FROM mem_graph_edges WHERE resource_id = "
                    "'bench' AND stale_at IS NULL AND invalid_at IS NULL")
    return graph_bench.sample_edges(nodes, edges, 200, 42), len(nodes), len(edges)


def queries_sqlite(db_path):
    """graph_bench's queries beside the same-answer CTE, on the code graph the index wrote."""
    db = connect(db_path)
    s, nodes, edges = code_sample(lambda q: db.execute(q).fetchall())
    r = graph_bench.measure_sqlite(db, s)
    db.close()
    return s, nodes, edges, r


def row(label, secs, files, size):
    return f"| {label} | {secs:.2f} s | {files / secs:,.0f} | {size / 1e6 / secs:.2f} |"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=5000)
    ap.add_argument("--pg", help="a Postgres server (a database agentmem_code_bench is made)")
    ap.add_argument("--out")
    a = ap.parse_args()
    build_tree(a.files)
    files = sum(len(n) for _, _, n in os.walk(TREE))
    size = sum(os.path.getsize(os.path.join(r, f)) for r, _, n in os.walk(TREE) for f in n)
    target = os.path.join(WORK, "bench.db")
    for p in glob.glob(target + "*"):
        os.remove(p)
    lines = [f"`agentmem index` on {files:,} Rust files ({size / 1e6:.1f} MB) of the crates Cargo.lock pins.", ""]
    lines += ["| run | time | files/s | MB/s |", "|---|---:|---:|---:|"]
    cold, answer = index(["--db", target])
    lines.append(row("SQLite, cold", cold, files, size))
    t = time.perf_counter()
    subprocess.run(["ctags", "-R", "-f", "/dev/null", TREE], check=True)
    ctags = time.perf_counter() - t
    lines.append(row("universal-ctags -R (tags, no graph)", ctags, files, size))
    written = answer["written"]
    noop, _ = index(["--db", target])
    path = median_file()
    original = open(path).read()
    rel = os.path.relpath(path, TREE)
    changed = one_changed(["--db", target], path, original)
    watch = watched(["--db", target], path, original)
    core = core_only(target, rel, original, lambda i: f"core_added_{i}")
    # A name thousands of references elsewhere name: none of them can move.
    core_new = core_only(target, rel, original, lambda i: "new")
    sample, n_nodes, n_edges, sq = queries_sqlite(target)
    graph_lines = ["### sqlite", ""] + graph_bench.table(sq, sample) + [""]
    pg_rows = []
    if a.pg:
        import psycopg
        with psycopg.connect(a.pg, autocommit=True) as c:
            c.execute("DROP DATABASE IF EXISTS agentmem_code_bench")
            c.execute("CREATE DATABASE agentmem_code_bench")
        dsn = a.pg.replace("dbname=postgres", "dbname=agentmem_code_bench")
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("CREATE EXTENSION agentmem")
        pg_cold, _ = index(["--pg", dsn])
        lines.append(row("Postgres, cold", pg_cold, files, size))
        pg_noop, _ = index(["--pg", dsn])
        pg_changed = one_changed(["--pg", dsn], path, original)
        pg_rows = [
            f"| Postgres, nothing changed | {pg_noop * 1e3:.0f} ms |",
            f"| Postgres, one file changed | {pg_changed * 1e3:.0f} ms |",
        ]
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("VACUUM ANALYZE")
            graph_lines += ["### postgres", ""] + graph_bench.table(
                graph_bench.measure_postgres(c, sample), sample) + [""]
        with psycopg.connect(a.pg, autocommit=True) as c:
            c.execute("DROP DATABASE agentmem_code_bench")
    lines += [
        "",
        f"Written: {written['symbols']:,} symbols, {sum(written['edges'].values()):,} edges, "
        f"{written['chunks']:,} chunks; the database: {os.path.getsize(target) / 1e6:,.0f} MB.",
        "",
        f"One file changed: `{rel}` ({len(original.encode()) / 1e3:.1f} KB, the median size), a function "
        f"added; p50 of {RUNS}.",
        "",
        "| run | time |",
        "|---|---:|",
        f"| SQLite, nothing changed (process, walk, stat of every file) | {noop * 1e3:.0f} ms |",
        f"| SQLite, one file changed, end to end (a new process) | {changed * 1e3:.0f} ms |",
        f"| SQLite, one file changed, seen by `--watch` (from the write to its answer, 20 ms settling included) | {watch * 1e3:.0f} ms |",
        f"| SQLite, one file changed, `graph_index_file` alone | {core * 1e3:.1f} ms |",
        f"| SQLite, one file changed, `graph_index_file` alone, the function named `new` | {core_new * 1e3:.1f} ms |",
        *pg_rows,
        "",
        "## Graph queries on this code graph",
        "",
        f"benches/graph/graph_bench.py's queries on the graph the index wrote ({n_nodes:,} nodes, "
        f"{n_edges:,} present edges), beside the recursive CTEs over the same edges table; "
        "p50 in ms over 200 sampled nodes, all rows and columns fetched, JSON and arrays as "
        "text (graph_bench.raw_cursor); ratios are CTE p50 / agentmem p50. "
        "Goals: ≥ 2× the same-answer CTE at depth 3, ≥ 1× at depth 1, edge add ≤ 1 ms.",
        "",
        *graph_lines,
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
