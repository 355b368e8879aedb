//! A database made by an older schema version is migrated in place, data intact.

use agentmem_tests::backend::{Backend, Param, Postgres, Sqlite};

/// Writes with plain SQL at schema version 1, then migrates to the latest.
fn upgrade_from_v1(
    db: &mut dyn Backend,
    migrate_to: &dyn Fn(&mut dyn Backend, Option<i64>) -> i64,
) {
    assert_eq!(migrate_to(db, Some(1)), 1);
    db.query(
        "INSERT INTO mem_threads (id, resource_id, title) VALUES ('t-old', 'r', 'before upgrade')",
        &[],
    )
    .unwrap();
    db.query(
        "INSERT INTO mem_messages (thread_id, role, raw_content) VALUES ('t-old', 'user', 'written at v1')",
        &[],
    )
    .unwrap();
    assert!(
        db.query("SELECT state FROM mem_threads", &[]).is_err(),
        "v1 has no thread state"
    );
    assert_eq!(migrate_to(db, None), agentmem_core_latest());
    let rows = db
        .query(
            "SELECT t.state, t.message_count, m.message_index, m.token_count FROM mem_threads t \
             JOIN mem_messages m ON m.thread_id = t.id WHERE t.id = $1",
            &[Param::Text("t-old".into())],
        )
        .unwrap();
    assert_eq!(rows.len(), 1);
    let cells: Vec<String> = rows[0].iter().map(|c| c.to_string()).collect();
    assert_eq!(cells, ["active", "1", "0", "4"]);
    // Migrating again is a no-op.
    assert_eq!(migrate_to(db, None), agentmem_core_latest());
}

fn agentmem_core_latest() -> i64 {
    agentmem_core::schema::latest_version()
}

#[test]
fn sqlite_upgrades_from_v1() {
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    agentmem_tests::backend::load(&conn);
    let mut db = Sqlite { conn };
    upgrade_from_v1(&mut db, &|db, v| {
        let rows = match v {
            Some(v) => db.query("SELECT mem_init($1)", &[Param::Int(v)]),
            None => db.query("SELECT mem_init()", &[]),
        };
        rows.unwrap()[0][0].to_string().parse().unwrap()
    });
}

#[test]
fn sqlite_refuses_a_newer_schema() {
    let db = Sqlite::open(":memory:");
    db.conn
        .execute(
            "INSERT INTO mem_schema_version VALUES (99, 'future', 0)",
            [],
        )
        .unwrap();
    let e = db
        .conn
        .query_row("SELECT mem_init()", [], |_| Ok(()))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("database schema version 99 is newer than this agentmem"),
        "{e}"
    );
}

#[test]
fn postgres_upgrades_from_v1() {
    let Some(url) = agentmem_tests::pg_url() else {
        return;
    };
    let mut db = Postgres::connect(&url);
    // A schema of its own, migrated by the same function the extension's scripts use.
    db.client
        .batch_execute(
            "CREATE EXTENSION IF NOT EXISTS agentmem; DROP SCHEMA IF EXISTS upgrade_test CASCADE; \
             CREATE SCHEMA upgrade_test; SET search_path = upgrade_test, public",
        )
        .unwrap();
    upgrade_from_v1(&mut db, &|db, v| {
        let rows = match v {
            Some(v) => db.query("SELECT public.mem__migrate($1)", &[Param::Int(v)]),
            None => db.query("SELECT public.mem__migrate(NULL)", &[]),
        };
        rows.unwrap()[0][0].to_string().parse().unwrap()
    });
    db.client
        .batch_execute("SET search_path = public; DROP SCHEMA upgrade_test CASCADE")
        .unwrap();
}
