//! What keying the message index by resource would change, measured on the real-code corpus
//! (ignored by default; docs/scale-out.md reports the figures):
//! `cargo test -p agentmem-core --release --test partition_bench -- --ignored --nocapture`.
//!
//! The same messages are indexed twice in one process: in one index per namespace (today's
//! layout) and in one index per resource (what a Citus deployment distributed by
//! `resource_id` would need, so that a resource's postings live with its rows). For each
//! layout it prints the ingest rate, the latency of a search within one resource (today: the
//! shared index with the resource's messages as a filter, read as `mem_search` reads them) and
//! of a search across all resources (per resource: one search per index, top 10 merged).
//! Needs `target/bench-corpus/code-200000.jsonl` (`make bench` builds it).

mod common;

use agentmem_core::search::{self, SearchParams};
use common::Sq;
use std::collections::{HashMap, HashSet};
use std::time::Instant;

struct Corpus {
    /// (resource number, text, created_at) per message, keyed by position.
    messages: Vec<(usize, String, i64)>,
    resources: usize,
    /// (question, resource of its answer).
    questions: Vec<(String, usize)>,
}

fn load(n: usize) -> Option<Corpus> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench-corpus");
    let text = std::fs::read_to_string(dir.join("code-200000.jsonl")).ok()?;
    let questions = std::fs::read_to_string(dir.join("code-200000-queries.jsonl")).ok()?;
    let mut names: HashMap<String, usize> = HashMap::new();
    let mut messages = Vec::with_capacity(n);
    for line in text.lines().take(n) {
        let v: serde_json::Value = serde_json::from_str(line).ok()?;
        let next = names.len();
        let r = *names
            .entry(v["resource"].as_str()?.to_owned())
            .or_insert(next);
        messages.push((
            r,
            v["content"].as_str()?.to_owned(),
            v["created_at"].as_i64()?,
        ));
    }
    let questions = questions
        .lines()
        .filter_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
            let answer = v["relevant"].get(0)?.as_u64()? as usize;
            let words: Vec<&str> = v["query"].as_str()?.split_whitespace().take(8).collect();
            (answer < messages.len()).then(|| (words.join(" "), messages[answer].0))
        })
        .take(300)
        .collect();
    Some(Corpus {
        messages,
        resources: names.len(),
        questions,
    })
}

#[derive(Clone, Copy, PartialEq)]
enum Layout {
    Shared,
    PerResource,
}

fn ns(layout: Layout, resource: usize) -> String {
    match layout {
        Layout::Shared => "msg".into(),
        Layout::PerResource => format!("msg/{resource}"),
    }
}

/// A fresh database in the temporary folder, and its path (removed by the caller).
fn open(c: &Corpus) -> (Sq, std::path::PathBuf) {
    let path = std::env::temp_dir().join(format!(
        "agentmem-partition-{}-{}.db",
        std::process::id(),
        rand_suffix()
    ));
    let db = rusqlite::Connection::open(&path).unwrap();
    db.execute_batch(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;
         CREATE TABLE res (seq INTEGER PRIMARY KEY, resource INTEGER NOT NULL);
         CREATE INDEX res_resource ON res (resource);",
    )
    .unwrap();
    let mut conn = Sq::new(db);
    agentmem_core::schema::migrate(&mut conn, None).unwrap();
    conn.0.execute_batch("BEGIN").unwrap();
    for (i, (r, _, _)) in c.messages.iter().enumerate() {
        conn.0
            .execute("INSERT INTO res VALUES (?1, ?2)", [i as i64, *r as i64])
            .unwrap();
    }
    conn.0.execute_batch("COMMIT").unwrap();
    (conn, path)
}

fn rand_suffix() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(0u8)
}

/// Messages per second, in transactions of 1 000 messages.
fn ingest(conn: &mut Sq, c: &Corpus, layout: Layout) -> f64 {
    let t = Instant::now();
    for (n, chunk) in c.messages.chunks(1000).enumerate() {
        conn.0.execute_batch("BEGIN").unwrap();
        for (j, (r, text, created)) in chunk.iter().enumerate() {
            let key = (n * 1000 + j) as i64;
            search::index_doc(conn, &ns(layout, *r), key, text, *created, None).unwrap();
        }
        conn.0.execute_batch("COMMIT").unwrap();
    }
    c.messages.len() as f64 / t.elapsed().as_secs_f64()
}

/// The top 10 keys of a search within one resource.
fn within(conn: &mut Sq, layout: Layout, q: &str, r: usize, p: &SearchParams) -> Vec<i64> {
    match layout {
        Layout::Shared => {
            let allowed: HashSet<i64> = conn
                .0
                .prepare_cached("SELECT seq FROM res WHERE resource = ?1")
                .unwrap()
                .query_map([r as i64], |row| row.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            let f = |k: i64| allowed.contains(&k);
            keys(search::search(conn, "msg", q, p, Some(&f)).unwrap())
        }
        Layout::PerResource => keys(search::search(conn, &ns(layout, r), q, p, None).unwrap()),
    }
}

/// The top 10 keys of a search across every resource.
fn across(conn: &mut Sq, layout: Layout, q: &str, c: &Corpus, p: &SearchParams) -> Vec<i64> {
    match layout {
        Layout::Shared => keys(search::search(conn, "msg", q, p, None).unwrap()),
        Layout::PerResource => {
            let mut all: Vec<(f64, i64)> = Vec::new();
            for r in 0..c.resources {
                let res = search::search(conn, &ns(layout, r), q, p, None).unwrap();
                all.extend(res.hits.iter().map(|h| (h.score, h.doc)));
            }
            all.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
            all.into_iter().take(p.limit).map(|(_, k)| k).collect()
        }
    }
}

fn keys(r: search::SearchResult) -> Vec<i64> {
    r.hits.iter().map(|h| h.doc).collect()
}

fn percentiles(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    let at = |p: f64| v[((v.len() as f64 - 1.0) * p) as usize];
    (at(0.5), at(0.95))
}

fn time(mut f: impl FnMut()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64() * 1e3
}

#[test]
#[ignore]
fn partition_by_resource() {
    let n: usize = std::env::var("PARTITION_BENCH_DOCS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let Some(c) = load(n) else {
        eprintln!("partition_bench: corpus missing; run `make bench` once to build it");
        return;
    };
    let p = SearchParams {
        limit: 10,
        now: Some(c.messages.last().map_or(0, |m| m.2)),
        ..Default::default()
    };
    println!(
        "{} messages, {} resources, {} questions (first 8 words)",
        c.messages.len(),
        c.resources,
        c.questions.len()
    );
    println!("| layout | ingest msg/s | segments | within one resource p50 / p95 ms | across all p50 / p95 ms |");
    println!("|---|---:|---:|---:|---:|");
    for (name, layout) in [
        ("one index (today)", Layout::Shared),
        ("one index per resource", Layout::PerResource),
    ] {
        let (mut conn, path) = open(&c);
        let rate = ingest(&mut conn, &c, layout);
        let segments: i64 = conn
            .0
            .query_row("SELECT count(*) FROM mem_idx_segments", [], |r| r.get(0))
            .unwrap();
        for (q, r) in c.questions.iter().take(50) {
            within(&mut conn, layout, q, *r, &p);
            across(&mut conn, layout, q, &c, &p);
        }
        let w: Vec<f64> = c
            .questions
            .iter()
            .map(|(q, r)| time(|| drop(within(&mut conn, layout, q, *r, &p))))
            .collect();
        let a: Vec<f64> = c
            .questions
            .iter()
            .map(|(q, _)| time(|| drop(across(&mut conn, layout, q, &c, &p))))
            .collect();
        let ((w50, w95), (a50, a95)) = (percentiles(w), percentiles(a));
        println!("| {name} | {rate:.0} | {segments} | {w50:.2} / {w95:.2} | {a50:.2} / {a95:.2} |");
        drop(conn);
        for suffix in ["", "-wal", "-shm"] {
            let mut p = path.clone().into_os_string();
            p.push(suffix);
            let _ = std::fs::remove_file(p);
        }
    }
}
