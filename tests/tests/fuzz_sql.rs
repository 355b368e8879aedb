//! Random sequences of plain SQL and function calls on both backends, checked after every
//! step against what the base rows say: the search index (`mem_index_check()`), the thread
//! counters (recounted from the messages) and the blocked state (a naive graph walk over the
//! dependency rows). Statements may fail (a refused update, a cycle): then nothing may have
//! changed that the checks can see.
//!
//! `make test` runs a short pass; `make fuzz` runs it for `FUZZ_SECONDS` with fresh seeds
//! (`FUZZ_SQL_SEED` replays one).

use agentmem_tests::backend::{Backend, Param, Postgres, Sqlite};
use agentmem_tests::invariants::{check, strings};
use agentmem_tests::Rng;
use std::time::{Duration, Instant};

const WORDS: &[&str] = &[
    "login",
    "LoginSchema",
    "cache",
    "src/auth/login.ts",
    "refresh_tokens",
    "deploy",
    "bug",
    "ka",
    "the",
    "schema",
    "é",
    "東京",
];

fn text(rng: &mut Rng, n: u64) -> String {
    (0..1 + rng.next() % n)
        .map(|_| WORDS[(rng.next() % WORDS.len() as u64) as usize])
        .collect::<Vec<_>>()
        .join(" ")
}

/// One random step. Returns the statement for the failure report and whether it succeeded.
fn step(db: &mut dyn Backend, rng: &mut Rng, sqlite: bool) -> (String, bool) {
    let threads = strings(db, "SELECT id FROM mem_threads ORDER BY id");
    let messages = strings(db, "SELECT id FROM mem_messages ORDER BY id");
    let tasks = strings(db, "SELECT id FROM mem_tasks ORDER BY id");
    let pick = |rng: &mut Rng, v: &[String]| -> Option<String> {
        (!v.is_empty()).then(|| v[(rng.next() % v.len() as u64) as usize].clone())
    };
    let t = pick(rng, &threads);
    let m = pick(rng, &messages);
    let (a, b) = (pick(rng, &tasks), pick(rng, &tasks));
    let words = text(rng, 12);
    let when = 1_700_000_000_000 + (rng.next() % 1_000_000) as i64;
    let (sql, params): (String, Vec<Param>) = match (rng.next() % 24, t, m, a, b) {
        (0 | 1, _, _, _, _) => ("SELECT mem_thread_create($1)".into(), vec![Param::Text(format!("r{}", rng.next() % 3))]),
        (2..=5, Some(t), _, _, _) => (
            "SELECT mem_message_add($1, 'user', $2, '{\"created_at\":' || $3 || '}')".into(),
            vec![Param::Text(t), Param::Text(words), Param::Int(when)],
        ),
        (6 | 7, Some(t), _, _, _) => (
            "INSERT INTO mem_messages (thread_id, role, raw_content, created_at) VALUES ($1, 'assistant', $2, $3)".into(),
            vec![Param::Text(t), Param::Text(words), Param::Int(when)],
        ),
        (8, Some(t), _, _, _) => (
            "INSERT INTO mem_messages (id, thread_id, role, raw_content, token_count) VALUES ($1, $2, 'tool', $3, $4)".into(),
            vec![Param::Text(format!("fixed{}", rng.next() % 8)), Param::Text(t), Param::Text(words), Param::Int((rng.next() % 9) as i64)],
        ),
        (9, _, Some(m), _, _) => ("UPDATE mem_messages SET raw_content = $2 WHERE id = $1".into(), vec![Param::Text(m), Param::Text(words)]),
        (10, _, Some(m), _, _) => ("UPDATE mem_messages SET search_text = $2 WHERE id = $1".into(), vec![Param::Text(m), Param::Text(words)]),
        (11, _, Some(m), _, _) => ("UPDATE mem_messages SET created_at = $2 WHERE id = $1".into(), vec![Param::Text(m), Param::Int(when)]),
        (12, Some(t), Some(m), _, _) => {
            let col = ["thread_id", "message_index", "token_count", "id"][(rng.next() % 4) as usize];
            let v = if col == "thread_id" || col == "id" { Param::Text(t) } else { Param::Int((rng.next() % 50) as i64) };
            (format!("UPDATE mem_messages SET {col} = $2 WHERE id = $1"), vec![Param::Text(m), v])
        }
        (13, _, Some(m), _, _) => ("DELETE FROM mem_messages WHERE id = $1".into(), vec![Param::Text(m)]),
        (14, Some(t), _, _, _) if sqlite => (
            "INSERT OR REPLACE INTO mem_messages (id, thread_id, role, raw_content) VALUES ($1, $2, 'user', $3)".into(),
            vec![Param::Text(format!("fixed{}", rng.next() % 8)), Param::Text(t), Param::Text(words)],
        ),
        (14, Some(t), _, _, _) => (
            "INSERT INTO mem_messages (id, thread_id, role, raw_content) VALUES ($1, $2, 'user', $3) ON CONFLICT (id) DO UPDATE SET raw_content = excluded.raw_content".into(),
            vec![Param::Text(format!("fixed{}", rng.next() % 8)), Param::Text(t), Param::Text(words)],
        ),
        (15, Some(t), _, _, _) => (
            "INSERT INTO mem_messages (id, thread_id, role, raw_content) VALUES ($1, $2, 'user', $3) ON CONFLICT (id) DO NOTHING".into(),
            vec![Param::Text(format!("fixed{}", rng.next() % 8)), Param::Text(t), Param::Text(words)],
        ),
        (16, Some(t), _, _, _) => (
            "SELECT mem_compact($1, $2, $3, 'summary of the range')".into(),
            vec![Param::Text(t), Param::Int((rng.next() % 4) as i64), Param::Int((rng.next() % 8) as i64)],
        ),
        (17, _, _, _, _) => ("SELECT mem_uncompact(id) FROM mem_compactions ORDER BY id LIMIT 1".into(), vec![]),
        (18, Some(t), _, _, _) => ("DELETE FROM mem_threads WHERE id = $1".into(), vec![Param::Text(t)]),
        (19, _, _, _, _) => ("SELECT task_create($1)".into(), vec![Param::Text(words)]),
        (20, _, _, Some(a), Some(b)) => {
            let ty = ["blocks", "parent-child", "related"][(rng.next() % 3) as usize];
            ("INSERT INTO mem_task_deps (task_id, depends_on_id, type) VALUES ($1, $2, $3)".into(), vec![Param::Text(a), Param::Text(b), Param::Text(ty.into())])
        }
        (21, _, _, Some(a), _) => ("DELETE FROM mem_task_deps WHERE task_id = $1".into(), vec![Param::Text(a)]),
        (22, _, _, Some(a), _) => {
            let st = ["open", "in_progress", "closed"][(rng.next() % 3) as usize];
            ("UPDATE mem_tasks SET status = $2 WHERE id = $1".into(), vec![Param::Text(a), Param::Text(st.into())])
        }
        (23, _, _, Some(a), _) => ("DELETE FROM mem_tasks WHERE id = $1".into(), vec![Param::Text(a)]),
        _ => ("SELECT mem_optimize()".into(), vec![]),
    };
    let ok = db.query(&sql, &params).is_ok();
    if sqlite && rng.chance(5) {
        // The trigger functions by hand: harmless by construction.
        for call in [
            "SELECT mem__message_insert(seq, id) FROM mem_messages",
            "SELECT mem__task_dep_insert(seq) FROM mem_task_deps",
            "SELECT mem__task_status(seq) FROM mem_tasks",
            "SELECT mem__thread_recount(id) FROM mem_threads",
        ] {
            db.query(call, &[])
                .unwrap_or_else(|e| panic!("{call}: {e}"));
        }
    }
    (format!("{sql} {params:?}"), ok)
}

/// Runs `steps` random steps from `seed`; returns how many statements succeeded.
fn run(db: &mut dyn Backend, seed: u64, steps: usize, sqlite: bool) -> usize {
    db.reset().unwrap();
    let mut rng = Rng(seed);
    let mut last = String::new();
    let mut succeeded = 0;
    for i in 0..steps {
        let ctx = format!("{} seed {seed} step {i} after {last}", db.name());
        let (sql, ok) = step(db, &mut rng, sqlite);
        last = sql;
        succeeded += usize::from(ok);
        if i % 5 == 4 || i + 1 == steps {
            check(db, &format!("{ctx} then {last}"));
        }
    }
    succeeded
}

/// `FUZZ_SECONDS` (0 for the short pass of `make test`) and an optional fixed seed.
fn budget() -> (Duration, Option<u64>) {
    let secs = std::env::var("FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let seed = std::env::var("FUZZ_SQL_SEED")
        .ok()
        .and_then(|s| s.parse().ok());
    (Duration::from_secs(secs), seed)
}

fn campaign(db: &mut dyn Backend, sqlite: bool) {
    let (time, fixed) = budget();
    let start = Instant::now();
    let mut seed = fixed.unwrap_or(0x5eed_0001);
    let mut runs = 0;
    let mut succeeded = 0;
    loop {
        succeeded += run(db, seed, 120, sqlite);
        runs += 1;
        if fixed.is_some() || (runs >= 3 && start.elapsed() >= time) {
            break;
        }
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407)
            | 1;
    }
    eprintln!(
        "fuzz_sql {}: {runs} runs of 120 steps ({succeeded} statements succeeded) in {:?}",
        db.name(),
        start.elapsed()
    );
}

#[test]
fn sqlite_random_plain_sql() {
    let mut db = Sqlite::open(":memory:");
    campaign(&mut db, true);
}

#[test]
fn postgres_random_plain_sql() {
    let Some(url) = agentmem_tests::pg_url() else {
        return;
    };
    let mut db = Postgres::connect(&url);
    campaign(&mut db, false);
}
