#!/usr/bin/env python3
"""SQLite ingest on two real-text corpora of different shape: agentmem's plain `INSERT` and
`mem_message_add` against the FTS5 peer of `make bench` (the same schema, pragmas and
transactions of 1,000 rows), from the same run.

    ingest_bench.py --code target/bench-corpus/code-1000000.jsonl \\
        --dialogue target/quality/realtalk.json [--sizes 200000,1000000] [--ext dist/agentmem0]

* code: the benches' corpus (`benches/corpus/build_code_corpus.py`): a coding agent's
  conversations over real Rust crates — source files, doc comments, tool output.
* dialogue: two people chatting (REALTALK turns, `benches/quality/realtalk.py`), repeated in
  order until the size is reached, each repetition's turns marked with their round so that no
  two messages are equal.

For each corpus the report gives the shape (characters and words per message) next to the
rates, since that shape is what separates them: a fixed cost per message weighs ten times
more on a 60-character chat turn than on a 1 KB code message.
"""

import argparse
import json
import os
import re
import sqlite3
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from benchlib import report  # noqa: E402

BATCH = 1000
PRAGMAS = ("PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL",
           "PRAGMA cache_size = -65536", "PRAGMA temp_store = MEMORY")
PEER_SCHEMA = """
CREATE TABLE messages (
  id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, role TEXT NOT NULL, created_at INTEGER NOT NULL,
  content TEXT NOT NULL, searchText TEXT NOT NULL);
CREATE INDEX messages_thread ON messages (thread_id, created_at);
CREATE VIRTUAL TABLE messages_fts USING fts5(searchText, content = messages, content_rowid = rowid,
  tokenize = 'unicode61 tokenchars ''-_''');
CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts(rowid, searchText) VALUES (new.rowid, new.searchText);
END;
"""
WORD = re.compile(r"\w+")


def code_corpus(path, n):
    out = []
    with open(path) as f:
        for line in f:
            if len(out) == n:
                break
            v = json.loads(line)
            out.append((v["thread"], v["role"], v["content"], v["created_at"]))
    if len(out) < n:
        sys.exit("%s holds %d messages, fewer than %d" % (path, len(out), n))
    return out


def dialogue_corpus(path, n):
    with open(path) as f:
        data = json.load(f)
    turns = []
    for conv in data:
        first = None
        for s in conv["sessions"]:
            for t in s["turns"]:
                if t["text"]:
                    first = first or t["speaker"]
                    role = "user" if t["speaker"] == first else "assistant"
                    turns.append(("%s/%s" % (conv["id"], s["id"]), role, t["text"]))
    out = []
    for i in range(n):
        rnd, k = divmod(i, len(turns))
        thread, role, text = turns[k]
        out.append(("%s#%d" % (thread, rnd), role, text if rnd == 0 else "%s (%d)" % (text, rnd),
                    1_700_000_000_000 + i))
    return out


def shape(msgs):
    chars = sorted(len(m[2]) for m in msgs)
    words = sorted(len(WORD.findall(m[2])) for m in msgs)
    return {"chars_median": chars[len(chars) // 2], "chars_mean": statistics.fmean(chars),
            "words_median": words[len(words) // 2], "words_mean": statistics.fmean(words),
            "threads": len({m[0] for m in msgs})}


def connect(dirname, name, ext=None):
    path = os.path.join(dirname, name)
    c = sqlite3.connect(path, isolation_level=None)
    for p in PRAGMAS:
        c.execute(p).fetchall()
    if ext:
        c.enable_load_extension(True)
        c.load_extension(ext)
        c.enable_load_extension(False)
        c.execute("SELECT mem_init()")
    return c


def timed(c, msgs, sql, row):
    t = time.perf_counter()
    for start in range(0, len(msgs), BATCH):
        c.execute("BEGIN")
        for i in range(start, min(start + BATCH, len(msgs))):
            c.execute(sql, row(i, msgs[i])).fetchall()
        c.execute("COMMIT")
    return len(msgs) / (time.perf_counter() - t)


def peer(dirname, msgs):
    c = connect(dirname, "fts5.db")
    c.executescript(PEER_SCHEMA)
    return timed(c, msgs, "INSERT INTO messages (id, thread_id, role, created_at, content, searchText) "
                 "VALUES (?, ?, ?, ?, ?, ?)",
                 lambda i, m: ("m%d" % i, m[0], m[1], m[3], m[2], m[2]))


def threads_for(c, msgs):
    ids = {}
    c.execute("BEGIN")
    for m in msgs:
        if m[0] not in ids:
            ids[m[0]] = c.execute("SELECT mem_thread_create('bench', ?)", (m[0],)).fetchone()[0]
    c.execute("COMMIT")
    return ids


def agentmem_insert(dirname, msgs, ext):
    c = connect(dirname, "insert.db", ext)
    ids = threads_for(c, msgs)
    return timed(c, msgs, "INSERT INTO mem_messages (id, thread_id, role, raw_content, created_at) "
                 "VALUES (?, ?, ?, ?, ?)",
                 lambda i, m: ("m%d" % i, ids[m[0]], m[1], m[2], m[3]))


def agentmem_add(dirname, msgs, ext):
    c = connect(dirname, "add.db", ext)
    ids = threads_for(c, msgs)
    return timed(c, msgs, "SELECT mem_message_add(?, ?, ?, ?)",
                 lambda i, m: (ids[m[0]], m[1], m[2], '{"id":"m%d","created_at":%d}' % (i, m[3])))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--code", required=True)
    ap.add_argument("--dialogue", required=True)
    ap.add_argument("--sizes", default="200000,1000000")
    ap.add_argument("--ext", default=os.path.join(REPO, "dist", "agentmem0"))
    ap.add_argument("--dir", default=os.path.join(REPO, "target", "bench-ingest"))
    ap.add_argument("--out", default=os.path.join(HERE, "..", "results", "ingest-latest.md"))
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    os.makedirs(args.dir, exist_ok=True)
    rows, shapes = [], {}
    for corpus, load in (("code", lambda n: code_corpus(args.code, n)),
                         ("dialogue", lambda n: dialogue_corpus(args.dialogue, n))):
        for n in sizes:
            msgs = load(n)
            shapes.setdefault(corpus, shape(msgs[:200000]))
            rates = {}
            for name, run in (("fts5", lambda d: peer(d, msgs)),
                              ("insert", lambda d: agentmem_insert(d, msgs, args.ext)),
                              ("add", lambda d: agentmem_add(d, msgs, args.ext))):
                with tempfile.TemporaryDirectory(dir=args.dir) as d:
                    rates[name] = run(d)
                print("%s %d %s: %.0f msg/s" % (corpus, n, name, rates[name]), file=sys.stderr)
            rows.append((corpus, n, rates))
    lines = [
        "# SQLite ingest on two corpora",
        "",
        "`make bench-ingest` (benches/ingest/ingest_bench.py): messages per second, transactions of "
        "%d rows, WAL, `synchronous = NORMAL`, 64 MiB cache, `temp_store = MEMORY` for every system "
        "(the pragmas of `make bench`); the peer is `make bench`'s FTS5 schema (a messages table "
        "with its thread index and an external-content FTS5 table kept by a trigger). Python's "
        "sqlite3 with the system SQLite %s." % (BATCH, sqlite3.sqlite_version),
        "",
        "| corpus | messages | FTS5 | agentmem INSERT | ratio | agentmem mem_message_add | ratio |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for corpus, n, r in rows:
        lines.append("| %s | %d | %.0f | %.0f | %.2f× | %.0f | %.2f× |" % (
            corpus, n, r["fts5"], r["insert"], r["insert"] / r["fts5"], r["add"], r["add"] / r["fts5"]))
    lines += ["", "Corpus shape (first 200,000 messages):", "",
              "| corpus | characters median | mean | words median | mean | threads |",
              "|---|---:|---:|---:|---:|---:|"]
    for corpus, s in shapes.items():
        lines.append("| %s | %d | %.0f | %d | %.1f | %d |" % (
            corpus, s["chars_median"], s["chars_mean"], s["words_median"], s["words_mean"], s["threads"]))
    lines += ["", "The goal: both agentmem columns ≥ 0.9× FTS5 on both corpora."]
    report(lines, args.out)


if __name__ == "__main__":
    main()
