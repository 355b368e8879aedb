//! Exactly-once claims under contention: many real processes on one SQLite WAL file, and
//! many Postgres connections, each try to claim every task of a shared set in their own
//! random order. Every task must be claimed exactly once, the successes must add up to the
//! task count, and the only refusal a claimer may see is "already claimed by session …":
//! no busy, locked or deadlock error reaches a caller.

use agentmem_tests::backend::{pg_message, Sqlite};
use std::collections::HashMap;

const CLAIMERS: usize = 8;
const TASKS: usize = 1000;

/// A claimer's own order of the tasks (xorshift shuffle, seeded by the claimer).
fn order(seed: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..TASKS).collect();
    let mut x: u64 = 0x2545_f491_4f6c_dd1d ^ (seed as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for i in (1..v.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.swap(i, (x % (i as u64 + 1)) as usize);
    }
    v
}

fn task_id(prefix: &str, i: usize) -> String {
    format!("{prefix}-{i:04}")
}

/// What one sqlite3 shell process runs: every claim in its own IMMEDIATE transaction (the
/// write lock is taken up front and waited for under the busy timeout), errors reported and
/// skipped.
fn claimer_script(ext: &str, claimer: usize) -> String {
    let mut s = format!(".load {ext}\n.timeout 120000\nPRAGMA synchronous=NORMAL;\n");
    for i in order(claimer) {
        s.push_str(&format!(
            "BEGIN IMMEDIATE;\nSELECT 'won ' || task_claim('{}', 'p{claimer}');\nCOMMIT;\n",
            task_id("t", i)
        ));
    }
    s
}

#[test]
fn sqlite_processes_claim_each_task_once() {
    let dir = std::env::temp_dir().join(format!("agentmem-race-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("race.db");
    let _ = std::fs::remove_file(&path);
    let db = Sqlite::open(path.to_str().unwrap());
    db.conn
        .query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
        .unwrap();
    db.conn.execute_batch("BEGIN").unwrap();
    for i in 0..TASKS {
        db.conn
            .query_row(
                "SELECT task_create('race task', json_object('id', ?1))",
                [task_id("t", i)],
                |_| Ok(()),
            )
            .unwrap();
    }
    db.conn.execute_batch("COMMIT").unwrap();
    let ext = agentmem_tests::sqlite_extension();
    let scripts = (0..CLAIMERS)
        .map(|k| claimer_script(ext.to_str().unwrap(), k))
        .collect();
    let outputs = agentmem_tests::sqlite_shells(&path, scripts);
    let mut winners: HashMap<String, usize> = HashMap::new();
    let mut total = 0;
    for (k, out) in outputs.into_iter().enumerate() {
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        for line in stderr.lines().filter(|l| !l.trim().is_empty()) {
            assert!(
                line.contains("already claimed by session"),
                "claimer {k} saw an error other than a lost race: {line}"
            );
        }
        for line in stdout.lines() {
            let id = line
                .strip_prefix("won ")
                .unwrap_or_else(|| panic!("odd output: {line}"));
            total += 1;
            let prev = winners.insert(id.to_owned(), k);
            assert!(
                prev.is_none(),
                "{id} claimed by p{} and p{k}",
                prev.unwrap()
            );
        }
    }
    assert_eq!(total, TASKS, "successful claims");
    assert_eq!(winners.len(), TASKS, "tasks claimed");
    let mut st = db
        .conn
        .prepare("SELECT id, status, session_id FROM mem_tasks")
        .unwrap();
    let rows: Vec<(String, String, String)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(rows.len(), TASKS);
    for (id, status, session) in rows {
        assert_eq!(status, "in_progress", "{id}");
        assert_eq!(
            session,
            format!("p{}", winners[&id]),
            "{id}: the winner owns it"
        );
    }
    drop(st);
    drop(db);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn postgres_connections_claim_each_task_once() {
    let Some(url) = agentmem_tests::pg_url() else {
        return;
    };
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    admin
        .batch_execute("CREATE EXTENSION IF NOT EXISTS agentmem")
        .unwrap();
    let prefix = format!("race{}", std::process::id());
    let mut tx = admin.transaction().unwrap();
    for i in 0..TASKS {
        tx.execute(
            "SELECT task_create('race task', json_build_object('id', $1::text)::text)",
            &[&task_id(&prefix, i)],
        )
        .unwrap();
    }
    tx.commit().unwrap();
    let handles: Vec<_> = (0..CLAIMERS)
        .map(|k| {
            let url = url.clone();
            let prefix = prefix.clone();
            std::thread::spawn(move || {
                let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
                let session = format!("p{k}");
                let mut won = Vec::new();
                for i in order(k) {
                    let id = task_id(&prefix, i);
                    match c.query_one("SELECT task_claim($1, $2)", &[&id, &session]) {
                        Ok(_) => won.push(id),
                        Err(e) => {
                            let m = pg_message(&e);
                            assert!(
                                m.contains("already claimed by session"),
                                "claimer {k} saw an error other than a lost race: {m}"
                            );
                        }
                    }
                }
                won
            })
        })
        .collect();
    let mut winners: HashMap<String, usize> = HashMap::new();
    let mut total = 0;
    for (k, h) in handles.into_iter().enumerate() {
        for id in h.join().unwrap() {
            total += 1;
            let prev = winners.insert(id.clone(), k);
            assert!(prev.is_none(), "{id} claimed twice");
        }
    }
    assert_eq!(total, TASKS, "successful claims");
    assert_eq!(winners.len(), TASKS, "tasks claimed");
    let rows = admin
        .query(
            "SELECT id, status, session_id FROM mem_tasks WHERE id LIKE $1 || '-%'",
            &[&prefix],
        )
        .unwrap();
    assert_eq!(rows.len(), TASKS);
    for r in rows {
        let (id, status, session): (String, String, String) = (r.get(0), r.get(1), r.get(2));
        assert_eq!(status, "in_progress", "{id}");
        assert_eq!(
            session,
            format!("p{}", winners[&id]),
            "{id}: the winner owns it"
        );
    }
    admin
        .execute("DELETE FROM mem_tasks WHERE id LIKE $1 || '-%'", &[&prefix])
        .unwrap();
}
