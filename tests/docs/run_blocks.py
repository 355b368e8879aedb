"""The README's ```python blocks, run as a reader pastes them.

Each block runs on its own, with Debian's /usr/bin/python3 (whose sqlite3 module can load
extensions; the README says so), in a fresh temporary directory that holds only a symlink
`dist` to the repository's dist/, so `conn.load_extension("dist/agentmem0")` works as written.
A block must exit 0; a traceback names the README's line.

The observational-memory loop (the block that defines `agent_step`) only defines a function
when pasted: it uses what a client has around it — `json` (parse), `dumps`, `db.one(sql,
*args)`, `db.Error` — and an LLM. So it is also driven: the same block, unchanged, after those
helpers, against a thread whose thresholds are lowered so that every action `om_status` can
answer comes due, with a fake LLM whose first reflection of each round is too long (the loop
must retry at the next compression level). The driver checks that each action came due and
was carried out, that the retry happened, that nothing is left pending or leased, and that
the context the loop assembles carries the observations.

Usage: /usr/bin/python3 tests/docs/run_blocks.py [--python PATH] [README.md]
Exit status 0 when every block passed.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# What a client keeps beside the loop: the README's `json(…)` parses, `dumps` writes.
PRELUDE = "from json import loads as json, dumps\n"

# Runs after the agent_step block, in the same namespace.
DRIVER = r'''
import json as _json
import sqlite3 as _sqlite3

_conn = _sqlite3.connect("memory.db", isolation_level=None)
_conn.enable_load_extension(True)
_conn.load_extension("dist/agentmem0")
_conn.enable_load_extension(False)
_conn.execute("SELECT mem_init()")


class _Db:
    """The `db` the README's loop takes: one value per statement, and the driver's errors."""
    Error = _sqlite3.Error

    def one(self, sql, *args):
        row = _conn.execute(sql, args).fetchone()
        return None if row is None else row[0]


_db = _Db()
_calls = {"observer": 0, "reflector": 0, "refused": 0, "chat": 0}
_last_context = []


def _llm(system=None, user=None, messages=None):
    if messages is not None:
        _calls["chat"] += 1
        _last_context[:] = messages
        return "Next step: wire LoginSchema into the form."
    if "reflections will be the ONLY" in system:
        _calls["reflector"] += 1
        if _calls["reflector"] % 2 == 1:
            # Too long: still over the reflection threshold, so the loop retries a level up.
            _calls["refused"] += 1
            lines = "\n".join(f"* 🟡 (12:{i:02}) User keeps working on the login form, step {i}" for i in range(60))
            return f"<observations>\n{lines}\n</observations>"
        return "<observations>\n* 🔴 (12:00) User builds the login form with Zod (LoginSchema)\n</observations>"
    _calls["observer"] += 1
    return (f"<observations>\n* 🔴 (12:00) User works on the login form ({_calls['observer']})\n"
            "</observations>\n<current-task>Login form</current-task>")


_db.one("SELECT mem_thread_create('project:webapp', 'Login feature', '{}', '{\"id\":\"thread-1\"}')")
_db.one("SELECT om_configure('thread:thread-1', ?)", _json.dumps({
    "observation_threshold": 60, "buffer_tokens": 25, "reflection_threshold": 80,
    "keep_recent_lines": 2}))

_seen = set()
_n = 0


def _step():
    status = _json.loads(_db.one("SELECT om_status('thread-1')"))
    _seen.add(status["action"])
    agent_step(_db, _llm, "thread-1", "worker-1")


# A burst first (pending past block_after × threshold with nothing buffered: `block`), then a
# turn at a time (buffer, activate, observe, and the reflections), then until nothing is due.
for burst in [6] + [1] * 40:
    for _ in range(burst):
        _db.one("SELECT mem_message_add('thread-1', ?, ?)", "user" if _n % 2 == 0 else "assistant",
                f"turn {_n}: the login form validates with Zod and LoginSchema")
        _n += 1
    _step()
for _ in range(20):
    if _json.loads(_db.one("SELECT om_status('thread-1')"))["action"] == "none":
        break
    _step()

_status = _json.loads(_db.one("SELECT om_status('thread-1')"))
_want = {"none", "block", "buffer", "activate", "observe", "buffer_reflection",
         "activate_reflection", "reflect"}
assert _want <= _seen, f"never due: {sorted(_want - _seen)}"
assert _status["action"] == "none" and _status["pendingMessages"] == 0, _status
assert _status["lease"] is None, _status
assert _status["generation"] >= 1, _status
assert _calls["refused"] >= 1 and _calls["reflector"] > _calls["refused"], _calls
_system = [m for m in _last_context if m.get("role") == "system"]
assert _system and "login form" in _system[0]["content"], _last_context
print(f"agent_step: actions {sorted(_seen)}, calls {_calls}, generation {_status['generation']}")
'''


def blocks(path):
    """(first line, code) of each ```python block, the code padded to its line in the file."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    out = []
    for m in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
        line = text.count("\n", 0, m.start(1)) + 1
        out.append((line, "\n" * (line - 1) + m.group(1)))
    return out


def run(python, code, name):
    """Runs `code` in a fresh directory beside a `dist` symlink; returns the failure, if any."""
    work = tempfile.mkdtemp(prefix="agentmem-readme-")
    try:
        os.symlink(os.path.join(ROOT, "dist"), os.path.join(work, "dist"))
        proc = subprocess.run([python, "-c", code], cwd=work, capture_output=True, text=True,
                              timeout=300)
        if proc.returncode != 0:
            return f"{name}: exit {proc.returncode}\n{proc.stdout}{proc.stderr}"
        if proc.stdout.strip():
            print(f"  {proc.stdout.strip()}")
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    args = sys.argv[1:]
    python = "/usr/bin/python3"
    if args[:1] == ["--python"]:
        python, args = args[1], args[2:]
    path = args[0] if args else os.path.join(ROOT, "README.md")
    name = os.path.basename(path)
    found = blocks(path)
    assert found, f"no ```python block in {path}"
    failures = []
    for line, code in found:
        label = f"{name}:{line}"
        failure = run(python, code, label)
        if failure is None and "def agent_step" in code:
            # The prelude takes the place of one of the padding lines: line numbers still hold.
            failure = run(python, PRELUDE + code[1:] + DRIVER, f"{label} (driven)")
        print(f"{label}: {'ok' if failure is None else 'FAILED'}")
        if failure:
            failures.append(failure)
    for failure in failures:
        print(failure, file=sys.stderr)
    print(f"{len(found) - len(failures)} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
