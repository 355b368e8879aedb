"""LangGraph's store in agentmem (sqlite_agentmem.langgraph.AgentmemStore) against LangGraph's
own InMemoryStore on random operation sequences: the same items, the same namespaces, the same
filter results; BM25 and vector search checked on their own. Sync and async, on SQLite and,
when AGENTMEM_PG names a database, on Postgres through psycopg.

Where InMemoryStore raises (an order operator on a field an item lacks), agentmem answers that
the item does not pass, as LangGraph's Postgres store does: such a search is compared on the
items that hold the field. Namespaces are compared with those of the reference's live items
(InMemoryStore also lists namespaces it only read, or whose items are gone).

Usage: python langgraph_test.py [SEED]
"""

import asyncio
import json
import logging
import math
import os
import random
import sqlite3
import sys

import sqlite_agentmem
from langgraph.store.memory import InMemoryStore
from sqlite_agentmem.langgraph import AgentmemStore

# The reference store's vector math in pure Python is fine at this size.
logging.getLogger("langgraph.store.memory").setLevel(logging.ERROR)

NAMESPACES = [
    ("users", "ana"),
    ("users", "bob"),
    ("users", "ana", "notes"),
    ("docs",),
    ("docs", "auth", "old"),
]
PREFIXES = [(), ("users",), ("users", "ana"), ("docs",), ("docs", "auth"), ("nobody",)]
KEYS = ["k1", "k2", "k3"]
WORDS = ["redis", "token", "cookie", "invoice", "login"]
STEPS = 400


def random_value(rng):
    v = {"n": rng.randint(0, 5), "s": rng.choice(WORDS), "b": rng.random() < 0.5,
         "tags": rng.sample(WORDS, rng.randint(0, 2)), "meta": {"level": rng.randint(0, 2)}}
    if rng.random() < 0.2:
        v["n"] = float(v["n"])  # 2.0 equals 2
    if rng.random() < 0.15:
        del v["n"]
    return v


def random_filter(rng):
    word = rng.choice(WORDS)
    return rng.choice([
        {"s": word},
        {"n": rng.randint(0, 5)},
        {"b": rng.random() < 0.5},
        {"tags": rng.sample(WORDS, rng.randint(0, 2))},
        {"meta": {"level": rng.randint(0, 2)}},
        {"n": {rng.choice(["$gt", "$gte", "$lt", "$lte"]): rng.randint(0, 5)}},
        {"n": {"$ne": rng.randint(0, 5)}, "s": {"$eq": word}},
        {"missing": None},
    ])


def shape(items):
    return sorted((tuple(i.namespace), i.key, json.dumps(i.value, sort_keys=True)) for i in items)


def holds_field(item, f):
    return all(k in item.value for k in f)


class Ops:
    """The same random sequence against both stores, one call at a time (sync or async)."""

    def __init__(self, ours, ref, rng, run):
        self.ours, self.ref, self.rng, self.run = ours, ref, rng, run

    def step(self):
        rng, r = self.rng, self.rng.random()
        ns, key = rng.choice(NAMESPACES), rng.choice(KEYS)
        if r < 0.35:
            v = random_value(rng)
            self.call("put", ns, key, v)
        elif r < 0.45:
            self.call("delete", ns, key)
        elif r < 0.6:
            got, want = self.call("get", ns, key)
            assert (got is None) == (want is None), (ns, key, got, want)
            if got is not None:
                assert (got.namespace, got.key, got.value) == (want.namespace, want.key, want.value)
        elif r < 0.85:
            self.search(rng.choice(PREFIXES), random_filter(rng))
        else:
            prefix = rng.choice([None, ("users",), ("docs", "*"), ("*", "ana")])
            suffix = rng.choice([None, ("notes",), ("*",)])
            depth = rng.choice([None, 1, 2])
            kw = {"prefix": prefix, "suffix": suffix, "max_depth": depth, "limit": 100}
            got = self.run(self.ours, "list_namespaces", **kw)
            want = live(self.run(self.ref, "search", (), limit=100000)).list_namespaces(**kw)
            assert got == want, (prefix, suffix, depth, got, want)

    def search(self, prefix, f):
        try:
            want = self.run(self.ref, "search", prefix, filter=f, limit=1000)
        except (TypeError, ValueError):
            # The reference raised on a field some item lacks: compare on those that hold it.
            everything = self.run(self.ref, "search", prefix, limit=1000)
            want = [i for i in everything if holds_field(i, f) and _passes(i, f)]
        got = self.run(self.ours, "search", prefix, filter=f, limit=1000)
        assert shape(got) == shape(want), (prefix, f, shape(got), shape(want))
        # A page is a slice of the whole answer, in the store's order (newest first).
        page = self.run(self.ours, "search", prefix, filter=f, limit=2, offset=1)
        assert [(i.namespace, i.key) for i in page] == [(i.namespace, i.key) for i in got[1:3]]
        assert all(a.updated_at >= b.updated_at for a, b in zip(got, got[1:]))
        # A query finds exactly the items holding the word, best first.
        word = self.rng.choice(WORDS)
        hits = self.run(self.ours, "search", prefix, query=word, filter=f, limit=1000)
        expected = [i for i in got if i.value["s"] == word or word in i.value["tags"]]
        assert shape(hits) == shape(expected), (word, shape(hits), shape(expected))
        assert all(h.score is not None and h.score > 0 for h in hits)
        assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))

    def call(self, name, *args, **kwargs):
        ours = self.run(self.ours, name, *args, **kwargs)
        ref = self.run(self.ref, name, *args, **kwargs)
        return ours, ref


def live(items):
    """A reference store holding `items` only: InMemoryStore keeps listing a namespace whose
    items were all deleted (or that was only read), where agentmem, like LangGraph's Postgres
    store, lists the namespaces that hold items."""
    probe = InMemoryStore()
    for i in items:
        probe.put(i.namespace, i.key, i.value)
    return probe


def _passes(item, f):
    """The reference's answer for one item that holds the filtered fields."""
    probe = InMemoryStore()
    probe.put(item.namespace, item.key, item.value)
    return bool(probe.search(item.namespace, filter=f))


def sync_run(store, name, *args, **kwargs):
    return getattr(store, name)(*args, **kwargs)


def async_runner(loop):
    def run(store, name, *args, **kwargs):
        return loop.run_until_complete(getattr(store, "a" + name)(*args, **kwargs))
    return run


def embed(texts):
    """A deterministic embedder: hashed words, 32 dimensions."""
    out = []
    for t in texts:
        v = [0.0] * 32
        for w in t.lower().split():
            v[sum(map(ord, w.strip('",{}[]:'))) % 32] += 1.0
        out.append(v)
    return out


def vector_search(make_store, run):
    """With an index, a query is embedded and the items ranked by cosine similarity, as the
    reference store ranks them with the same embedder."""
    index = {"dims": 32, "embed": embed, "fields": ["text"]}
    ours, ref = make_store(index), InMemoryStore(index=index)
    texts = ["rotate the refresh token", "session cookie signed", "invoice as pdf", "redis client"]
    for i, t in enumerate(texts):
        for s in (ours, ref):
            run(s, "put", ("docs",), f"d{i}", {"text": t})
    run(ours, "put", ("docs",), "plain", {"text": "not embedded"}, index=False)
    for query in ["signed cookie", "redis", "refresh token rotation"]:
        got = run(ours, "search", ("docs",), query=query, limit=4)
        want = run(ref, "search", ("docs",), query=query, limit=4)
        assert got[0].key == want[0].key, (query, [g.key for g in got], [w.key for w in want])
        for g in got:
            w = next(x for x in want if x.key == g.key)
            assert math.isclose(g.score, w.score, abs_tol=1e-5), (query, g.key, g.score, w.score)
    tail = run(ours, "search", ("docs",), query="redis", limit=10)
    assert tail[-1].key == "plain" and tail[-1].score is None


def one_run(name, make_store, run, seed):
    rng = random.Random(seed)
    ops = Ops(make_store(None), InMemoryStore(), rng, run)
    for _ in range(STEPS):
        ops.step()
    vector_search(make_store, run)
    # A time to live: gone once it expired, unless a read started it again.
    store = make_store(None)
    run(store, "put", ("cache",), "k", {"v": 1}, ttl=0.0001)
    import time
    time.sleep(0.05)
    assert run(store, "get", ("cache",), "k") is None
    print(f"langgraph store ({name}): {STEPS} random operations agree with InMemoryStore")


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else random.randrange(1 << 30)
    print(f"seed {seed}")
    n = [0]

    def resource():
        n[0] += 1
        return f"langgraph-test-{os.getpid()}-{n[0]}"

    conn = sqlite3.connect(":memory:")
    sqlite_agentmem.load(conn)
    conn.execute("SELECT mem_init()")
    sqlite_store = lambda index: AgentmemStore(conn, resource_id=resource(), index=index)
    one_run("sqlite, sync", sqlite_store, sync_run, seed)
    loop = asyncio.new_event_loop()
    one_run("sqlite, async", sqlite_store, async_runner(loop), seed + 1)

    dsn = os.environ.get("AGENTMEM_PG")
    if dsn:
        import psycopg

        made = []
        with psycopg.connect(dsn, autocommit=True) as pg:
            pg.execute("CREATE EXTENSION IF NOT EXISTS agentmem")

            def pg_store(index):
                made.append(resource())
                return AgentmemStore(pg, resource_id=made[-1], index=index)

            one_run("postgres, sync", pg_store, sync_run, seed + 2)
            apg = loop.run_until_complete(psycopg.AsyncConnection.connect(dsn))

            def apg_store(index):
                made.append(resource())
                return AgentmemStore(apg, resource_id=made[-1], index=index)

            one_run("postgres, async", apg_store, async_runner(loop), seed + 3)
            loop.run_until_complete(apg.close())
            for r in made:
                pg.execute("SELECT mem_forget(%s)", (r,))
    loop.close()


if __name__ == "__main__":
    main()
