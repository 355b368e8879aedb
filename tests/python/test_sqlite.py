"""agentmem0 from Python's standard sqlite3 module, as an application would use it.

Needs a Python whose sqlite3 can load extensions (Debian's /usr/bin/python3 can; pyenv and
macOS system builds often cannot: see the README).
"""
import os
import sqlite3
import tempfile
import unittest

EXT = os.environ.get("AGENTMEM_SQLITE_EXT", os.path.join(os.path.dirname(__file__), "..", "..", "dist", "agentmem0"))


def connect(path=":memory:"):
    conn = sqlite3.connect(path)
    conn.enable_load_extension(True)
    conn.load_extension(EXT)
    conn.enable_load_extension(False)
    conn.execute("SELECT mem_init()")
    return conn


class AgentmemFromPython(unittest.TestCase):
    def test_session(self):
        conn = connect()
        (thread,) = conn.execute("SELECT mem_thread_create('py-user', 'from python')").fetchone()
        conn.execute("SELECT mem_message_add(?, 'user', ?)", (thread, "hello world"))
        conn.execute("INSERT INTO mem_messages (thread_id, role, raw_content) VALUES (?, 'assistant', ?)", (thread, "hi there"))
        rows = conn.execute("SELECT message_index, role, content, reason FROM mem_recall(?)", (thread,)).fetchall()
        self.assertEqual(rows, [(0, "user", "hello world", "recent"), (1, "assistant", "hi there", "recent")])

    def test_errors_are_exceptions(self):
        conn = connect()
        with self.assertRaises(sqlite3.OperationalError) as cm:
            conn.execute("SELECT mem_message_add('nope', 'user', 'x')").fetchone()
        self.assertIn("thread not found: nope", str(cm.exception))
        with self.assertRaises(sqlite3.OperationalError) as cm:
            conn.execute("SELECT mem__selftest_panic()").fetchone()
        self.assertIn("deliberate panic", str(cm.exception))
        self.assertEqual(conn.execute("SELECT mem_tokens('hello world')").fetchone(), (2,))

    def test_rollback_leaves_nothing(self):
        with tempfile.TemporaryDirectory() as d:
            conn = connect(os.path.join(d, "m.db"))
            (thread,) = conn.execute("SELECT mem_thread_create('r')").fetchone()
            conn.commit()
            # Python's sqlite3 opens a transaction implicitly only before INSERT/UPDATE/DELETE,
            # not before a SELECT that calls a writing function: begin explicitly.
            conn.execute("BEGIN")
            conn.execute("SELECT mem_message_add(?, 'user', 'gone')", (thread,))
            conn.rollback()
            self.assertEqual(conn.execute("SELECT count(*), (SELECT message_count FROM mem_threads) FROM mem_messages").fetchone(), (0, 0))


if __name__ == "__main__":
    unittest.main()
