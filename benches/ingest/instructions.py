#!/usr/bin/env python3
"""Instructions per message of SQLite ingest, counted by valgrind (callgrind): the FTS5 peer,
and agentmem's plain `INSERT` and `mem_message_add` for each build given, on REALTALK's chat
turns (and, with `--code`, on the benches' real-code messages) with the schema, pragmas and
transactions of `ingest_bench.py`.

    instructions.py --dialogue target/quality/realtalk.json [--code CORPUS.jsonl]
                    --ext NAME=DIR/agentmem0 [...] [--messages 5000] [--caches] [--out FILE]

Wall-clock rates on a shared machine differ by a tenth from run to run, more than most single
changes; an instruction count does not. Each system runs twice in a child process, with one
message and with `--messages`: the difference over the extra messages is the cost of one,
without the start-up both runs pay (Python, the schema, the token tables). Instructions are
not time (a cache miss costs many), so the rates of `make bench-ingest` stay the measure of the
goal; this says where a change moved the work. `--caches` counts under cachegrind instead, with
the misses of its simulated first-level caches, where the clock and the instructions part.
Needs valgrind (Debian's package).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))


def child(args):
    """Writes `args.child_messages` messages with one system and prints nothing."""
    import ingest_bench as ib
    if args.code:
        msgs = ib.code_corpus(args.code, args.child_messages)
    else:
        msgs = ib.dialogue_corpus(args.dialogue, args.child_messages)
    run = {"fts5": lambda d: ib.peer(d, msgs),
           "insert": lambda d: ib.agentmem_insert(d, msgs, args.ext[0]),
           "add": lambda d: ib.agentmem_add(d, msgs, args.ext[0])}[args.child]
    d = tempfile.mkdtemp(prefix="agentmem-instr-")
    try:
        run(d)
    finally:
        shutil.rmtree(d)


def counted(system, ext, n, corpus, caches):
    """What valgrind counts for a child writing `n` messages of `corpus` (its arguments) with
    `system`: instructions (callgrind), and with `caches` also the first-level cache misses of
    instruction fetches and of data reads and writes (cachegrind's simulated caches)."""
    fd, out = tempfile.mkstemp(prefix="agentmem-valgrind-")
    os.close(fd)
    tool = ["--tool=cachegrind", "--cache-sim=yes", "--cachegrind-out-file=" + out] if caches \
        else ["--tool=callgrind", "--callgrind-out-file=" + out]
    cmd = ["valgrind"] + tool + [sys.executable, os.path.abspath(__file__), "--child", system,
                                 "--child-messages", str(n)] + corpus + (["--ext", ext] if ext else [])
    log = subprocess.run(cmd, capture_output=True, text=True, check=True).stderr
    os.remove(out)
    if not caches:
        return {"instructions": int(re.search(r"Collected : (\d+)", log).group(1))}
    number = lambda label: int(re.search(label + r":\s+([\d,]+)", log).group(1).replace(",", ""))
    return {"instructions": number("I   refs"), "I1": number("I1  misses"),
            "D1": number("D1  misses")}


def per_message(system, ext, n, corpus, caches):
    more, one = counted(system, ext, n, corpus, caches), counted(system, ext, 1, corpus, caches)
    return {k: (more[k] - one[k]) / (n - 1) for k in more}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dialogue", required=True)
    ap.add_argument("--code", help="the benches' real-code corpus (JSON lines), counted too")
    ap.add_argument("--ext", action="append", default=[], help="NAME=PATH of agentmem0")
    ap.add_argument("--messages", type=int, default=5000)
    ap.add_argument("--out")
    ap.add_argument("--caches", action="store_true",
                    help="count first-level cache misses too (cachegrind; slower)")
    ap.add_argument("--child")
    ap.add_argument("--child-messages", type=int)
    a = ap.parse_args()
    if a.child:
        return child(a)
    corpora = [("REALTALK chat turns", ["--dialogue", a.dialogue])]
    if a.code:
        corpora.append(("real-code messages", ["--dialogue", a.dialogue, "--code", a.code]))
    lines = []
    misses = " | L1 instruction misses | L1 data misses" if a.caches else ""
    cells = lambda c: f"{c['instructions']:,.0f}" + (
        f" | {c['I1']:,.0f} | {c['D1']:,.0f}" if a.caches else "")
    for title, corpus in corpora:
        peer = per_message("fts5", None, a.messages, corpus, a.caches)
        lines += [f"Instructions per message, {a.messages:,} {title} "
                  f"(`benches/ingest/instructions.py{' --caches' if a.caches else ''}`); "
                  "ratio: FTS5's instructions over ours.", "",
                  f"| system | instructions{misses} | ratio to FTS5 |",
                  "|---|---:|---:|" + ("---:|---:|" if a.caches else ""),
                  f"| FTS5 | {cells(peer)} | 1.00× |"]
        for spec in a.ext:
            name, path = spec.split("=", 1)
            for system in ("insert", "add"):
                c = per_message(system, path, a.messages, corpus, a.caches)
                label = "plain `INSERT`" if system == "insert" else "`mem_message_add`"
                lines.append(f"| {name}: {label} | {cells(c)} | "
                             f"{peer['instructions'] / c['instructions']:.2f}× |")
        lines.append("")
    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
