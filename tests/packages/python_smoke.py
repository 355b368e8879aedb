"""The installed wheel, used as its README and docs/install.md say: run in a fresh venv of
Debian's python3, from a directory outside the repository, so only the installed package can
be imported."""

import os
import re
import sqlite3
import sys
import tempfile

import sqlite_agentmem

version, docs = sys.argv[1], sys.argv[2:]
assert sqlite_agentmem.__version__ == version, sqlite_agentmem.__version__
path = sqlite_agentmem.loadable_path()
assert "site-packages" in path and os.path.exists(path + ".so"), path
assert os.path.exists(os.path.join(os.path.dirname(path), "py.typed"))

# The examples of the package README and the install guide, as pasted, each in an empty
# directory.
for doc in docs:
    with open(doc, encoding="utf-8") as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
    assert blocks, f"no python block in {doc}"
    for block in blocks:
        os.chdir(tempfile.mkdtemp())
        exec(compile(block, doc, "exec"), {})

# A session: the function surface answers and loading is switched off afterwards.
conn = sqlite3.connect(":memory:")
sqlite_agentmem.load(conn)
assert conn.execute("SELECT mem_init()").fetchone()[0] > 0
assert conn.execute("SELECT mem_version()").fetchone()[0] == version
t = conn.execute("SELECT mem_thread_create('r', 'packaging')").fetchone()[0]
conn.execute("SELECT mem_message_add(?, 'user', 'the wheel loads agentmem')", (t,))
hits = conn.execute("SELECT message_id FROM mem_search('wheel')").fetchall()
assert len(hits) == 1, hits
task = conn.execute("SELECT task_create('ship the wheel')").fetchone()[0]
assert conn.execute("SELECT count(*) FROM task_ready()").fetchone()[0] == 1, task
try:
    conn.execute("SELECT load_extension('x')")
    raise AssertionError("extension loading was left on")
except sqlite3.OperationalError as e:
    assert "not authorized" in str(e), e

# A Python whose sqlite3 cannot load extensions gets the fix named.
class NoLoading:
    def execute(self, sql):
        pass

try:
    sqlite_agentmem.load(NoLoading())
    raise AssertionError("loading into a connection without extension support succeeded")
except sqlite_agentmem.NoExtensionLoading as e:
    for fix in ["python3", "apsw", "pysqlite3-binary"]:
        assert fix in str(e), e
print("python package: ok")
