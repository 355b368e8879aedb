//! Inputs only SQLite can carry: blobs passed as text and text with NUL characters.

use agentmem_tests::backend::Sqlite;

fn error_of(db: &Sqlite, sql: &str) -> String {
    db.conn
        .query_row(sql, [], |_| Ok(()))
        .unwrap_err()
        .to_string()
}

#[test]
fn invalid_utf8_blob_is_named() {
    let db = Sqlite::open(":memory:");
    let t: String = db
        .conn
        .query_row("SELECT mem_thread_create('r')", [], |r| r.get(0))
        .unwrap();
    let e = error_of(
        &db,
        &format!("SELECT mem_message_add('{t}', 'user', x'ff00')"),
    );
    assert!(e.contains("content: must be valid UTF-8 text"), "{e}");
    let e = error_of(&db, "SELECT mem_tokens(x'c328')");
    assert!(e.contains("text: must be valid UTF-8 text"), "{e}");
    // A valid UTF-8 blob is taken as its text.
    let n: i64 = db
        .conn
        .query_row("SELECT mem_tokens(CAST('hello world' AS BLOB))", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(n, 2);
}

#[test]
fn nul_characters_are_refused() {
    let db = Sqlite::open(":memory:");
    let t: String = db
        .conn
        .query_row("SELECT mem_thread_create('r')", [], |r| r.get(0))
        .unwrap();
    let e = error_of(
        &db,
        &format!("SELECT mem_message_add('{t}', 'user', 'a' || char(0) || 'b')"),
    );
    assert!(
        e.contains("content: contains U+0000 (NUL) at character 1"),
        "{e}"
    );
    let e = error_of(&db, "SELECT mem_thread_create('r' || char(0))");
    assert!(
        e.contains("resource_id: contains U+0000 (NUL) at character 1"),
        "{e}"
    );
    // Plain SQL: the column and the character (or, in JSON, the path) are named.
    let plain = |sql: String| db.conn.execute(&sql, []).unwrap_err().to_string();
    let e = plain(format!(
        "INSERT INTO mem_messages (thread_id, role, raw_content) VALUES ('{t}', 'user', 'ab' || char(0))"
    ));
    assert!(
        e.contains("mem_messages.raw_content: contains U+0000 (NUL) at character 2"),
        "{e}"
    );
    let e = plain(format!(
        "UPDATE mem_threads SET metadata = '{{\"a\":[\"x\\u0000\"]}}' WHERE id = '{t}'"
    ));
    assert!(
        e.contains("mem_threads.metadata.a[0]: contains U+0000 (NUL) at character 1"),
        "{e}"
    );
    // An escaped backslash before `u0000` is six characters of text, not a NUL.
    db.conn
        .execute(
            &format!(
                "UPDATE mem_threads SET metadata = '{{\"a\":\"\\\\u0000\"}}' WHERE id = '{t}'"
            ),
            [],
        )
        .unwrap();
}

#[test]
fn wrong_arity_names_the_signature() {
    let db = Sqlite::open(":memory:");
    let e = error_of(&db, "SELECT mem_message_add('t')");
    assert!(
        e.contains(
            "mem_message_add(thread_id, role, content [, options]): takes 3 to 4 arguments, got 1"
        ),
        "{e}"
    );
}

#[test]
fn calls_before_mem_init_say_how_to_initialise() {
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    agentmem_tests::backend::load(&conn);
    for sql in [
        "SELECT count(*) FROM mem_search('login')",
        "SELECT mem_thread_create('r')",
        "SELECT task_create('write the parser')",
        "SELECT mem_stats()",
    ] {
        let e = conn.query_row(sql, [], |_| Ok(())).unwrap_err().to_string();
        assert!(
            e.contains("agentmem schema not initialised: run SELECT mem_init()"),
            "{sql}: {e}"
        );
    }
    // Once initialised, the same calls work.
    conn.query_row("SELECT mem_init()", [], |_| Ok(())).unwrap();
    conn.query_row("SELECT mem_thread_create('r')", [], |_| Ok(()))
        .unwrap();
}
