//! `mem_forget` over a randomly generated database of several resources, on both backends:
//! afterwards no table holds a row of the forgotten resource, the index agrees with the
//! tables and keeps no deleted document in any segment, a word only that resource used finds
//! nothing, the answer's counts are the rows that went, and every other resource's rows are
//! exactly as they were. On SQLite with `secure_delete`, the forgotten words are not left
//! anywhere in the database file.

use agentmem_tests::backend::{Backend, Param, Postgres, Sqlite};
use agentmem_tests::invariants::{check, ints};
use agentmem_tests::sample::{one, populate, secret, text, Written, RESOURCES};
use agentmem_tests::Rng;

/// Every row of the other resources, as text, per table (ids and contents): what forget must
/// leave as it was.
fn snapshot(db: &mut dyn Backend, except: &str) -> Vec<String> {
    let p = [text(except)];
    let mut rows = Vec::new();
    for sql in [
        "SELECT id || '|' || state || '|' || message_count || '|' || token_count FROM mem_threads WHERE resource_id <> $1 ORDER BY id",
        "SELECT id || '|' || raw_content || '|' || message_index FROM mem_messages WHERE resource_id <> $1 ORDER BY id",
        "SELECT id || '|' || content FROM mem_memories WHERE resource_id <> $1 ORDER BY id",
        "SELECT id FROM mem_graph_nodes WHERE resource_id <> $1 ORDER BY id",
        "SELECT id FROM mem_graph_edges WHERE resource_id <> $1 ORDER BY id",
        "SELECT CAST(ancestor AS TEXT) || '>' || CAST(descendant AS TEXT) FROM mem_graph_closure WHERE resource_id <> $1 ORDER BY 1",
        "SELECT id FROM mem_om_records WHERE resource_id <> $1 ORDER BY id",
        "SELECT scope_key || '|' || content FROM mem_working_memory WHERE scope_key <> 'resource:' || $1 AND scope_key NOT LIKE 'thread:' || $1 || '-%' ORDER BY scope_key",
        "SELECT kind || '|' || owner_id FROM mem_embeddings WHERE owner_id IN (SELECT id FROM mem_memories WHERE resource_id <> $1) OR owner_id IN (SELECT id FROM mem_messages WHERE resource_id <> $1) ORDER BY 1",
        "SELECT task_id || '|' || message_id FROM mem_task_messages WHERE message_id NOT LIKE $1 || '-%' ORDER BY 1",
        "SELECT id || '|' || status FROM mem_tasks WHERE id <> 'task-' || $1 ORDER BY id",
    ] {
        rows.extend(column(db, sql, &p));
    }
    rows
}

/// The first column of every row, as text.
fn column(db: &mut dyn Backend, sql: &str, params: &[Param]) -> Vec<String> {
    db.query(sql, params)
        .unwrap()
        .into_iter()
        .map(|r| r[0].to_string())
        .collect()
}

fn check_forgotten(db: &mut dyn Backend, r: &str, written: &Written, answer: &str) {
    let p = [text(r)];
    let zero = |db: &mut dyn Backend, sql: &str| {
        let n = column(db, sql, &p);
        assert_eq!(n, vec!["0".to_owned()], "{}: {sql}", db.name());
    };
    for table in [
        "mem_threads",
        "mem_messages",
        "mem_compactions",
        "mem_om_records",
        "mem_memories",
        "mem_graph_nodes",
        "mem_graph_edges",
        "mem_graph_closure",
        "mem_graph_hubs",
        "mem_graph_settings",
    ] {
        zero(
            db,
            &format!("SELECT count(*) FROM {table} WHERE resource_id = $1"),
        );
    }
    zero(db, "SELECT count(*) FROM mem_working_memory WHERE scope_key = 'resource:' || $1 OR scope_key LIKE 'thread:' || $1 || '-%'");
    zero(
        db,
        "SELECT count(*) FROM mem_tasks WHERE id = 'task-' || $1",
    );
    for orphan in [
        "SELECT count(*) FROM mem_task_messages WHERE message_id NOT IN (SELECT id FROM mem_messages)",
        "SELECT count(*) FROM mem_embeddings e WHERE NOT EXISTS (SELECT 1 FROM mem_memories m WHERE m.id = e.owner_id) AND NOT EXISTS (SELECT 1 FROM mem_messages m WHERE m.id = e.owner_id)",
        "SELECT count(*) FROM mem_memory_files f WHERE NOT EXISTS (SELECT 1 FROM mem_memories m WHERE m.seq = f.memory_seq)",
        "SELECT count(*) FROM mem_idx_segments WHERE dead_count > 0",
    ] {
        assert_eq!(ints(db, orphan), vec![0], "{}: {orphan}", db.name());
    }
    let s = secret(r);
    for sql in [
        "SELECT count(*) FROM mem_search($1, '{\"include_deleted\":true}')",
        "SELECT count(*) FROM mem_memory_search($1, '{\"include_deprecated\":true}')",
        "SELECT count(*) FROM task_search($1)",
    ] {
        assert_eq!(
            one(db, sql, &[text(&s)]),
            "0",
            "{}: {sql} finds the forgotten word",
            db.name()
        );
    }
    // The answer counts what went.
    let answer: serde_json::Value = serde_json::from_str(answer).unwrap();
    for (table, n) in &written.rows {
        assert_eq!(
            answer[*table].as_i64(),
            Some(*n),
            "{}: mem_forget's count of {table} in {answer}",
            db.name()
        );
    }
}

fn run(db: &mut dyn Backend, seed: u64) {
    let mut rng = Rng(seed);
    let written = populate(db, &mut rng);
    check(db, "after populate");
    let victim = RESOURCES[(seed % RESOURCES.len() as u64) as usize];
    let before = snapshot(db, victim);
    let answer = one(db, "SELECT mem_forget($1)", &[text(victim)]);
    check_forgotten(db, victim, &written[victim], &answer);
    check(db, "after forget");
    assert_eq!(
        snapshot(db, victim),
        before,
        "{}: other resources changed",
        db.name()
    );
    // The others are still found.
    for r in RESOURCES.iter().filter(|r| **r != victim) {
        assert_ne!(
            one(
                db,
                "SELECT count(*) FROM mem_search($1)",
                &[text(&secret(r))]
            ),
            "0",
            "{}: {r}'s words",
            db.name()
        );
    }
    // An unknown resource: zero counts.
    let none: serde_json::Value =
        serde_json::from_str(&one(db, "SELECT mem_forget('nobody')", &[])).unwrap();
    assert!(
        none.as_object()
            .unwrap()
            .values()
            .all(|v| v.as_i64() == Some(0)),
        "{none}"
    );
}

#[test]
fn sqlite_forget_leaves_nothing_of_the_resource() {
    for seed in [3, 11, 29] {
        let mut db = Sqlite::open(":memory:");
        run(&mut db, seed);
    }
}

#[test]
fn postgres_forget_leaves_nothing_of_the_resource() {
    let Some(url) = agentmem_tests::pg_url() else {
        return;
    };
    let mut db = Postgres::connect(&url);
    for seed in [5, 17] {
        db.reset().unwrap();
        run(&mut db, seed);
    }
}

/// With `secure_delete`, SQLite zeroes what it frees: after forget and a checkpoint, the
/// forgotten resource's words appear nowhere in the database file — not in a row, an index
/// page, a free page or the WAL.
#[test]
fn sqlite_secure_delete_leaves_no_bytes_of_the_resource() {
    let dir = std::env::temp_dir().join(format!("agentmem-forget-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("forget.db");
    let _ = std::fs::remove_file(&path);
    let mut db = Sqlite::open(path.to_str().unwrap());
    db.conn
        .execute_batch("PRAGMA secure_delete = ON; PRAGMA journal_mode = WAL;")
        .unwrap();
    let mut rng = Rng(41);
    populate(&mut db, &mut rng);
    db.conn
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
        .unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let needle = secret("rb");
    let present = |b: &[u8]| b.windows(needle.len()).any(|w| w == needle.as_bytes());
    assert!(present(&bytes), "the word is in the file before");
    one(&mut db, "SELECT mem_forget('rb')", &[]);
    db.conn
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
        .unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert!(!present(&bytes), "the forgotten word is still in the file");
    assert!(
        present_any(&bytes, &secret("ra")),
        "the other resources' words stay"
    );
    drop(db);
    let _ = std::fs::remove_dir_all(&dir);
}

fn present_any(bytes: &[u8], word: &str) -> bool {
    bytes.windows(word.len()).any(|w| w == word.as_bytes())
}
