//! The memory observer's cost: per event (`mem_observe`, one call per event in transactions
//! of 100, and the batch form of 100 events per call) against the peer one would write
//! instead — an `INSERT` of the event's JSON into a plain table, in the same transactions —
//! and `mem_session_finalize` of a 1,000-event session (the design's budget: 100 ms).
//! Targets: ≤ 20 µs per event on SQLite, ≤ 100 µs on Postgres.

use crate::tasks_bench::{Db, Lite, Pg};
use std::path::Path;
use std::time::{Duration, Instant};

/// A coding session's events, deterministic from `seed`: reads, edits, searches, test runs
/// and their results, reasoning (now and then a correction), steps, a rare web fetch.
fn events(n: usize, seed: u64) -> Vec<String> {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = move |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    let mut step = 1;
    let file = |i: u64| format!("src/mod{}/file{}.ts", i % 12, i % 150);
    (0..n)
        .map(|_| {
            let r = next(100);
            let e = match r {
                0..=34 => format!(
                    r#"{{"type":"tool_call","tool":"Read","args":{{"file_path":"{}"}},"step":{step}}}"#,
                    file(next(150))
                ),
                35..=49 => format!(
                    r#"{{"type":"tool_call","tool":"Edit","args":{{"file_path":"{}","old_string":"a","new_string":"b"}},"step":{step}}}"#,
                    file(next(150))
                ),
                50..=61 => format!(
                    r#"{{"type":"tool_call","tool":"Grep","args":{{"pattern":"handler{}","path":"src"}},"step":{step}}}"#,
                    next(20)
                ),
                62..=64 => format!(r#"{{"type":"tool_call","tool":"Glob","args":{{"pattern":"src/mod{}/**"}},"step":{step}}}"#, next(12)),
                65..=72 => format!(r#"{{"type":"tool_call","tool":"Bash","args":{{"command":"npm test mod{}"}},"step":{step}}}"#, next(12)),
                73..=79 => {
                    if next(3) == 0 {
                        format!(
                            r#"{{"type":"tool_result","tool":"Bash","ok":false,"error":"Error: expected {} to equal {} at src/mod{}/file{}.ts:{}","step":{step}}}"#,
                            next(100),
                            next(100),
                            next(12),
                            next(150),
                            next(400)
                        )
                    } else {
                        format!(r#"{{"type":"tool_result","tool":"Bash","ok":true,"output_size":{},"step":{step}}}"#, next(5000))
                    }
                }
                80..=89 => {
                    let text = if next(5) == 0 {
                        "Wait, the handler is not registered here. It lives in the router."
                    } else {
                        "Reading the module to see where the handler is registered, then the tests."
                    };
                    format!(r#"{{"type":"reasoning","text":"{text}","step":{step}}}"#)
                }
                90 => format!(r#"{{"type":"tool_call","tool":"WebFetch","args":{{"url":"https://example.com/doc{}"}},"step":{step}}}"#, next(5)),
                _ => {
                    let e = format!(r#"{{"type":"step_complete","step":{step},"tokens":{}}}"#, 2000 + next(6000));
                    step += 1;
                    e
                }
            };
            e
        })
        .collect()
}

/// Microseconds per event of `sql` (`?1` the session, `?2` an event or a batch), in
/// transactions of 100 events.
fn per_event(db: &mut dyn Db, sql: &str, session: &str, events: &[String], batch: bool) -> f64 {
    let t = Instant::now();
    for chunk in events.chunks(100) {
        db.exec("BEGIN");
        if batch {
            db.one_text(sql, session, &format!("[{}]", chunk.join(",")));
        } else {
            for e in chunk {
                db.one_text(sql, session, e);
            }
        }
        db.exec("COMMIT");
    }
    t.elapsed().as_secs_f64() * 1e6 / events.len() as f64
}

/// Starts session `id`, its scratchpad unbounded for the measurement.
fn start(db: &mut dyn Db, id: &str) {
    db.exec(&format!(
        "SELECT mem_session_start('bench', '{{\"id\":\"{id}\",\"max_scratch_rows\":1000000}}')"
    ));
}

/// The figures of one backend.
struct Figures {
    backend: &'static str,
    target_us: f64,
    ours: f64,
    peer: f64,
    batch: f64,
    finalize_p50: Duration,
    finalize_max: Duration,
    sessions: usize,
}

fn measure(db: &mut dyn Db, backend: &'static str, target_us: f64, quick: bool) -> Figures {
    let n = if quick { 2_000 } else { 10_000 };
    let stream = events(n, 7);
    db.exec("CREATE TABLE bench_observer_events (session_id TEXT NOT NULL, event TEXT NOT NULL)");
    // Warm both paths (statement caches, the session row).
    start(db, "warm");
    per_event(
        db,
        "SELECT mem_observe(?1, ?2)",
        "warm",
        &stream[..200],
        false,
    );
    per_event(
        db,
        "INSERT INTO bench_observer_events VALUES (?1, ?2)",
        "warm",
        &stream[..200],
        false,
    );
    start(db, "one");
    start(db, "many");
    let peer = per_event(
        db,
        "INSERT INTO bench_observer_events VALUES (?1, ?2)",
        "peer",
        &stream,
        false,
    );
    let ours = per_event(db, "SELECT mem_observe(?1, ?2)", "one", &stream, false);
    let batch = per_event(db, "SELECT mem_observe(?1, ?2)", "many", &stream, true);
    // Finalize: sessions of 1,000 events each, after the three above (whose finalize is the
    // first three timings: the cross-session counts read every earlier session).
    let sessions = if quick { 5 } else { 12 };
    let mut times = Vec::new();
    for s in 0..sessions {
        let id = format!("fin{s}");
        start(db, &id);
        per_event(
            db,
            "SELECT mem_observe(?1, ?2)",
            &id,
            &events(1000, 100 + s as u64),
            true,
        );
        let t = Instant::now();
        db.one_text("SELECT mem_session_finalize(?1, ?2)", &id, "success");
        times.push(t.elapsed());
    }
    times.sort();
    db.exec("DROP TABLE bench_observer_events");
    Figures {
        backend,
        target_us,
        ours,
        peer,
        batch,
        finalize_p50: times[times.len() / 2],
        finalize_max: *times.last().unwrap(),
        sessions,
    }
}

/// Runs the benchmark; returns a markdown table.
pub fn run(sqlite_ext: &Path, pg_url: Option<&str>, quick: bool) -> String {
    let dir = std::env::temp_dir().join(format!("agentmem-observer-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("observer.db");
    let _ = std::fs::remove_file(&path);
    let conn = rusqlite::Connection::open(&path).unwrap();
    // SAFETY: loading the extension this repository built.
    unsafe {
        conn.load_extension_enable().unwrap();
        conn.load_extension(sqlite_ext, None::<&str>).unwrap();
        conn.load_extension_disable().unwrap();
    }
    conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
        .unwrap();
    conn.execute_batch("PRAGMA synchronous=NORMAL").unwrap();
    conn.query_row("SELECT mem_init()", [], |_| Ok(())).unwrap();
    let mut rows = vec![measure(&mut Lite(conn), "SQLite", 20.0, quick)];
    let _ = std::fs::remove_dir_all(&dir);
    if let Some(url) = pg_url {
        let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
        c.batch_execute("DROP EXTENSION IF EXISTS agentmem CASCADE; CREATE EXTENSION agentmem;")
            .unwrap();
        rows.push(measure(&mut Pg(c), "Postgres", 100.0, quick));
    }
    let mut out = String::from(
        "### Memory observer: cost per event (transactions of 100) and per finalize (1,000-event sessions)\n\n\
         | backend | mem_observe µs/event | batch of 100, µs/event | INSERT of the event (peer) µs/event | ratio (ours/peer) | target µs/event | | finalize p50 ms | finalize max ms | sessions | target ms | |\n\
         |---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---|\n",
    );
    for f in rows {
        let fin = f.finalize_p50.as_secs_f64() * 1e3;
        out.push_str(&format!(
            "| {} | {:.1} | {:.1} | {:.1} | {:.2}× | ≤ {:.0} | {} | {:.1} | {:.1} | {} | ≤ 100 | {} |\n",
            f.backend,
            f.ours,
            f.batch,
            f.peer,
            f.ours / f.peer.max(1e-9),
            f.target_us,
            if f.ours <= f.target_us { "met" } else { "missed" },
            fin,
            f.finalize_max.as_secs_f64() * 1e3,
            f.sessions,
            if fin <= 100.0 { "met" } else { "missed" },
        ));
    }
    out
}
