//! Plain SQL that only SQLite accepts: `INSERT OR REPLACE`, values of any storage class in
//! any column, trigger functions called by hand, invalid UTF-8 handed to the tools. Each must
//! keep the counters, the blocked state and the search index exact, or be refused.

use agentmem_tests::backend::Sqlite;

fn one<T: rusqlite::types::FromSql>(db: &Sqlite, sql: &str) -> T {
    db.conn
        .query_row(sql, [], |r| r.get(0))
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn error_of(db: &Sqlite, sql: &str) -> String {
    match db.conn.execute_batch(sql) {
        Ok(()) => panic!("expected an error from {sql}"),
        Err(e) => e.to_string(),
    }
}

/// The thread's counters against its messages, and the index against the table.
fn assert_exact(db: &Sqlite) {
    let problems: i64 = one(db, "SELECT count(*) FROM mem_index_check()");
    assert_eq!(problems, 0, "mem_index_check");
    let wrong: i64 = one(
        db,
        "SELECT count(*) FROM mem_threads t WHERE message_count <> (SELECT count(*) FROM mem_messages m WHERE m.thread_id = t.id) \
         OR token_count <> (SELECT coalesce(sum(token_count), 0) FROM mem_messages m WHERE m.thread_id = t.id) \
         OR next_message_index <= (SELECT coalesce(max(message_index), -1) FROM mem_messages m WHERE m.thread_id = t.id)",
    );
    assert_eq!(wrong, 0, "thread counters");
}

fn thread(db: &Sqlite) -> String {
    one(db, "SELECT mem_thread_create('r')")
}

#[test]
fn insert_or_replace_of_a_message_books_it_once() {
    let db = Sqlite::open(":memory:");
    let t = thread(&db);
    db.conn
        .execute_batch(&format!(
            "INSERT INTO mem_messages (id, thread_id, role, raw_content) VALUES ('m1', '{t}', 'user', 'first text');
             INSERT INTO mem_messages (id, thread_id, role, raw_content) VALUES ('m2', '{t}', 'user', 'second text');"
        ))
        .unwrap();
    // Conflict on id (a new seq), on seq (the same one), and on (thread_id, message_index).
    db.conn
        .execute_batch(&format!(
            "REPLACE INTO mem_messages (id, thread_id, role, raw_content) VALUES ('m1', '{t}', 'user', 'replaced by id, longer now');
             INSERT OR REPLACE INTO mem_messages (seq, id, thread_id, role, raw_content) VALUES ((SELECT seq FROM mem_messages WHERE id = 'm2'), 'm2', '{t}', 'user', 'replaced in place');
             INSERT OR REPLACE INTO mem_messages (id, thread_id, role, raw_content, message_index) VALUES ('m3', '{t}', 'user', 'took the place of m1', (SELECT message_index FROM mem_messages WHERE id = 'm1'));"
        ))
        .unwrap();
    assert_exact(&db);
    let n: i64 = one(&db, "SELECT message_count FROM mem_threads");
    assert_eq!(n, 2);
    let hits: i64 = one(&db, "SELECT count(*) FROM mem_search('first')");
    assert_eq!(hits, 0, "the replaced text is out of the index");
    let hits: i64 = one(&db, "SELECT count(*) FROM mem_search('replaced')");
    assert_eq!(hits, 1, "m1's second text went with m1");
    // An ignored conflict changes nothing, and a later plain insert is booked normally.
    db.conn
        .execute_batch(&format!(
            "INSERT OR IGNORE INTO mem_messages (id, thread_id, role, raw_content, message_index) VALUES ('m9', '{t}', 'user', 'ignored', (SELECT message_index FROM mem_messages WHERE id = 'm3'));
             INSERT INTO mem_messages (id, thread_id, role, raw_content) VALUES ('m9', '{t}', 'user', 'kept');
             DELETE FROM mem_messages WHERE id = 'm3';"
        ))
        .unwrap();
    assert_exact(&db);
    let n: i64 = one(&db, "SELECT message_count FROM mem_threads");
    assert_eq!(n, 2);
}

#[test]
fn insert_or_replace_of_a_thread_keeps_its_counters() {
    for fk in ["OFF", "ON"] {
        let db = Sqlite::open(":memory:");
        db.conn
            .execute_batch(&format!("PRAGMA foreign_keys = {fk}"))
            .unwrap();
        let t = thread(&db);
        db.conn
            .execute_batch(&format!(
                "SELECT mem_message_add('{t}', 'user', 'one two');
                 SELECT mem_message_add('{t}', 'user', 'three');
                 REPLACE INTO mem_threads (id, resource_id, title) VALUES ('{t}', 'r', 'again');"
            ))
            .unwrap();
        assert_exact(&db);
        db.conn
            .execute_batch(&format!("SELECT mem_message_add('{t}', 'user', 'four');"))
            .unwrap();
        assert_exact(&db);
    }
}

#[test]
fn storage_classes_are_checked() {
    let db = Sqlite::open(":memory:");
    let t = thread(&db);
    let e = error_of(
        &db,
        &format!("INSERT INTO mem_messages (thread_id, role, raw_content, created_at) VALUES ('{t}', 'user', 'x', 'yesterday')"),
    );
    assert!(
        e.contains("mem_messages.created_at: must be an integer"),
        "{e}"
    );
    let e = error_of(
        &db,
        &format!("INSERT INTO mem_messages (thread_id, role, raw_content) VALUES ('{t}', 'user', x'00ff')"),
    );
    assert!(e.contains("mem_messages.raw_content: must be text"), "{e}");
    db.conn
        .execute_batch(&format!(
            "SELECT mem_message_add('{t}', 'user', 'fine', '{{\"id\":\"m1\"}}')"
        ))
        .unwrap();
    let e = error_of(
        &db,
        "UPDATE mem_messages SET created_at = 'later' WHERE id = 'm1'",
    );
    assert!(
        e.contains("mem_messages.created_at: must be an integer"),
        "{e}"
    );
    let e = error_of(
        &db,
        "UPDATE mem_messages SET metadata = 'not json' WHERE id = 'm1'",
    );
    assert!(
        e.contains("mem_messages.metadata: must be a JSON object"),
        "{e}"
    );
    let e = error_of(
        &db,
        "INSERT INTO mem_tasks (title, created_at) VALUES ('t', 1.5)",
    );
    assert!(
        e.contains("mem_tasks.created_at: must be an integer"),
        "{e}"
    );
    let e = error_of(
        &db,
        "INSERT INTO mem_threads (resource_id, metadata) VALUES ('r', '[]')",
    );
    assert!(
        e.contains("mem_threads.metadata: must be a JSON object"),
        "{e}"
    );
    assert_exact(&db);
}

#[test]
fn trigger_functions_called_by_hand_change_nothing() {
    let db = Sqlite::open(":memory:");
    let t = thread(&db);
    db.conn
        .execute_batch(&format!(
            "SELECT task_create('A', '{{\"id\":\"a\"}}');
             SELECT task_create('B', '{{\"id\":\"b\"}}');
             SELECT task_create('C', '{{\"id\":\"c\"}}');
             SELECT task_dep_add('b', 'a');
             SELECT task_dep_add('c', 'b', 'parent-child');
             SELECT mem_message_add('{t}', 'user', 'hello world', '{{\"id\":\"m1\"}}');"
        ))
        .unwrap();
    let state = |db: &Sqlite| -> Vec<(String, i64, i64, i64)> {
        let mut st = db
            .conn
            .prepare(
                "SELECT id, is_blocked, open_blockers, blocked_parents FROM mem_tasks ORDER BY id",
            )
            .unwrap();
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let before = state(&db);
    assert_eq!(before[1], ("b".into(), 1, 1, 0));
    assert_eq!(before[2], ("c".into(), 1, 0, 1));
    for sql in [
        "SELECT mem__task_dep_insert(seq) FROM mem_task_deps",
        "SELECT mem__task_dep_delete(task_id) FROM mem_task_deps",
        "SELECT mem__task_status(seq) FROM mem_tasks",
        "SELECT mem__task_insert(seq) FROM mem_tasks",
        "SELECT mem__message_insert(seq, id) FROM mem_messages",
        "SELECT mem__message_update(seq, token_count, raw_content, search_text, created_at) \
         FROM mem_messages",
        "SELECT mem__thread_recount(id) FROM mem_threads",
        "SELECT mem__message_conflicts(seq, id, thread_id, message_index) FROM mem_messages",
    ] {
        db.conn
            .execute_batch(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        assert_eq!(state(&db), before, "{sql}");
        assert_exact(&db);
    }
    // A row handed in by hand that the table does not hold is refused: the handler reads
    // the row it completes from the table, never from what it was handed.
    let e = error_of(
        &db,
        "INSERT INTO mem__message_inserted (seq, id) VALUES (999, 'm999')",
    );
    assert!(e.contains("not found"), "{e}");
    assert_eq!(state(&db), before);
    assert_exact(&db);
    for sql in [
        "SELECT mem__task_delete(seq, id, title, description, summary, resource_id) FROM mem_tasks",
        "SELECT mem__message_delete(seq, thread_id, token_count, search_text, raw_content, resource_id) \
         FROM mem_messages",
    ] {
        let e = error_of(&db, sql);
        assert!(e.contains("still exists"), "{sql}: {e}");
        assert_eq!(state(&db), before, "{sql}");
        assert_exact(&db);
    }
    // A deleted row's handler, called again, finds nothing left to take off.
    db.conn
        .execute_batch("DELETE FROM mem_messages WHERE id = 'm1'")
        .unwrap();
    db.conn
        .execute_batch(&format!(
            "SELECT mem__message_delete(1, '{t}', 2, NULL, NULL, NULL)"
        ))
        .unwrap();
    assert_exact(&db);
    let ready: String = one(&db, "SELECT group_concat(id) FROM task_ready()");
    assert_eq!(ready, "a");
}

#[test]
fn tools_answer_invalid_utf8_with_json() {
    let db = Sqlite::open(":memory:");
    for f in ["memory_search", "task_query", "task_mutate"] {
        let out: String = one(&db, &format!("SELECT {f}(x'7b2261ff')"));
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["success"], false, "{f}: {out}");
        assert_eq!(v["error"], "input must be valid UTF-8 text", "{f}: {out}");
    }
    let out: String = one(&db, "SELECT task_query('{\"action\":\"ready\"}', x'ff')");
    assert!(out.contains("context must be valid UTF-8 text"), "{out}");
}

/// A user's trigger on `mem_threads` that adds a message to another thread runs inside the
/// counter update of the message that fired it: each booking keeps the thread row its own
/// update read.
#[test]
fn a_message_added_by_a_trigger_of_the_counter_update_books_both() {
    let db = Sqlite::open(":memory:");
    let outer = thread(&db);
    let inner = thread(&db);
    db.conn
        .execute_batch(&format!(
            "CREATE TRIGGER nest AFTER UPDATE OF message_count ON mem_threads \
             WHEN NEW.id = '{outer}' BEGIN SELECT mem_message_add('{inner}', 'user', 'inner'); END"
        ))
        .unwrap();
    let _: String = one(
        &db,
        &format!("SELECT mem_message_add('{outer}', 'user', 'outer')"),
    );
    for (t, text) in [(&outer, "outer"), (&inner, "inner")] {
        let found: String = one(
            &db,
            &format!("SELECT raw_content FROM mem_messages WHERE thread_id = '{t}'"),
        );
        assert_eq!(found, text);
    }
    assert_exact(&db);
}
