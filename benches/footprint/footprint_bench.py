"""What a new user downloads and waits for: the packages' sizes, the time to load the SQLite
extension and to count tokens the first time in a fresh process, and the steady-state counting
speed, for one or more builds side by side (each a directory `scripts/dist.sh` wrote).

    python3 benches/footprint/footprint_bench.py --build before=/tmp/dist-before \
        --build after=dist --out benches/results/footprint-DATE.md

The text counted is this repository's own source and documentation (code and prose, some
non-ASCII), each file one `mem_tokens` call; the first pass warms the per-thread memo, the
figure is the best of three passes after it.
"""

import argparse
import glob
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from benchlib import report  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# A fresh process: load the extension, count a short text, print both times in ms.
FIRST_CALL = r"""
import sqlite3, sys, time
c = sqlite3.connect(":memory:")
c.enable_load_extension(True)
t0 = time.perf_counter()
c.load_extension(sys.argv[1])
t1 = time.perf_counter()
c.execute("SELECT mem_tokens('hello world, a first count', ?)", (sys.argv[2],)).fetchone()
t2 = time.perf_counter()
print((t1 - t0) * 1e3, (t2 - t1) * 1e3)
"""


def mb(path):
    return os.path.getsize(path) / 1e6


def sizes(d):
    """The packages of a dist directory: name → MB."""
    out = {}
    for label, pattern in [
        ("Python wheel", "*.whl"),
        ("npm package", "*.tgz"),
        ("Debian package (Postgres)", "*.deb"),
        ("SQLite library (stripped)", "agentmem0.so"),
        ("agentmem command (stripped)", "agentmem"),
    ]:
        found = glob.glob(os.path.join(d, pattern))
        out[label] = mb(found[0]) if found else float("nan")
    return out


def first_call(lib, encoding, runs):
    """Median load and first-count times (ms) over `runs` fresh processes."""
    loads, firsts = [], []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", FIRST_CALL, lib, encoding],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        loads.append(float(out[0]))
        firsts.append(float(out[1]))
    return statistics.median(loads), statistics.median(firsts)


def texts():
    """This repository's source and documentation, as git lists it."""
    files = subprocess.run(
        ["git", "-C", ROOT, "ls-files", "*.rs", "*.md", "*.py", "*.case", "*.sql"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    out = []
    for f in files:
        with open(os.path.join(ROOT, f), encoding="utf-8", errors="replace") as h:
            out.append(h.read())
    return out


def steady(lib, docs, encoding):
    """MB/s counting `docs` one call each, best of three passes after a warm one; the total."""
    import sqlite3

    c = sqlite3.connect(":memory:")
    c.enable_load_extension(True)
    c.load_extension(lib)
    total = sum(len(d.encode()) for d in docs)
    best, tokens = float("inf"), 0
    for p in range(4):
        t = time.perf_counter()
        n = 0
        for d in docs:
            n += c.execute("SELECT mem_tokens(?, ?)", (d, encoding)).fetchone()[0]
        if p > 0:
            best = min(best, time.perf_counter() - t)
        tokens = n
    return total / 1e6 / best, tokens


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", action="append", required=True, help="NAME=DIST_DIR, repeatable")
    ap.add_argument("--runs", type=int, default=15, help="fresh processes per first-call figure")
    ap.add_argument("--out", default=os.path.join(ROOT, "benches/results/footprint-latest.md"))
    a = ap.parse_args()
    builds = [b.split("=", 1) for b in a.build]
    docs = texts()
    mbytes = sum(len(d.encode()) for d in docs) / 1e6
    rows = {}
    for name, d in builds:
        lib = os.path.join(d, "agentmem0.so")
        r = {"sizes": sizes(d)}
        for enc in ["o200k_base", "cl100k_base"]:
            r[enc] = first_call(lib, enc, a.runs) + steady(lib, docs, enc)
        rows[name] = r
    names = [n for n, _ in builds]
    base = names[0]
    lines = [
        f"# Footprint ({time.strftime('%Y-%m-%d')})",
        "",
        "`python3 benches/footprint/footprint_bench.py "
        + " ".join(f"--build {n}={d}" for n, d in builds)
        + "` — package sizes from `scripts/dist.sh`; load and first `mem_tokens` call: median "
        f"of {a.runs} fresh Python processes (sqlite3, `:memory:`); steady state: "
        f"{len(docs)} files of this repository ({mbytes:.1f} MB of code and prose), one call "
        "each, best of three passes after a warm one. Ratios are against "
        f"`{base}`.",
        "",
        "| | " + " | ".join(names) + " | " + " | ".join(f"{n} / {base}" for n in names[1:]) + " |",
        "|---|" + "---:|" * (2 * len(names) - 1),
    ]

    def row(label, values, fmt):
        ratios = [values[i] / values[0] for i in range(1, len(values))]
        lines.append(
            f"| {label} | "
            + " | ".join(fmt.format(v) for v in values)
            + " | "
            + " | ".join(f"{x:.2f}×" for x in ratios)
            + " |"
        )

    for label in rows[base]["sizes"]:
        row(f"{label}, MB", [rows[n]["sizes"][label] for n in names], "{:.1f}")
    for enc in ["o200k_base", "cl100k_base"]:
        row(f"load the extension, ms ({enc} run)", [rows[n][enc][0] for n in names], "{:.1f}")
        row(f"first mem_tokens call, ms ({enc})", [rows[n][enc][1] for n in names], "{:.1f}")
        row(f"steady-state counting, MB/s ({enc})", [rows[n][enc][2] for n in names], "{:.1f}")
        row(f"tokens counted ({enc})", [rows[n][enc][3] for n in names], "{:.0f}")
    report(lines, a.out)


if __name__ == "__main__":
    main()
