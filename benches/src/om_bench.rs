//! One agent step's observational-memory bookkeeping: `om_status` + `mem_context`, on a thread
//! holding 30k pending tokens and 40k tokens of observations, in thread scope and in a
//! resource of 20 threads (targets: p50 ≤ 2 ms in SQLite, ≤ 10 ms in Postgres).

use std::path::Path;
use std::time::Instant;

/// ~100-token message text, varied by `i`.
fn message(i: usize) -> String {
    format!(
        "Step {i}: edited src/auth/session_{m}.ts to refresh tokens before expiry; ran npm test \
         (auth.spec.ts: {p} passed, {f} failed). The LoginSchema now validates email and password \
         length >= 8; next: wire refreshToken() into useSession() and handle 401 from /api/auth/login.",
        m = i % 17,
        p = 10 + i % 7,
        f = i % 3
    )
}

/// An observation answer of about `tokens` tokens.
fn observations(tokens: usize) -> String {
    let mut s = String::from("<observations>\nDate: Dec 4, 2025\n");
    let mut i = 0;
    while s.len() < tokens * 4 {
        s.push_str(&format!(
            "* 🟡 ({:02}:{:02}) Assistant updated src/feature_{i}/index.ts: added handler_{i}() and tests; user prefers Vitest\n",
            9 + i / 60 % 10,
            i % 60
        ));
        i += 1;
    }
    s.push_str("</observations><current-task>Auth refresh flow</current-task>");
    s
}

fn percentile(samples: &mut [f64], p: f64) -> f64 {
    samples.sort_by(|a, b| a.partial_cmp(b).unwrap());
    samples[((samples.len() - 1) as f64 * p).round() as usize]
}

/// Runs `step` `n` times after a warm-up; returns (p50, p95) in ms.
fn measure(n: usize, mut step: impl FnMut()) -> (f64, f64) {
    for _ in 0..5 {
        step();
    }
    let mut samples: Vec<f64> = (0..n)
        .map(|_| {
            let t = Instant::now();
            step();
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    (
        percentile(&mut samples, 0.5),
        percentile(&mut samples, 0.95),
    )
}

/// SQL of the set-up, shared by both backends (`$1`-style parameters are bound per backend).
trait Db {
    fn one(&mut self, sql: &str, params: &[&str]) -> Option<String>;
}

struct Lite(rusqlite::Connection);
impl Db for Lite {
    fn one(&mut self, sql: &str, params: &[&str]) -> Option<String> {
        let sql = sql.replace('$', "?");
        self.0
            .query_row(&sql, rusqlite::params_from_iter(params.iter()), |r| {
                Ok(match r.get_ref(0)? {
                    rusqlite::types::ValueRef::Null => None,
                    rusqlite::types::ValueRef::Integer(i) => Some(i.to_string()),
                    v => {
                        Some(String::from_utf8_lossy(v.as_bytes().unwrap_or_default()).into_owned())
                    }
                })
            })
            .unwrap()
    }
}

struct Pg(postgres::Client);
impl Db for Pg {
    fn one(&mut self, sql: &str, params: &[&str]) -> Option<String> {
        let p: Vec<&(dyn postgres::types::ToSql + Sync)> = params
            .iter()
            .map(|s| s as &(dyn postgres::types::ToSql + Sync))
            .collect();
        let sql = format!(
            "SELECT CAST(({}) AS TEXT)",
            sql.trim_start_matches("SELECT ")
        );
        self.0.query_one(sql.as_str(), &p).unwrap().get(0)
    }
}

/// Builds the scenario: `threads` threads of one resource; the measured thread gets 40k tokens
/// of observations and 30k pending tokens (in resource scope the pending tokens are spread over
/// every thread). Returns the measured thread and the scope option.
fn build(db: &mut dyn Db, resource: &str, threads: usize) -> (String, String) {
    let scope = if threads == 1 { "thread" } else { "resource" };
    let ids: Vec<String> = (0..threads)
        .map(|_| db.one("SELECT mem_thread_create($1)", &[resource]).unwrap())
        .collect();
    let main = ids[0].clone();
    let key = if threads == 1 {
        format!("thread:{main}")
    } else {
        format!("resource:{resource}")
    };
    // 40k tokens of observations, from one observed message.
    let first = db
        .one(
            "SELECT mem_message_add($1, 'user', 'start of work')",
            &[&main],
        )
        .unwrap();
    let op = db
        .one("SELECT om_acquire_lease($1, 'bench')", &[&key])
        .unwrap();
    let ids_json = format!("[\"{first}\"]");
    db.one(
        "SELECT om_apply_observation($1, 'bench', $2, $3, $4)",
        &[&key, &op, &observations(40_000), &ids_json],
    );
    db.one("SELECT om_release_lease($1, 'bench', $2)", &[&key, &op]);
    // 30k pending tokens: ~300 messages of ~100 tokens.
    for i in 0..300 {
        let t = &ids[i % threads];
        db.one(
            "SELECT mem_message_add($1, 'assistant', $2)",
            &[t, &message(i)],
        );
    }
    (main, format!("{{\"scope\":\"{scope}\"}}"))
}

fn scenario(db: &mut dyn Db, resource: &str, threads: usize, n: usize) -> (f64, f64, String) {
    let (thread, opts) = build(db, resource, threads);
    let status = db
        .one("SELECT om_status($1, $2)", &[&thread, &opts])
        .unwrap();
    let (p50, p95) = measure(n, || {
        db.one("SELECT om_status($1, $2)", &[&thread, &opts]);
        db.one("SELECT mem_context($1, $2)", &[&thread, &opts]);
    });
    (p50, p95, status)
}

/// Runs the benchmark; returns a markdown table.
pub fn run(sqlite_ext: &Path, pg_url: Option<&str>, quick: bool) -> String {
    let n = if quick { 50 } else { 200 };
    let mut rows = Vec::new();
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    unsafe {
        conn.load_extension_enable().unwrap();
        conn.load_extension(sqlite_ext, None::<&str>).unwrap();
    }
    conn.query_row("SELECT mem_init()", [], |_| Ok(())).unwrap();
    let mut lite = Lite(conn);
    for (label, threads) in [("thread", 1), ("resource, 20 threads", 20)] {
        let (p50, p95, _) = scenario(&mut lite, &format!("bench-{threads}"), threads, n);
        rows.push(format!(
            "| SQLite | {label} | {p50:.2} | {p95:.2} | ≤ 2 | {} |",
            if p50 <= 2.0 { "met" } else { "missed" }
        ));
    }
    if let Some(url) = pg_url {
        let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
        c.batch_execute("CREATE EXTENSION IF NOT EXISTS agentmem")
            .unwrap();
        let mut pg = Pg(c);
        for (label, threads) in [("thread", 1), ("resource, 20 threads", 20)] {
            let resource = format!("bench-{threads}-{}", std::process::id());
            let (p50, p95, _) = scenario(&mut pg, &resource, threads, n);
            rows.push(format!(
                "| Postgres | {label} | {p50:.2} | {p95:.2} | ≤ 10 | {} |",
                if p50 <= 10.0 { "met" } else { "missed" }
            ));
        }
    }
    format!(
        "### Observational memory: one agent step (om_status + mem_context), 30k pending tokens, 40k observation tokens\n\n\
         | backend | scope | p50 ms | p95 ms | target p50 ms | |\n|---|---|---|---|---|---|\n{}\n",
        rows.join("\n")
    )
}
