#!/usr/bin/env python3
"""graph_index_file over real code, beside universal-ctags on the same files: files/s and MB/s
cold (every file new), then one file changed in the indexed tree (the incremental case), on
the release library (`make sqlite-release`). Usage:
  /usr/bin/python3 benches/code/index_speed.py [DIR ...]
Default: the Rust crates of the code accuracy test (serde_json, regex-automata, fst, uuid,
base64, at the versions Cargo.lock pins, from cargo's registry). Debian's Python is the one
whose sqlite3 loads extensions."""
import glob, json, os, sqlite3, subprocess, sys, time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIB = os.path.join(REPO, "target/release/libagentmem0")
CRATES = ["serde_json", "regex-automata", "fst", "uuid", "base64"]
EXTS = (".rs", ".py", ".ts", ".tsx", ".js", ".go")
# Files per call of graph_index_files, as `agentmem index` sends them.
BATCH = 1000


def crate_dirs():
    lock = open(os.path.join(REPO, "Cargo.lock")).read().split("[[package]]")
    dirs = []
    for name in CRATES:
        block = next(b for b in lock if f'\nname = "{name}"\n' in b)
        version = next(l for l in block.splitlines() if l.startswith("version = ")).split('"')[1]
        found = glob.glob(os.path.expanduser(f"~/.cargo/registry/src/*/{name}-{version}"))
        dirs.append(found[0])
    return dirs


def sources(dirs):
    out = []
    for d in dirs:
        for root, _, files in os.walk(d):
            for f in sorted(files):
                if f.endswith(EXTS):
                    p = os.path.join(root, f)
                    try:
                        out.append((os.path.relpath(p, os.path.dirname(d)), open(p, encoding="utf-8").read()))
                    except UnicodeDecodeError:
                        pass
    return out


def main():
    dirs = sys.argv[1:] or crate_dirs()
    files = sources(dirs)
    size = sum(len(s.encode()) for _, s in files)
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.enable_load_extension(True)
    db.load_extension(LIB)
    db.execute("SELECT mem_init()")
    t = time.perf_counter()
    for i in range(0, len(files), BATCH):
        batch = [{"path": p, "source": s} for p, s in files[i:i + BATCH]]
        db.execute("SELECT graph_index_files('bench', ?)", (json.dumps(batch),))
    cold = time.perf_counter() - t
    nodes, edges = db.execute("SELECT (SELECT count(*) FROM mem_graph_nodes), (SELECT count(*) FROM mem_graph_edges)").fetchone()
    # One file changed: the largest, with a function added at its end.
    path, src = max(files, key=lambda f: len(f[1]))
    t = time.perf_counter()
    db.execute("SELECT graph_index_file('bench', ?, ?)", (path, src + "\nfn bench_added() {}\n"))
    one = time.perf_counter() - t
    t = time.perf_counter()
    subprocess.run(["ctags", "-R", "-f", "/dev/null", *dirs], check=True)
    ctags = time.perf_counter() - t
    print(f"{len(files)} files, {size / 1e6:.1f} MB: {nodes} nodes, {edges} edges")
    print(f"graph_index_files, cold: {cold:.2f} s, {len(files) / cold:.0f} files/s, {size / 1e6 / cold:.2f} MB/s")
    print(f"universal-ctags -R, same files: {ctags:.2f} s, {len(files) / ctags:.0f} files/s, {size / 1e6 / ctags:.2f} MB/s")
    print(f"one file changed ({path}, {len(src) / 1e3:.0f} KB): {one * 1e3:.1f} ms")


main()
