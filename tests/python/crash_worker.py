"""A writer for the crash tests: loads the extension into a SQLite WAL database and writes
until it is killed (a failpoint parks it inside a flush, a merge or a blocked-state refresh,
where the test sends SIGKILL), or for a fixed number of steps when called with a count.

usage: crash_worker.py DB EXTENSION messages|tasks [STEPS]
"""
import sqlite3
import sys

db, ext, workload = sys.argv[1], sys.argv[2], sys.argv[3]
steps = int(sys.argv[4]) if len(sys.argv) > 4 else 10**9
c = sqlite3.connect(db, isolation_level=None, timeout=30)
c.enable_load_extension(True)
c.load_extension(ext)
c.execute("PRAGMA journal_mode=WAL")
c.execute("SELECT mem_init()")

if workload == "messages":
    row = c.execute("SELECT id FROM mem_threads ORDER BY id LIMIT 1").fetchone()
    t = row[0] if row else c.execute("SELECT mem_thread_create('crash')").fetchone()[0]
    for i in range(steps):
        c.execute("SELECT mem_message_add(?, 'user', ?)", (t, "message %d about login, caching and LoginSchema" % i))
else:
    # A root blocking 40 tasks, each the parent of 5 children: closing and reopening the root
    # flips 240 tasks through a two-level refresh.
    if c.execute("SELECT count(*) FROM mem_tasks").fetchone()[0] == 0:
        c.execute("BEGIN")
        c.execute("SELECT task_create('root', '{\"id\":\"root\"}')")
        for i in range(40):
            c.execute("SELECT task_create('mid', json_object('id', 'm' || ?))", (i,))
            c.execute("SELECT task_dep_add('m' || ?, 'root')", (i,))
            for j in range(5):
                c.execute("SELECT task_create('leaf', json_object('id', 'l' || ? || '_' || ?))", (i, j))
                c.execute("SELECT task_dep_add('l' || ? || '_' || ?, 'm' || ?, 'parent-child')", (i, j, i))
        c.execute("COMMIT")
    for i in range(steps):
        c.execute("UPDATE mem_tasks SET status = 'closed', close_reason = 'completed' WHERE id = 'root'")
        c.execute("UPDATE mem_tasks SET status = 'open' WHERE id = 'root'")
print("done", flush=True)
