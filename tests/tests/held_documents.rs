//! A transaction's new messages keep their search documents in memory until it commits
//! (core `search::held`), and Postgres books a statement's rows when it ends. The conformance
//! cases (230_transactions) hold both backends to the same answers inside and after
//! transactions; these tests cover what only one backend can show, and the bounds:
//!
//! * a transaction that holds more than its bound writes on its way, and what it wrote is
//!   undone with a savepoint rolled back around it;
//! * a statement of thousands of rows, and a transaction of thousands of statements, leave the
//!   index and the counters exact;
//! * Postgres holds nothing while the deferred trigger that writes held documents is disabled
//!   (its commit check refuses to lose what a transaction holds).

use agentmem_tests::backend::{Backend, Postgres, Sqlite};
use agentmem_tests::invariants::check;
use agentmem_tests::sample::{one, text};

fn thread(db: &mut dyn Backend) -> String {
    one(db, "SELECT mem_thread_create('r1')", &[])
}

fn count(db: &mut dyn Backend, sql: &str) -> i64 {
    one(db, sql, &[]).parse().unwrap()
}

/// A long message: about 3 KiB of analysed terms (its positions), so that 1 500 of them pass
/// the 4 MiB a transaction holds before it writes.
fn long(i: usize) -> String {
    format!("bulk{i} ") + &"lorem ipsum dolor sit amet consectetur ".repeat(500)
}

/// How many documents the connection holds, from `mem_index_stats()`.
fn held(db: &mut dyn Backend) -> i64 {
    let sql = if db.name() == "postgres" {
        "SELECT (mem_index_stats()::jsonb -> 'msg' ->> 'held')::bigint"
    } else {
        "SELECT json_extract(mem_index_stats(), '$.msg.held')"
    };
    count(db, sql)
}

fn bulk(db: &mut dyn Backend) {
    let t = thread(db);
    db.query("BEGIN", &[]).unwrap();
    // Many statements of one row, then one statement of many rows.
    for i in 0..1500 {
        db.query(
            "INSERT INTO mem_messages (thread_id, role, raw_content) VALUES ($1, 'user', $2)",
            &[text(&t), text(&long(i))],
        )
        .unwrap();
    }
    let values: Vec<String> = (0..1500)
        .map(|i| format!("($1, 'tool', 'row{i} of one statement')"))
        .collect();
    db.query(
        &format!(
            "INSERT INTO mem_messages (thread_id, role, raw_content) VALUES {}",
            values.join(", ")
        ),
        &[text(&t)],
    )
    .unwrap();
    // Held documents beyond the bound were written before the commit; the rest with it.
    let holding = held(db);
    assert!(holding > 0 && holding < 3000, "holds {holding}");
    assert_eq!(count(db, "SELECT count(*) FROM mem_search('bulk1499')"), 1);
    db.query("SAVEPOINT late", &[]).unwrap();
    for i in 0..1500 {
        db.query(
            "INSERT INTO mem_messages (thread_id, role, raw_content) VALUES ($1, 'user', $2)",
            &[text(&t), text(&format!("undone{i} {}", long(i)))],
        )
        .unwrap();
    }
    assert_eq!(
        count(db, "SELECT count(*) FROM mem_search('undone1499')"),
        1
    );
    // Inside the savepoint, what the savepoint held past the bound was written too.
    assert!(held(db) < holding + 1500, "holds {}", held(db));
    db.query("ROLLBACK TO SAVEPOINT late", &[]).unwrap();
    assert_eq!(held(db), holding);
    assert_eq!(count(db, "SELECT count(*) FROM mem_search('undone7')"), 0);
    db.query("COMMIT", &[]).unwrap();
    assert_eq!(count(db, "SELECT count(*) FROM mem_search('undone7')"), 0);
    assert_eq!(count(db, "SELECT count(*) FROM mem_search('bulk7')"), 1);
    assert_eq!(count(db, "SELECT count(*) FROM mem_search('row1499')"), 1);
    assert_eq!(count(db, "SELECT count(*) FROM mem_messages"), 3000);
    assert_eq!(
        one(
            db,
            "SELECT message_count || ' ' || next_message_index FROM mem_threads",
            &[]
        ),
        "3000 3000"
    );
    check(db, "bulk");
}

/// A database of the test's own on the test server, with the extension.
fn postgres(name: &str) -> Option<(Postgres, String, String)> {
    let server = agentmem_tests::pg_url()?;
    let url = agentmem_tests::pg_database(&server, name);
    let mut db = Postgres::connect(&url);
    db.reset().unwrap();
    Some((db, server, name.to_owned()))
}

#[test]
fn bulk_transactions_on_sqlite() {
    let mut db = Sqlite::open(":memory:");
    bulk(&mut db);
}

#[test]
fn bulk_transactions_on_postgres() {
    let Some((mut db, server, name)) = postgres("agentmem_held_bulk") else {
        return;
    };
    bulk(&mut db);
    drop(db);
    agentmem_tests::pg_drop_database(&server, &name);
}

#[test]
fn postgres_holds_nothing_without_the_deferred_trigger() {
    let Some((mut db, server, name)) = postgres("agentmem_held_trigger") else {
        return;
    };
    let t = thread(&mut db);
    let held = "SELECT (mem_index_stats()::jsonb -> 'msg' ->> 'held')::bigint";
    db.query("BEGIN", &[]).unwrap();
    db.query(
        "INSERT INTO mem_messages (thread_id, role, raw_content) VALUES ($1, 'user', 'oscar papa')",
        &[text(&t)],
    )
    .unwrap();
    assert_eq!(count(&mut db, held), 1);
    db.query("COMMIT", &[]).unwrap();
    // Disabled (by hand, or by a restore): each row goes straight to the index's tables.
    db.query(
        "ALTER TABLE mem_messages DISABLE TRIGGER mem__message_held_trg",
        &[],
    )
    .unwrap();
    db.query("BEGIN", &[]).unwrap();
    db.query(
        "INSERT INTO mem_messages (thread_id, role, raw_content) VALUES ($1, 'user', 'quebec romeo')",
        &[text(&t)],
    )
    .unwrap();
    assert_eq!(count(&mut db, held), 0);
    assert_eq!(
        count(&mut db, "SELECT count(*) FROM mem_search('quebec')"),
        1
    );
    db.query("COMMIT", &[]).unwrap();
    db.query(
        "ALTER TABLE mem_messages ENABLE TRIGGER mem__message_held_trg",
        &[],
    )
    .unwrap();
    assert_eq!(
        count(&mut db, "SELECT count(*) FROM mem_search('oscar quebec')"),
        2
    );
    check(&mut db, "disabled trigger");
    drop(db);
    agentmem_tests::pg_drop_database(&server, &name);
}
