//! Task memory benchmark: the incrementally maintained ready queue against the natural peer, a
//! recursive-CTE readiness query (what beads computes), on the same data in the same run.
//!
//! Data: 10k and 100k tasks in blocks of 100 — a chain of 10 (each blocked by the previous),
//! an epic with 9 children (the epic blocked in every other block, so its children are too),
//! 6 tasks blocked by the chain's end, 10 closed, the rest independent; priorities 0–4. About
//! 20% of the tasks are blocked. Plus one hub task with 1000 dependents.
//!
//! Measured: `task_ready(limit 10)` p50/p95 and the CTE's p50/p95 (same rows, checked), claim
//! and close throughput (1000 of each, one statement per call, autocommit), and closing the
//! hub. Targets: task_ready p50 ≤ 1 ms at 100k in SQLite, ≤ 3 ms in Postgres, ≥ 20× the CTE.
//!
//! Self-contained: `run` returns a markdown table. SQLite loads the given extension into a
//! file database in the temp directory. Postgres: **drops and recreates the agentmem extension
//! in the database at `pg_url`** (its tables are the extension's), like the conformance suite.

use std::path::Path;
use std::time::{Duration, Instant};

const NOW: i64 = 4_000_000_000_000;

/// The readiness query without maintained state: blocked tasks found by walking the graph on
/// every call (directly blocked, then down parent-child edges).
const NAIVE_READY: &str = "WITH RECURSIVE blocked(id) AS ( \
    SELECT d.task_id FROM mem_task_deps d JOIN mem_tasks b ON b.id = d.depends_on_id \
      WHERE d.type = 'blocks' AND b.status <> 'closed' \
    UNION \
    SELECT d.task_id FROM mem_task_deps d JOIN blocked ON d.depends_on_id = blocked.id \
      WHERE d.type = 'parent-child') \
  SELECT id FROM mem_tasks WHERE status = 'open' AND type <> 'epic' \
    AND (defer_until IS NULL OR defer_until <= 4000000000000) \
    AND id NOT IN (SELECT id FROM blocked) \
  ORDER BY priority, created_at, id LIMIT 10";

const READY: &str = "SELECT id FROM task_ready('{\"limit\":10,\"now\":4000000000000}')";

/// The generated structure, as SQL over a series `g` (shared by both dialects).
const PRIORITY: &str = "((g * 7 + g / 100) % 5)";

struct Figures {
    backend: &'static str,
    tasks: usize,
    ready: (Duration, Duration),
    naive: (Duration, Duration),
    claims_per_s: f64,
    closes_per_s: f64,
    hub_close: Duration,
    blocked_pct: f64,
    load: Duration,
}

fn pct(mut v: Vec<Duration>, p: f64) -> Duration {
    v.sort();
    if v.is_empty() {
        return Duration::ZERO;
    }
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i.min(v.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

/// One database the benchmark can drive.
pub(crate) trait Db {
    fn exec(&mut self, sql: &str);
    fn ids(&mut self, sql: &str) -> Vec<String>;
    fn one_text(&mut self, sql: &str, a: &str, b: &str);
    fn count(&mut self, sql: &str) -> i64;
}

pub(crate) struct Lite(pub(crate) rusqlite::Connection);

impl Db for Lite {
    fn exec(&mut self, sql: &str) {
        let mut st = self.0.prepare_cached(sql).unwrap();
        let mut rows = st.query([]).unwrap();
        while rows.next().unwrap().is_some() {}
    }
    fn ids(&mut self, sql: &str) -> Vec<String> {
        let mut st = self.0.prepare_cached(sql).unwrap();
        let v = st
            .query_map([], |r| r.get::<_, String>(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        v
    }
    fn one_text(&mut self, sql: &str, a: &str, b: &str) {
        let mut st = self.0.prepare_cached(sql).unwrap();
        let mut rows = st.query([a, b]).unwrap();
        while rows.next().unwrap().is_some() {}
    }
    fn count(&mut self, sql: &str) -> i64 {
        self.0.query_row(sql, [], |r| r.get(0)).unwrap()
    }
}

pub(crate) struct Pg(pub(crate) postgres::Client);

impl Db for Pg {
    fn exec(&mut self, sql: &str) {
        self.0.batch_execute(sql).unwrap();
    }
    fn ids(&mut self, sql: &str) -> Vec<String> {
        self.0
            .query(sql, &[])
            .unwrap()
            .iter()
            .map(|r| r.get::<_, String>(0))
            .collect()
    }
    fn one_text(&mut self, sql: &str, a: &str, b: &str) {
        let sql = sql.replace("?1", "$1").replace("?2", "$2");
        self.0.query(sql.as_str(), &[&a, &b]).unwrap();
    }
    fn count(&mut self, sql: &str) -> i64 {
        self.0.query_one(sql, &[]).unwrap().get(0)
    }
}

/// Builds the data set of `n` tasks (a multiple of 100) plus the hub.
fn load(db: &mut dyn Db, n: usize, series: &dyn Fn(usize) -> String, obj: &dyn Fn(&str) -> String) {
    let create = format!(
        "SELECT task_create('task ' || g || ' refresh tokens', {}) FROM {}",
        obj(&format!(
            "'id', 'b' || g, 'priority', {PRIORITY}, 'created_at', 1000 + g, \
             'type', CASE WHEN g % 100 = 10 THEN 'epic' ELSE 'task' END"
        )),
        series(n)
    );
    db.exec(&create);
    let deps = format!(
        "SELECT task_dep_add('b' || g, 'b' || (g - 1)) FROM {s} WHERE g % 100 BETWEEN 1 AND 9; \
         SELECT task_dep_add('b' || g, 'b' || (g - g % 100 + 10), 'parent-child') FROM {s} WHERE g % 100 BETWEEN 11 AND 19; \
         SELECT task_dep_add('b' || g, 'b' || (g - 10)) FROM {s} WHERE g % 100 = 10 AND (g / 100) % 2 = 0; \
         SELECT task_dep_add('b' || g, 'b' || (g - g % 100 + 9)) FROM {s} WHERE g % 100 BETWEEN 21 AND 26; \
         SELECT task_close('b' || g, 'completed', 'done') FROM {s} WHERE g % 100 >= 90;",
        s = series(n)
    );
    for stmt in deps.split("; ") {
        db.exec(stmt.trim_end_matches(';'));
    }
    db.exec(&format!(
        "SELECT task_create('hub', {})",
        obj("'id', 'hub', 'created_at', 500")
    ));
    db.exec(&format!(
        "SELECT task_create('hub dependent', {}) FROM {}",
        obj("'id', 'h' || g, 'priority', 4, 'created_at', 600"),
        series(1000)
    ));
    db.exec(&format!(
        "SELECT task_dep_add('h' || g, 'hub') FROM {}",
        series(1000)
    ));
}

fn measure(
    db: &mut dyn Db,
    backend: &'static str,
    n: usize,
    quick: bool,
    load_time: Duration,
) -> Figures {
    let blocked = db.count("SELECT count(*) FROM mem_tasks WHERE is_blocked = 1");
    let total = db.count("SELECT count(*) FROM mem_tasks");
    // Same answer, then timings.
    let a = db.ids(READY);
    let b = db.ids(NAIVE_READY);
    assert_eq!(a, b, "task_ready and the recursive CTE disagree");
    let reps = if quick { 50 } else { 300 };
    for _ in 0..10 {
        db.ids(READY);
    }
    let ready: Vec<Duration> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            db.ids(READY);
            t.elapsed()
        })
        .collect();
    let naive_reps = if quick {
        5
    } else if n > 50_000 {
        10
    } else {
        30
    };
    let naive: Vec<Duration> = (0..naive_reps)
        .map(|_| {
            let t = Instant::now();
            db.ids(NAIVE_READY);
            t.elapsed()
        })
        .collect();
    let k = if quick { 200 } else { 1000 };
    let to_claim = db.ids(&format!(
        "SELECT id FROM task_ready('{{\"limit\":{k},\"now\":{NOW}}}')"
    ));
    let t = Instant::now();
    for id in &to_claim {
        db.one_text("SELECT task_claim(?1, ?2)", id, "bench");
    }
    let claims_per_s = to_claim.len() as f64 / t.elapsed().as_secs_f64();
    let t = Instant::now();
    for id in &to_claim {
        db.one_text(
            "SELECT task_close(?1, 'completed', ?2)",
            id,
            "benchmark close",
        );
    }
    let closes_per_s = to_claim.len() as f64 / t.elapsed().as_secs_f64();
    let t = Instant::now();
    db.one_text("SELECT task_close(?1, 'completed', ?2)", "hub", "hub done");
    let hub_close = t.elapsed();
    let a = db.ids(READY);
    let b = db.ids(NAIVE_READY);
    assert_eq!(
        a, b,
        "task_ready and the recursive CTE disagree after the closes"
    );
    Figures {
        backend,
        tasks: n,
        ready: (pct(ready.clone(), 0.5), pct(ready, 0.95)),
        naive: (pct(naive.clone(), 0.5), pct(naive, 0.95)),
        claims_per_s,
        closes_per_s,
        hub_close,
        blocked_pct: 100.0 * blocked as f64 / total.max(1) as f64,
        load: load_time,
    }
}

fn sqlite_run(ext: &Path, n: usize, quick: bool) -> Figures {
    let dir = std::env::temp_dir().join(format!("agentmem-tasks-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("tasks{n}.db"));
    let _ = std::fs::remove_file(&path);
    let conn = rusqlite::Connection::open(&path).unwrap();
    // SAFETY: loading the extension this repository built.
    unsafe {
        conn.load_extension_enable().unwrap();
        conn.load_extension(ext, None::<&str>).unwrap();
        conn.load_extension_disable().unwrap();
    }
    conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
        .unwrap();
    conn.execute_batch("PRAGMA synchronous=NORMAL").unwrap();
    conn.query_row("SELECT mem_init()", [], |_| Ok(())).unwrap();
    let mut db = Lite(conn);
    let series = |n: usize| {
        format!("(WITH RECURSIVE s(g) AS (SELECT 0 UNION ALL SELECT g + 1 FROM s WHERE g < {}) SELECT g FROM s)", n - 1)
    };
    let t = Instant::now();
    db.exec("BEGIN");
    load(&mut db, n, &series, &|a: &str| format!("json_object({a})"));
    db.exec("COMMIT");
    let load_time = t.elapsed();
    let f = measure(&mut db, "SQLite", n, quick, load_time);
    drop(db);
    std::fs::remove_dir_all(&dir).ok();
    f
}

fn pg_run(url: &str, n: usize, quick: bool) -> Figures {
    let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
    c.batch_execute("DROP EXTENSION IF EXISTS agentmem CASCADE; CREATE EXTENSION agentmem;")
        .unwrap();
    let mut db = Pg(c);
    let series = |n: usize| format!("generate_series(0, {}) AS s(g)", n - 1);
    let t = Instant::now();
    db.exec("BEGIN");
    // json_build_object gives json; the functions take its text.
    load(&mut db, n, &series, &|a: &str| {
        format!("json_build_object({a})::text")
    });
    db.exec("COMMIT");
    db.exec("ANALYZE");
    let load_time = t.elapsed();
    measure(&mut db, "Postgres", n, quick, load_time)
}

/// Runs the task benchmarks and returns a markdown table.
pub fn run(sqlite_ext: &Path, pg_url: Option<&str>, quick: bool) -> String {
    let sizes: &[usize] = if quick { &[10_000] } else { &[10_000, 100_000] };
    let mut rows = Vec::new();
    for &n in sizes {
        rows.push(sqlite_run(sqlite_ext, n, quick));
        if let Some(url) = pg_url {
            rows.push(pg_run(url, n, quick));
        }
    }
    let mut out = String::from(
        "### Task memory: ready queue vs recursive CTE\n\n\
         | backend | tasks | blocked | task_ready(10) p50 ms | p95 ms | recursive CTE p50 ms | p95 ms | ratio (CTE/ready, p50) | claims/s | closes/s | close with 1000 dependents ms | load s |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for f in &rows {
        let ratio = f.naive.0.as_secs_f64() / f.ready.0.as_secs_f64().max(1e-9);
        out.push_str(&format!(
            "| {} | {} | {:.0}% | {} | {} | {} | {} | {:.0}× | {:.0} | {:.0} | {} | {:.1} |\n",
            f.backend,
            f.tasks,
            f.blocked_pct,
            ms(f.ready.0),
            ms(f.ready.1),
            ms(f.naive.0),
            ms(f.naive.1),
            ratio,
            f.claims_per_s,
            f.closes_per_s,
            ms(f.hub_close),
            f.load.as_secs_f64(),
        ));
    }
    out.push_str(
        "\nTargets: task_ready p50 ≤ 1 ms at 100k tasks (SQLite), ≤ 3 ms (Postgres), ≥ 20× the recursive CTE. \
         Times include the client round trip for both queries.\n",
    );
    out
}
