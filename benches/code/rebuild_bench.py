"""Whole rebuilds of a code graph's closure, one build of the extension beside another.

`graph_configure` rebuilds a resource's closure from its edges. The bench copies a database
that `agentmem index` wrote, changes the settings of its resource three times (depth 4 → 3,
3 → 4, the hub bound by one: a rebuild that changes few rows), and times each call, for every
build given, the builds alternated round by round.

    python3 benches/code/rebuild_bench.py --db target/bench-code/tree.db \
        --ext base=/tmp/base/agentmem0.so --ext new=target/release/libagentmem0.so
"""

import argparse
import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

CHANGES = [
    ("depth 4 → 3", '{"max_depth":3}'),
    ("depth 3 → 4", '{"max_depth":4}'),
    ("hub bound 1000 → 999", '{"hub_in_degree":999}'),
]


def run(db: Path, ext: str, resource: str) -> list[float]:
    """Times each change of settings on a copy of `db` with the extension at `ext`."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "graph.db"
        shutil.copy(db, copy)
        c = sqlite3.connect(copy)
        c.enable_load_extension(True)
        c.load_extension(ext)
        times = []
        for _, options in CHANGES:
            start = time.perf_counter()
            c.execute("SELECT graph_configure(?, ?)", (resource, options)).fetchone()
            c.commit()
            times.append(time.perf_counter() - start)
        c.close()
        return times


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--db", required=True, type=Path, help="a database agentmem index wrote")
    p.add_argument("--ext", action="append", required=True, help="NAME=PATH of a build")
    p.add_argument("--resource", default="project:tree")
    p.add_argument("--rounds", type=int, default=2)
    a = p.parse_args()
    builds = [e.split("=", 1) for e in a.ext]
    seen: dict[str, list[list[float]]] = {name: [] for name, _ in builds}
    for _ in range(a.rounds):
        for name, path in builds:
            seen[name].append(run(a.db, path, a.resource))
    rows = sqlite3.connect(a.db).execute("SELECT count(*) FROM mem_graph_closure").fetchone()[0]
    print(f"Closure rows before: {rows:,}; median of {a.rounds} rounds, seconds.\n")
    print("| change | " + " | ".join(name for name, _ in builds) + " |")
    print("|---|" + "---:|" * len(builds))
    for i, (label, _) in enumerate(CHANGES):
        cells = [f"{statistics.median(r[i] for r in seen[name]):.2f}" for name, _ in builds]
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
