//! `mem_forget` over a randomly generated database of several resources, on both backends:
//! afterwards no table holds a row of the forgotten resource, the index agrees with the
//! tables and keeps no deleted document in any segment, a word only that resource used finds
//! nothing, the answer's counts are the rows that went, and every other resource's rows are
//! exactly as they were. On SQLite with `secure_delete`, the forgotten words are not left
//! anywhere in the database file.

use agentmem_tests::backend::{Backend, Param, Postgres, Sqlite};
use agentmem_tests::invariants::{check, ints};
use agentmem_tests::Rng;
use std::collections::BTreeMap;

const RESOURCES: &[&str] = &["ra", "rb", "rc"];

/// A word only resource `r` uses.
fn secret(r: &str) -> String {
    format!("xylo{r}quartz")
}

fn text(p: &str) -> Param {
    Param::Text(p.to_owned())
}

fn one(db: &mut dyn Backend, sql: &str, params: &[Param]) -> String {
    db.query(sql, params).unwrap()[0][0].to_string()
}

/// What the generator wrote for one resource, counted per table.
#[derive(Default, Debug)]
struct Written {
    rows: BTreeMap<&'static str, i64>,
}

impl Written {
    fn add(&mut self, table: &'static str, n: i64) {
        *self.rows.entry(table).or_default() += n;
    }
}

/// Threads with messages (some compacted), a task of its own and one shared with the next
/// resource, memories with a vector, a small graph, working memory and an observational
/// record — each carrying the resource's secret word somewhere.
fn populate(db: &mut dyn Backend, rng: &mut Rng) -> BTreeMap<&'static str, Written> {
    let mut out = BTreeMap::new();
    let mut first_messages = Vec::new();
    for (ri, r) in RESOURCES.iter().enumerate() {
        let w: &mut Written = out.entry(*r).or_default();
        let s = secret(r);
        let threads = 2 + rng.next() % 3;
        let mut message_ids = Vec::new();
        for t in 0..threads {
            let tid = format!("{r}-t{t}");
            db.query(
                "SELECT mem_thread_create($1, $2, NULL, $3)",
                &[
                    text(r),
                    text(&format!("thread {t}")),
                    text(&format!(r#"{{"id":"{tid}"}}"#)),
                ],
            )
            .unwrap();
            w.add("mem_threads", 1);
            let n = 3 + rng.next() % 12;
            for m in 0..n {
                let mid = format!("{tid}-m{m}");
                let content = if rng.chance(30) {
                    format!("the {s} cache failed again at step {m}")
                } else {
                    format!("shared words about login and cache {m}")
                };
                db.query(
                    "SELECT mem_message_add($1, 'user', $2, $3)",
                    &[
                        text(&tid),
                        text(&content),
                        text(&format!(r#"{{"id":"{mid}"}}"#)),
                    ],
                )
                .unwrap();
                message_ids.push(mid);
                w.add("mem_messages", 1);
            }
            if rng.chance(50) {
                db.query(
                    "SELECT mem_compact($1, 0, 1, $2)",
                    &[text(&tid), text(&format!("summary with {s}"))],
                )
                .unwrap();
                w.add("mem_compactions", 1);
            }
            db.query(
                "SELECT wm_set($1, $2)",
                &[text(&format!("thread:{tid}")), text(&format!("notes {s}"))],
            )
            .unwrap();
            w.add("mem_working_memory", 1);
        }
        db.query(
            "SELECT wm_set($1, $2)",
            &[
                text(&format!("resource:{r}")),
                text(&format!("profile {s}")),
            ],
        )
        .unwrap();
        w.add("mem_working_memory", 1);
        db.query(
            "SELECT om_configure($1, '{\"observation_threshold\":100}')",
            &[text(&format!("thread:{r}-t0"))],
        )
        .unwrap();
        w.add("mem_om_records", 1);

        // Its own task, linked to two of its messages; a task shared with the previous
        // resource (it must survive, without the links to the forgotten messages).
        let task = format!("task-{r}");
        db.query(
            "SELECT task_create($1, $2)",
            &[
                text(&format!("fix the {s} bug")),
                text(&format!(r#"{{"id":"{task}"}}"#)),
            ],
        )
        .unwrap();
        w.add("mem_tasks", 1);
        for mid in message_ids.iter().take(2) {
            db.query("SELECT task_link($1, $2)", &[text(&task), text(mid)])
                .unwrap();
            w.add("mem_task_messages", 1);
        }
        if ri > 0 {
            let shared = format!("task-shared-{r}");
            db.query(
                "SELECT task_create('shared work', $1)",
                &[text(&format!(r#"{{"id":"{shared}"}}"#))],
            )
            .unwrap();
            for mid in [&first_messages[ri - 1], &message_ids[0]] {
                db.query("SELECT task_link($1, $2)", &[text(&shared), text(mid)])
                    .unwrap();
            }
            out.get_mut(RESOURCES[ri - 1])
                .unwrap()
                .add("mem_task_messages", 1);
            out.get_mut(r).unwrap().add("mem_task_messages", 1);
        }
        first_messages.push(message_ids[0].clone());
        let w = out.get_mut(r).unwrap();

        // Memories, one with a vector; a message with a vector.
        for k in 0..3 {
            let memory = format!(
                r#"{{"type":"gotcha","content":"remember {s} number {k} before deploying"}}"#
            );
            let id = one(
                db,
                "SELECT mem_remember($1, $2) ->> 'id'",
                &[text(r), text(&memory)],
            );
            w.add("mem_memories", 1);
            if k == 0 {
                db.query(
                    "SELECT mem_embed_set('memory', $1, 'm', mem_vector('[0.1, 0.2, 0.3]'))",
                    &[text(&id)],
                )
                .unwrap();
                w.add("mem_embeddings", 1);
            }
        }
        db.query(
            "SELECT mem_embed_set('message', $1, 'm', mem_vector('[0.3, 0.2, 0.1]'))",
            &[text(&message_ids[1])],
        )
        .unwrap();
        w.add("mem_embeddings", 1);

        // A chain of files: edges and their closure.
        let mut nodes = Vec::new();
        for f in 0..4 {
            let node =
                format!(r#"{{"type":"file","label":"{s}{f}.ts","file_path":"src/{s}{f}.ts"}}"#);
            nodes.push(one(
                db,
                "SELECT graph_node_upsert($1, $2)",
                &[text(r), text(&node)],
            ));
            w.add("mem_graph_nodes", 1);
        }
        for pair in nodes.windows(2) {
            db.query(
                "SELECT graph_edge_add($1, $2, 'imports')",
                &[text(&pair[0]), text(&pair[1])],
            )
            .unwrap();
            w.add("mem_graph_edges", 1);
        }
    }
    out
}

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
        "SELECT ancestor_id || '>' || descendant_id FROM mem_graph_closure WHERE resource_id <> $1 ORDER BY 1",
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
