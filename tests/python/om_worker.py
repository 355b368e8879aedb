"""A worker of the observational-memory chaos test: loops over lease → observe/buffer/activate/
reflect → release against one SQLite file, with a fake deterministic observer. The test kills
workers with SIGKILL at random points. Usage: om_worker.py DB EXT LOOKUP_KEY SEED [--drain]."""
import json
import random
import sqlite3
import sys
import time

db_path, ext, key, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
drain = "--drain" in sys.argv
rng = random.Random(seed)
owner = f"worker-{seed}"

conn = sqlite3.connect(db_path, timeout=60, isolation_level=None)
conn.enable_load_extension(True)
conn.load_extension(ext)
conn.execute("PRAGMA busy_timeout = 60000")


def one(sql, *args):
    return conn.execute(sql, args).fetchone()[0]


def observe_answer(ids):
    # One line per message: the test counts them to prove exactly-once observation.
    return "<observations>\n" + "\n".join(f"* obs {i}" for i in ids) + "\n</observations><current-task>chaos</current-task>"


def step(op):
    inp = json.loads(one("SELECT om_observer_input(?, ?)", key, json.dumps({"max_tokens": rng.randint(5, 60)})))
    ids = inp["messageIds"]
    choice = rng.random()
    if ids and choice < 0.45:
        return one("SELECT om_buffer_chunk(?, ?, ?, ?, ?)", key, owner, op, observe_answer(ids), json.dumps(ids))
    if ids and choice < 0.8:
        return one("SELECT om_apply_observation(?, ?, ?, ?, ?)", key, owner, op, observe_answer(ids), json.dumps(ids))
    if choice < 0.9:
        return one("SELECT om_activate(?, ?, ?)", key, owner, op)
    status = json.loads(one("SELECT om_status(substr(?, 8))", key))
    if status["pendingMessages"] == 0:
        obs = one("SELECT active_observations FROM mem_om_records WHERE lookup_key = ? AND is_active = 1", key)
        # The fake reflector keeps every line, so nothing observed is lost. A message written
        # since the status call makes the database refuse the reflection: that is the rule.
        try:
            return one("SELECT om_apply_reflection(?, ?, ?, ?)", key, owner, op, f"<observations>\n{obs}\n</observations>")
        except sqlite3.OperationalError as e:
            if "reflection needs every message observed first" not in str(e):
                raise
    return 0


deadline = time.time() + 120
while time.time() < deadline:
    op = one("SELECT om_acquire_lease(?, ?, ?)", key, owner, 2000)
    if op is None:
        time.sleep(0.02 + rng.random() * 0.06)
        continue
    for _ in range(rng.randint(1, 6)):
        if step(op) is None:
            break  # lease lost: another owner took over
        time.sleep(rng.random() * 0.01)
    if drain:
        # Finish everything: activate, then observe until nothing is pending.
        while True:
            one("SELECT om_activate(?, ?, ?)", key, owner, op)
            inp = json.loads(one("SELECT om_observer_input(?)", key))
            if not inp["messageIds"]:
                break
            one("SELECT om_apply_observation(?, ?, ?, ?, ?)", key, owner, op, observe_answer(inp["messageIds"]), json.dumps(inp["messageIds"]))
        one("SELECT om_release_lease(?, ?, ?)", key, owner, op)
        break
    one("SELECT om_release_lease(?, ?, ?)", key, owner, op)
