//! Many writers remembering the same facts at once: each fact is created exactly once (the
//! others reinforce it), on SQLite (real processes on one WAL file) and on Postgres (real
//! connections started together). `mem_remember`'s answer must say which call created it.

use agentmem_tests::backend::{Backend, Param, Postgres};
use std::sync::{Arc, Barrier};

const WRITERS: usize = 8;
const FACTS: usize = 20;

/// The facts in the order writer `w` remembers them (each writer its own order), with
/// whitespace that differs between writers but not the content's hash.
fn facts(w: usize) -> Vec<String> {
    (0..FACTS)
        .map(|i| (i * 7 + w * 3) % FACTS)
        .map(|i| {
            format!(
                "gotcha {i}:{}run the migrations before the tests",
                " ".repeat(1 + w % 3)
            )
        })
        .collect()
}

fn memory_json(content: &str) -> String {
    format!(
        r#"{{"type":"gotcha","content":"{content}","tags":["t{}"]}}"#,
        content.len() % 3
    )
}

/// The table has one row per fact, and every fact is found by search.
fn check(db: &mut dyn Backend, created: usize) {
    assert_eq!(created, FACTS, "calls that answered created:true");
    let rows = db
        .query(
            "SELECT count(*), count(DISTINCT content_hash) FROM mem_memories",
            &[],
        )
        .unwrap();
    assert_eq!(rows[0][0].to_string(), FACTS.to_string(), "memories");
    assert_eq!(
        rows[0][1].to_string(),
        FACTS.to_string(),
        "distinct contents"
    );
    let found = db
        .query(
            "SELECT count(*) FROM mem_memory_search('migrations', $1)",
            &[Param::Text(r#"{"limit":100,"resource_id":"r"}"#.into())],
        )
        .unwrap();
    assert_eq!(found[0][0].to_string(), FACTS.to_string(), "search hits");
}

#[test]
fn sqlite_processes_remember_each_fact_once() {
    let (dir, path, mut db) = agentmem_tests::wal_database("memrace");
    let scripts = (0..WRITERS)
        .map(|w| {
            agentmem_tests::shell_script(facts(w).iter().map(|f| {
                format!(
                    "SELECT mem_remember('r', '{}') ->> 'created'",
                    memory_json(f)
                )
            }))
        })
        .collect();
    let mut created = 0;
    for out in agentmem_tests::sqlite_shells(&path, scripts) {
        assert!(
            out.status.success(),
            "writer failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        created += String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.trim() == "1")
            .count();
    }
    check(&mut db, created);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn postgres_connections_remember_each_fact_once() {
    let Some(url) = agentmem_tests::pg_url() else {
        return;
    };
    let mut db = Postgres::connect(&url);
    db.reset().unwrap();
    let start = Arc::new(Barrier::new(WRITERS));
    let handles: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (url, start) = (url.clone(), start.clone());
            std::thread::spawn(move || {
                let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
                start.wait();
                let mut created = 0;
                for f in facts(w) {
                    let row = c
                        .query_one(
                            "SELECT (mem_remember('r', $1) ->> 'created')::boolean",
                            &[&memory_json(&f)],
                        )
                        .unwrap();
                    if row.get::<_, bool>(0) {
                        created += 1;
                    }
                }
                created
            })
        })
        .collect();
    let created: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    check(&mut db, created);
    db.reset().unwrap();
}
