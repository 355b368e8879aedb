"""The SQLAlchemy and Alembic recipes of docs/orm.md, run as pasted: every ```python block in
order, in one namespace, from an empty directory (the current one), with the installed wheel.
A `print(...)` in a block must print what its trailing comment says; then the database the
blocks left behind, and the page's claims about RETURNING and Alembic, are checked.

Usage (from an empty directory): python sqlalchemy_recipe.py docs/orm.md"""

import contextlib
import io
import os
import re
import sqlite3
import sys
import warnings

import sqlite_agentmem
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.orm import Session

doc = sys.argv[1]
assert not os.listdir("."), "run from an empty directory"
assert "site-packages" in sqlite_agentmem.loadable_path(), sqlite_agentmem.loadable_path()

with open(doc, encoding="utf-8") as f:
    text = f.read()
# Each block padded with the lines before it, so that a traceback names the page's line.
blocks = [
    "\n" * text.count("\n", 0, m.start(1)) + m.group(1)
    for m in re.finditer(r"```python\n(.*?)```", text, re.S)
]
assert blocks, f"no python block in {doc}"

# What each print(...) line promises, in order.
PRINT = re.compile(r"^\s*print\(.*\)\s+# (.*)$")
promised = [m.group(1) for b in blocks for m in map(PRINT.match, b.splitlines()) if m]
prints = sum(len(re.findall(r"^\s*print\(", b, re.M)) for b in blocks)
assert len(promised) == prints, "every print in the page states its output in a comment"

ns = {"__name__": "orm_recipe"}
out = io.StringIO()
with contextlib.redirect_stdout(out), warnings.catch_warnings():
    # Alembic reads every table of a database that holds none of the application's (checked
    # below, once it holds one).
    warnings.filterwarnings("ignore", "Skipped unsupported reflection of expression-based index")
    for block in blocks:
        exec(compile(block, doc, "exec"), ns)
printed = out.getvalue().splitlines()
assert printed == promised, f"the page says:\n{promised}\nthe blocks printed:\n{printed}"

conn = sqlite3.connect("memory.db")
sqlite_agentmem.load(conn)
thread_id = ns["thread_id"]

# The thread's messages: indexes 0..n-1 in the order of the list, exact token counts, the
# thread's resource, and nothing left of the rolled-back mem_message_add.
rows = conn.execute(
    "SELECT raw_content, message_index, token_count, resource_id FROM mem_messages"
    " WHERE thread_id = ? ORDER BY seq",
    (thread_id,),
).fetchall()
assert [r[0] for r in rows] == [
    "implement login with Zod",
    "Added LoginSchema in src/auth/login.ts",
    "npm test: 12 passed",
], rows
assert [r[1] for r in rows] == list(range(len(rows))), rows
for content, _, tokens, resource in rows:
    assert tokens > 0 and tokens == conn.execute("SELECT mem_tokens(?)", (content,)).fetchone()[0]
    assert resource == "project:webapp", resource

# The search found the message with the identifier, first.
schema_msg = conn.execute(
    "SELECT id FROM mem_messages WHERE raw_content LIKE '%LoginSchema%'"
).fetchone()[0]
assert ns["hits"][0].message_id == schema_msg, ns["hits"]

# The task graph the ORM and task_dep_add wrote.
assert conn.execute("SELECT title FROM task_ready()").fetchall() == [("Add LoginSchema",)]

# RETURNING reports the row before the AFTER triggers ran: the page's claim, on this SQLite.
conn.execute("BEGIN")
ret = conn.execute(
    "INSERT INTO mem_messages (thread_id, role, raw_content) VALUES (?, 'user', 'one two three')"
    " RETURNING id, created_at, resource_id, message_index, token_count",
    (thread_id,),
).fetchone()
assert ret[0] and ret[1] and ret[2:] == (None, None, None), ret
ret = conn.execute(
    "UPDATE mem_messages SET raw_content = 'one two three four five six' WHERE id = ?"
    " RETURNING token_count",
    (ret[0],),
).fetchone()
assert ret == (3,), ret
conn.execute("ROLLBACK")

# Without eager_defaults=False the flush keeps the NULLs of RETURNING: the page's reason for it.
class EagerMessage(ns["Base"]):
    __table__ = ns["MemMessage"].__table__

with Session(ns["engine"]) as session:
    m = EagerMessage(thread_id=thread_id, role="user", raw_content="eager")
    session.add(m)
    session.flush()
    assert m.message_index is None and m.token_count is None, (m.message_index, m.token_count)
    session.refresh(m)
    assert (m.message_index, m.token_count) == (3, 2), (m.message_index, m.token_count)
    session.rollback()

# An edit of raw_content through the ORM is recounted, and the flush expired the old count.
with Session(ns["engine"]) as session:
    first = session.get(ns["MemThread"], thread_id).messages[0]
    first.raw_content = "implement login with Zod and rotate the refresh tokens"
    session.flush()
    assert first.token_count == conn.execute(
        "SELECT mem_tokens(?)", (first.raw_content,)
    ).fetchone()[0], first.token_count
    session.rollback()

# Alembic: every table mem_init() created is named mem_…, so the hooks cover them all; without
# them the diff drops the derived tables (and the documented ones the models leave out).
tables = [r[0] for r in conn.execute(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
assert tables and all(t.startswith("mem_") for t in tables), tables
assert {t for t in tables if t.startswith("mem_idx_")} == {
    "mem_idx_meta", "mem_idx_segments", "mem_idx_pages", "mem_idx_delta", "mem_idx_layout"}, tables

def diff_tables(diff):
    flat = [d for entry in diff for d in (entry if isinstance(entry, list) else [entry])]
    names = set()
    for d in flat:
        if d[0] in ("add_table", "remove_table"):
            names.add((d[0], d[1].name))
        elif d[0] in ("add_index", "remove_index"):
            names.add((d[0], d[1].table.name))
        else:
            names.add((d[0], d[2]))
    return names

assert diff_tables(ns["diff"]) == {("add_table", "notes")}, ns["diff"]
with ns["engine"].connect() as c, warnings.catch_warnings():
    warnings.simplefilter("ignore")  # the expression indexes the hooks spare us
    unfiltered = diff_tables(compare_metadata(MigrationContext.configure(c), ns["Base"].metadata))
for t in ["mem_idx_meta", "mem_idx_segments", "mem_idx_pages", "mem_idx_delta", "mem_graph_nodes",
          "mem_graph_closure", "mem_schema_version"]:
    assert ("remove_table", t) in unfiltered, (t, sorted(unfiltered))
assert ("remove_table", "mem_threads") not in unfiltered  # mapped, so compared column by column
assert any(op.startswith("remove_") and t == "mem_threads" for op, t in unfiltered), unfiltered

# Once the application's table exists: nothing to do, and with include_name Alembic reads none
# of agentmem's tables (without it, SQLAlchemy warns about their expression indexes).
ns["Note"].__table__.create(ns["engine"])
for hooks, warned in [(("include_name", "include_object"), False), (("include_object",), True)]:
    with ns["engine"].connect() as c, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        migration = MigrationContext.configure(c, opts={h: ns[h] for h in hooks})
        assert compare_metadata(migration, ns["Base"].metadata) == [], hooks
    assert any("expression-based index" in str(w.message) for w in caught) == warned, (
        hooks, [str(w.message) for w in caught])

# Deleting a thread through the ORM: the database takes its messages (passive_deletes).
with Session(ns["engine"]) as session:
    thread = session.get(ns["MemThread"], thread_id)
    assert len(thread.messages) == 3
    session.delete(thread)
    session.commit()
assert conn.execute("SELECT count(*) FROM mem_messages WHERE thread_id = ?",
                    (thread_id,)).fetchone()[0] == 0
assert not conn.execute("SELECT * FROM mem_index_check()").fetchall()
print("sqlalchemy recipe: ok")
