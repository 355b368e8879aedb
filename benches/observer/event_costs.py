#!/usr/bin/env python3
"""The observer's cost per event by kind of event, one call per event and in batches of 100,
on the release library (`make sqlite-release`): where an event's time goes. Usage:
  python3 benches/observer/event_costs.py [path/to/libagentmem0]
The Python of the system (Debian's) has `enable_load_extension`."""
import sqlite3, time, json, os, random
import sys
so = sys.argv[1] if len(sys.argv) > 1 else 'target/release/libagentmem0'
def db():
    p = '/tmp/agentmem-event-costs.db'
    for f in [p,p+'-wal',p+'-shm']:
        if os.path.exists(f): os.remove(f)
    c=sqlite3.connect(p, isolation_level=None)
    c.enable_load_extension(True); c.load_extension(so)
    c.execute("PRAGMA journal_mode=WAL"); c.execute("PRAGMA synchronous=NORMAL")
    c.execute("SELECT mem_init()")
    return c
def run(name, evs, batch):
    c=db(); sid=c.execute("SELECT mem_session_start('r', '{\"max_scratch_rows\": 1000000}')").fetchone()[0]
    t=time.perf_counter()
    c.execute("BEGIN")
    for i in range(0,len(evs),batch):
        if i and i % 100 == 0: c.execute("COMMIT"); c.execute("BEGIN")
        chunk=evs[i:i+batch]
        c.execute("SELECT mem_observe(?, ?)", (sid, json.dumps(chunk) if batch>1 else json.dumps(chunk[0])))
    c.execute("COMMIT")
    dt=time.perf_counter()-t
    print(f"{name:40s} batch={batch:4d} {dt/len(evs)*1e6:7.1f} us/event")
N=2000
sc=[{"type":"step_complete","step":i,"tokens":100} for i in range(N)]
run("step_complete", sc, 1); run("step_complete", sc, 100)
rd=[{"type":"tool_call","tool":"Read","args":{"file_path":"src/a.ts"},"step":1} for i in range(N)]
run("read same file", rd, 1); run("read same file", rd, 100)
random.seed(1)
rd=[{"type":"tool_call","tool":"Read","args":{"file_path":"src/f%d.ts"%random.randrange(150)},"step":1} for i in range(N)]
run("read among 150", rd, 1); run("read among 150", rd, 100)
rd=[{"type":"tool_call","tool":"Read","args":{"file_path":"src/f%d.ts"%random.randrange(8)},"step":1} for i in range(N)]
run("read among 8", rd, 1); run("read among 8", rd, 100)
c=db()
t=time.perf_counter()
c.execute("BEGIN")
for i in range(N): c.execute("INSERT INTO mem_observer_events (resource_id, session_id, n, token, event) VALUES ('r','s',?, 7, ?)", (i, json.dumps(sc[i])))
c.execute("COMMIT")
print("plain INSERT into mem_observer_events", (time.perf_counter()-t)/N*1e6)
