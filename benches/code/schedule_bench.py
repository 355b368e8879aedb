"""A cold index of a tree in batches of a given schedule, each call of `graph_index_files` timed.

`agentmem index` sends a tree indexed from nothing in batches: the first of 128 files or 8 MB
of source, each next as large as everything sent before (a growth of 2×), the files left
joining the batch under way while their source is less than half of what will have been
sent. The bench reads the tree's files first, then sends them in path order on the schedule
given (the first batch's size in files, its bytes in proportion, and the growth; `--first 0`
sends every file in one call), a new database each run, and prints each call and the total.

    python3 benches/code/schedule_bench.py --tree target/bench-code/tree \
        --ext target/release/libagentmem0 --first 128 --growth 2
"""

import argparse
import json
import os
import resource
import sqlite3
import tempfile
import time
from pathlib import Path

CODE = (".rs", ".py", ".ts", ".tsx", ".js", ".go")


def files_of(tree: Path) -> list[tuple[str, str]]:
    """The tree's source files that read as UTF-8, by path."""
    out = []
    for folder, _, names in os.walk(tree):
        for name in names:
            path = Path(folder) / name
            if name.endswith(CODE):
                try:
                    out.append((str(path.relative_to(tree)), path.read_text(encoding="utf-8")))
                except (UnicodeDecodeError, OSError):
                    pass
    return sorted(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, required=True)
    ap.add_argument("--ext", required=True, help="the extension, without its suffix")
    ap.add_argument("--first", type=int, default=128, help="files in the first batch; 0: one call")
    ap.add_argument("--growth", type=float, default=2.0)
    a = ap.parse_args()
    files = files_of(a.tree)
    total = sum(len(s.encode()) for _, s in files)
    first = a.first or len(files)
    with tempfile.TemporaryDirectory() as tmp:
        c = sqlite3.connect(Path(tmp) / "graph.db", isolation_level=None)
        c.enable_load_extension(True)
        c.load_extension(a.ext)
        c.execute("SELECT mem_init()")
        c.execute("PRAGMA cache_size=-131072")
        sent_files = sent_bytes = taken = 0
        batch: list[tuple[str, str]] = []
        size = 0

        def flush() -> None:
            nonlocal sent_files, sent_bytes, batch, size
            if not batch:
                return
            arg = json.dumps([{"path": p, "source": s} for p, s in batch])
            t = time.perf_counter()
            c.execute("SELECT graph_index_files('bench', ?)", (arg,)).fetchone()
            print(f"{len(batch):6d} files {size / 1e6:6.1f} MB {time.perf_counter() - t:8.2f} s", flush=True)
            sent_files += len(batch)
            sent_bytes += size
            batch, size = [], 0

        start = time.perf_counter()
        for path, source in files:
            n = len(source.encode())
            batch.append((path, source))
            size += n
            taken += n
            grown = a.growth - 1
            large = len(batch) >= max(first, grown * sent_files) or size >= max(
                (8 << 20) * first // 128, grown * sent_bytes
            )
            if large and (total - taken) * 2 >= sent_bytes + size:
                flush()
        flush()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"first {a.first} growth {a.growth}: {time.perf_counter() - start:.2f} s, max resident {rss:.0f} MB")


if __name__ == "__main__":
    main()
