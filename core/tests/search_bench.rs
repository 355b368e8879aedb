//! A quick in-process measurement (ignored by default):
//! `cargo test -p agentmem-core --release --test search_bench -- --ignored --nocapture`.
//! Ingest and search of a synthetic agent conversation corpus, next to SQLite FTS5 (plain
//! table, words OR-ed, `ORDER BY rank LIMIT 10`, no recency term) in the same process.

mod common;

use agentmem_core::search::{self, SearchParams};
use std::time::Instant;

// ---------------------------------------------------------------- a test-only Conn

use common::Sq;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.next() as usize) % xs.len()]
    }
}

const PROSE: &[&str] = &[
    "the",
    "a",
    "to",
    "of",
    "and",
    "in",
    "is",
    "it",
    "that",
    "for",
    "we",
    "should",
    "fix",
    "error",
    "test",
    "failing",
    "when",
    "user",
    "login",
    "token",
    "refresh",
    "session",
    "database",
    "query",
    "cache",
    "update",
    "build",
    "deploy",
    "config",
    "timeout",
    "retry",
    "request",
    "response",
    "handler",
    "schema",
    "migration",
    "index",
    "search",
    "memory",
    "thread",
    "message",
    "agent",
    "tool",
    "call",
    "result",
    "value",
    "null",
    "undefined",
    "function",
    "module",
    "import",
    "export",
    "type",
    "interface",
    "component",
    "render",
    "state",
    "effect",
    "hook",
    "route",
    "server",
    "client",
    "api",
    "endpoint",
    "payload",
    "json",
    "parse",
    "validate",
    "check",
    "because",
    "after",
    "before",
    "then",
    "also",
    "maybe",
    "looks",
    "like",
    "works",
    "now",
    "again",
];
const IDENT_A: &[&str] = &[
    "Login", "User", "Session", "Token", "Auth", "Payment", "Order", "Cart", "Search", "Index",
];
const IDENT_B: &[&str] = &[
    "Schema",
    "Service",
    "Handler",
    "Controller",
    "Store",
    "Manager",
    "Provider",
    "Client",
    "Error",
    "Config",
];
const DIRS: &[&str] = &[
    "src",
    "lib",
    "app",
    "core",
    "auth",
    "api",
    "components",
    "utils",
    "tests",
    "server",
];

fn message(r: &mut Rng) -> String {
    let mut s = String::new();
    let n = 8 + r.next() % 40;
    for _ in 0..n {
        match r.next() % 10 {
            0 => s.push_str(&format!("{}{} ", r.pick(IDENT_A), r.pick(IDENT_B))),
            1 => s.push_str(&format!(
                "{}/{}/{}.ts ",
                r.pick(DIRS),
                r.pick(DIRS),
                r.pick(PROSE)
            )),
            2 => s.push_str(&format!("{}_{} ", r.pick(PROSE), r.pick(PROSE))),
            3 => s.push_str(&format!(
                "at {}{}.{} (line {}) ",
                r.pick(IDENT_A),
                r.pick(IDENT_B),
                r.pick(PROSE),
                r.next() % 500
            )),
            _ => {
                s.push_str(r.pick(PROSE));
                s.push(' ');
            }
        }
    }
    s
}

fn queries(r: &mut Rng, n: usize) -> Vec<Vec<String>> {
    (0..n)
        .map(|_| {
            let k = 1 + r.next() % 6;
            (0..k)
                .map(|_| match r.next() % 3 {
                    0 => format!("{}{}", r.pick(IDENT_A), r.pick(IDENT_B)),
                    _ => r.pick(PROSE).to_owned(),
                })
                .collect()
        })
        .collect()
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 - 1.0) * p) as usize]
}

#[test]
#[ignore]
fn measure() {
    let n: i64 = std::env::var("SEARCH_BENCH_DOCS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50_000);
    let mut r = Rng(42);
    let docs: Vec<String> = (0..n).map(|_| message(&mut r)).collect();
    let qs = queries(&mut r, 300);
    let now = 1_800_000_000_000i64;

    let path = std::env::temp_dir().join(format!("agentmem-bench-{}.db", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let c = rusqlite::Connection::open(&path).unwrap();
    c.execute_batch("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")
        .unwrap();
    c.execute_batch("CREATE VIRTUAL TABLE fts USING fts5(body);")
        .unwrap();
    let mut conn = Sq(c);
    agentmem_core::schema::migrate(&mut conn, None).unwrap();

    let t = Instant::now();
    conn.0.execute_batch("BEGIN").unwrap();
    for (i, d) in docs.iter().enumerate() {
        search::index_doc(
            &mut conn,
            "msg",
            i as i64,
            d,
            now - (n - i as i64) * 60_000,
            None,
        )
        .unwrap();
    }
    conn.0.execute_batch("COMMIT").unwrap();
    let ours_ingest = n as f64 / t.elapsed().as_secs_f64();
    let t = Instant::now();
    conn.0.execute_batch("BEGIN").unwrap();
    {
        let mut st = conn
            .0
            .prepare("INSERT INTO fts (rowid, body) VALUES (?1, ?2)")
            .unwrap();
        for (i, d) in docs.iter().enumerate() {
            st.execute(rusqlite::params![i as i64, d]).unwrap();
        }
    }
    conn.0.execute_batch("COMMIT").unwrap();
    let fts_ingest = n as f64 / t.elapsed().as_secs_f64();

    let p = SearchParams {
        limit: 10,
        now: Some(now),
        ..Default::default()
    };
    // Warm the segment cache once (a long-lived connection's steady state).
    let _ = search::search(&mut conn, "msg", "warm", &p, None).unwrap();
    let mut ours = Vec::new();
    let mut scored = 0u64;
    let mut matched_total = 0u64;

    for q in &qs {
        let text = q.join(" ");
        let t = Instant::now();
        let res = search::search(&mut conn, "msg", &text, &p, None).unwrap();
        ours.push(t.elapsed().as_secs_f64() * 1e3);
        scored += res.stats.scored_docs;
    }
    let mut fts = Vec::new();
    for q in &qs {
        let m = q
            .iter()
            .map(|w| format!("\"{}\"", w.replace('"', "")))
            .collect::<Vec<_>>()
            .join(" OR ");
        let t = Instant::now();
        let mut st = conn
            .0
            .prepare_cached(
                "SELECT rowid, bm25(fts) FROM fts WHERE fts MATCH ?1 ORDER BY rank LIMIT 10",
            )
            .unwrap();
        let rows: Vec<i64> = st
            .query_map([&m], |r| r.get(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        fts.push(t.elapsed().as_secs_f64() * 1e3);
        let cnt: i64 = conn
            .0
            .query_row("SELECT count(*) FROM fts WHERE fts MATCH ?1", [&m], |r| {
                r.get(0)
            })
            .unwrap();
        matched_total += cnt as u64;
        assert!(rows.len() <= 10);
    }
    let idx_bytes: i64 = conn
        .0
        .query_row("SELECT sum(byte_size) FROM mem_idx_segments", [], |r| {
            r.get(0)
        })
        .unwrap();
    let segs: i64 = conn
        .0
        .query_row("SELECT count(*) FROM mem_idx_segments", [], |r| r.get(0))
        .unwrap();
    println!(
        "docs {n}, segments {segs}, segment bytes {:.1} MB",
        idx_bytes as f64 / 1e6
    );
    println!(
        "ingest msg/s: ours {ours_ingest:.0}, fts5 {fts_ingest:.0}, ratio {:.2}",
        ours_ingest / fts_ingest
    );
    let (o50, o95, f50, f95) = (
        pct(&mut ours.clone(), 0.5),
        pct(&mut ours, 0.95),
        pct(&mut fts.clone(), 0.5),
        pct(&mut fts, 0.95),
    );
    println!("search ms p50/p95: ours {o50:.3}/{o95:.3}, fts5 {f50:.3}/{f95:.3}, ratio p50 {:.2} p95 {:.2}", o50 / f50, o95 / f95);
    println!(
        "scored docs per query {:.0}, matching docs per query {:.0}",
        scored as f64 / qs.len() as f64,
        matched_total as f64 / qs.len() as f64
    );

    // Stop words: their share of tokens and the idf BM25 gives them.
    let stop = [
        "the", "a", "to", "of", "and", "in", "is", "it", "that", "for",
    ];
    let mut total = 0usize;
    let mut stops = 0usize;
    for d in docs.iter().take(5000) {
        for t in search::tokenizer::tokenize(d) {
            total += 1;
            if stop.contains(&t.text.as_str()) {
                stops += 1;
            }
        }
    }
    println!(
        "stop-word tokens: {:.1}% of tokens",
        100.0 * stops as f64 / total as f64
    );
    drop(conn);
    let _ = std::fs::remove_file(&path);
}
