#!/usr/bin/env python3
"""Instructions per message of SQLite ingest, counted by valgrind (callgrind): the FTS5 peer,
and agentmem's plain `INSERT` and `mem_message_add` for each build given, on REALTALK's chat
turns (and, with `--code`, on the benches' real-code messages) with the schema, pragmas and
transactions of `ingest_bench.py`.

    instructions.py --dialogue target/quality/realtalk.json [--code CORPUS.jsonl]
                    --ext NAME=DIR/agentmem0 [...] [--messages 5000] [--out FILE]

Wall-clock rates on a shared machine differ by a tenth from run to run, more than most single
changes; an instruction count does not. Each system runs twice in a child process, with one
message and with `--messages`: the difference over the extra messages is the cost of one,
without the start-up both runs pay (Python, the schema, the token tables). Instructions are
not time (a cache miss costs many), so the rates of `make bench-ingest` stay the measure of the
goal; this says where a change moved the work. Needs valgrind (Debian's package).
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


def counted(system, ext, n, corpus):
    """Instructions callgrind counts for a child writing `n` messages of `corpus` (its
    arguments) with `system`."""
    fd, out = tempfile.mkstemp(prefix="agentmem-callgrind-")
    os.close(fd)
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, sys.executable,
           os.path.abspath(__file__), "--child", system, "--child-messages", str(n)] + corpus \
        + (["--ext", ext] if ext else [])
    log = subprocess.run(cmd, capture_output=True, text=True, check=True).stderr
    os.remove(out)
    return int(re.search(r"Collected : (\d+)", log).group(1))


def per_message(system, ext, n, corpus):
    return (counted(system, ext, n, corpus) - counted(system, ext, 1, corpus)) / (n - 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dialogue", required=True)
    ap.add_argument("--code", help="the benches' real-code corpus (JSON lines), counted too")
    ap.add_argument("--ext", action="append", default=[], help="NAME=PATH of agentmem0")
    ap.add_argument("--messages", type=int, default=5000)
    ap.add_argument("--out")
    ap.add_argument("--child")
    ap.add_argument("--child-messages", type=int)
    a = ap.parse_args()
    if a.child:
        return child(a)
    corpora = [("REALTALK chat turns", ["--dialogue", a.dialogue])]
    if a.code:
        corpora.append(("real-code messages", ["--dialogue", a.dialogue, "--code", a.code]))
    lines = []
    for title, corpus in corpora:
        peer = per_message("fts5", None, a.messages, corpus)
        lines += [f"Instructions per message, {a.messages:,} {title} "
                  f"(`benches/ingest/instructions.py`); ratio: FTS5's count over ours.", "",
                  "| system | instructions | ratio to FTS5 |", "|---|---:|---:|",
                  f"| FTS5 | {peer:,.0f} | 1.00× |"]
        for spec in a.ext:
            name, path = spec.split("=", 1)
            for system in ("insert", "add"):
                n = per_message(system, path, a.messages, corpus)
                label = "plain `INSERT`" if system == "insert" else "`mem_message_add`"
                lines.append(f"| {name}: {label} | {n:,.0f} | {peer / n:.2f}× |")
        lines.append("")
    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
