//! A database made by an older schema version is migrated in place, data intact.

use agentmem_core::schema::{render, MIGRATIONS};
use agentmem_core::Dialect;
use agentmem_tests::backend::{Backend, Param, Postgres, Sqlite};

/// Builds a version-1 database as version 1 of agentmem left it, then migrates to the latest.
///
/// The message row is written complete with the insert trigger set aside: this build's
/// trigger handler is today's (it indexes for search), and a v1 database never ran it.
fn upgrade_from_v1(
    db: &mut dyn Backend,
    migrate_to: &dyn Fn(&mut dyn Backend, Option<i64>) -> i64,
    dialect: Dialect,
) {
    assert_eq!(migrate_to(db, Some(1)), 1);
    db.query(
        "INSERT INTO mem_threads (id, resource_id, title) VALUES ('t-old', 'r', 'before upgrade')",
        &[],
    )
    .unwrap();
    let drop = match dialect {
        Dialect::Sqlite => "DROP TRIGGER mem__message_insert_trg",
        Dialect::Postgres => "DROP TRIGGER mem__message_insert_trg ON mem_messages",
    };
    db.query(drop, &[]).unwrap();
    db.query(
        "INSERT INTO mem_messages (id, thread_id, resource_id, role, raw_content, search_text, injection_text, \
         message_index, token_count) VALUES ('m-old', 't-old', 'r', 'user', 'written at v1 about LoginSchema', \
         'written at v1 about LoginSchema', 'written at v1 about LoginSchema', 0, 7)",
        &[],
    )
    .unwrap();
    db.query(
        "UPDATE mem_threads SET next_message_index = 1, message_count = 1, token_count = 7",
        &[],
    )
    .unwrap();
    let v1 = render(MIGRATIONS[0].script, dialect);
    let trigger = v1
        .lines()
        .find(|l| l.contains("CREATE TRIGGER mem__message_insert_trg"))
        .unwrap();
    db.query(trigger, &[]).unwrap();
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
    assert_eq!(cells, ["active", "1", "0", "7"]);
    // The search index created by migration 3 holds the message written before it existed.
    let hits = db
        .query("SELECT message_id FROM mem_search('LoginSchema')", &[])
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert!(db
        .query("SELECT * FROM mem_index_check()", &[])
        .unwrap()
        .is_empty());
    // And writing after the upgrade works as usual.
    db.query(
        "INSERT INTO mem_messages (thread_id, role, raw_content) VALUES ('t-old', 'user', 'after')",
        &[],
    )
    .unwrap();
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
    upgrade_from_v1(
        &mut db,
        &|db, v| {
            let rows = match v {
                Some(v) => db.query("SELECT mem_init($1)", &[Param::Int(v)]),
                None => db.query("SELECT mem_init()", &[]),
            };
            rows.unwrap()[0][0].to_string().parse().unwrap()
        },
        Dialect::Sqlite,
    );
}

/// The texts of the tables, indexes and triggers in `sqlite_schema`, by name.
fn table_texts(conn: &rusqlite::Connection) -> Vec<(String, String)> {
    let mut st = conn
        .prepare("SELECT name, sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY name")
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Migration 31 rewrites the CHECK lists of the tables in place (schema/in_lists.rs): from
/// version 30 or from nothing, on a connection in defensive mode (better-sqlite3's default)
/// or not, the schema ends as a fresh database's, every connection enforces the new texts, and
/// the connection's defensive setting is what it was.
#[test]
fn sqlite_check_lists_are_rewritten_on_every_connection() {
    use rusqlite::config::DbConfig::SQLITE_DBCONFIG_DEFENSIVE as DEFENSIVE;
    let dir = std::env::temp_dir().join(format!("agentmem-check-lists-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let open = |name: &str, defensive: bool| {
        let conn = rusqlite::Connection::open(dir.join(name)).unwrap();
        conn.set_db_config(DEFENSIVE, defensive).unwrap();
        agentmem_tests::backend::load(&conn);
        conn
    };
    let init = |conn: &rusqlite::Connection, v: Option<i64>| -> i64 {
        conn.query_row("SELECT mem_init(?1)", [v], |r| r.get(0))
            .unwrap()
    };
    let fresh = open("fresh.db", false);
    init(&fresh, None);
    let expected = table_texts(&fresh);
    let messages = &expected
        .iter()
        .find(|(n, _)| n == "mem_messages")
        .unwrap()
        .1;
    assert!(
        messages
            .contains("(role = 'user' OR role = 'assistant' OR role = 'system' OR role = 'tool')"),
        "{messages}"
    );
    for (name, from, defensive) in [
        ("v30.db", Some(30), false),
        ("v30-defensive.db", Some(30), true),
        ("new-defensive.db", None, true),
    ] {
        let conn = open(name, defensive);
        let other = open(name, false);
        // A table of the user's is not agentmem's to edit, whatever its name.
        let mine = "CREATE TABLE mem_mine (k TEXT CHECK (k IN ('a', 'b', 'c')))";
        conn.execute(mine, []).unwrap();
        if let Some(v) = from {
            assert_eq!(init(&conn, Some(v)), v);
            assert_ne!(
                table_texts(&conn),
                expected,
                "{name}: version 30 has the lists"
            );
            // A second connection that has read the old texts must read the new ones.
            assert_eq!(init(&other, Some(v)), v);
        }
        assert_eq!(init(&conn, None), agentmem_core::schema::latest_version());
        let mut texts = table_texts(&conn);
        let at = texts.iter().position(|(n, _)| n == "mem_mine").unwrap();
        assert_eq!(texts.remove(at).1, mine, "{name}");
        assert_eq!(texts, expected, "{name}");
        assert_eq!(conn.db_config(DEFENSIVE).unwrap(), defensive, "{name}");
        let writable: i64 = conn
            .query_row("PRAGMA writable_schema", [], |r| r.get(0))
            .unwrap();
        assert_eq!(writable, 0, "{name}");
        let check: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok", "{name}");
        let thread: String = conn
            .query_row("SELECT mem_thread_create('r')", [], |r| r.get(0))
            .unwrap();
        for c in [&conn, &other] {
            let e = c
                .execute(
                    "INSERT INTO mem_messages (thread_id, role, raw_content) VALUES (?1, 'bot', 'x')",
                    [&thread],
                )
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("role = 'user' OR role = 'assistant'"),
                "{name}: {e}"
            );
            c.execute(
                "INSERT INTO mem_messages (thread_id, role, raw_content) VALUES (?1, 'tool', 'x')",
                [&thread],
            )
            .unwrap();
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
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
    // A database of its own: the extension's functions find their tables in its schema, so
    // what the install's migrations made there and in the private schema (tables, and SQL
    // functions) is taken out of the extension and dropped, and the migrations run there
    // again from version 1, in the session's search path (an install never runs like this;
    // `extension_upgrade.rs` tests the real update route).
    let mut db = Postgres::connect(&agentmem_tests::pg_database(&url, "agentmem_upgrade_v1"));
    db.client
        .batch_execute(&format!(
            "CREATE EXTENSION agentmem; \
             DO $$DECLARE r record; BEGIN \
               FOR r IN SELECT c.oid::regclass AS name, c.relkind FROM pg_depend d \
                 JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'agentmem' \
                 JOIN pg_class c ON c.oid = d.objid \
                 WHERE d.classid = 'pg_class'::regclass AND d.deptype = 'e' \
               LOOP EXECUTE format('ALTER EXTENSION agentmem DROP %s %s', \
                 CASE r.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW' ELSE 'TABLE' END, \
                 r.name); END LOOP; END$$; \
             DO $$DECLARE t record; BEGIN \
               FOR t IN SELECT schemaname, tablename FROM pg_tables \
                 WHERE schemaname IN ('public', '{}') \
               LOOP EXECUTE format('DROP TABLE IF EXISTS %I.%I CASCADE', t.schemaname, \
                 t.tablename); END LOOP; END$$; \
             DO $$DECLARE f regprocedure; BEGIN \
               FOR f IN SELECT p.oid::regprocedure FROM pg_depend d \
                 JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'agentmem' \
                 JOIN pg_proc p ON p.oid = d.objid \
                 JOIN pg_language l ON l.oid = p.prolang AND l.lanname <> 'c' \
                 WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e' \
               LOOP EXECUTE format('ALTER EXTENSION agentmem DROP FUNCTION %s', f); \
                 EXECUTE format('DROP FUNCTION %s CASCADE', f); END LOOP; END$$; \
             ALTER FUNCTION mem__migrate(bigint) RESET search_path",
            agentmem_core::schema::PRIVATE_SCHEMA
        ))
        .unwrap();
    upgrade_from_v1(
        &mut db,
        &|db, v| {
            let rows = match v {
                Some(v) => db.query("SELECT public.mem__migrate($1)", &[Param::Int(v)]),
                None => db.query("SELECT public.mem__migrate(NULL)", &[]),
            };
            rows.unwrap()[0][0].to_string().parse().unwrap()
        },
        Dialect::Postgres,
    );
    drop(db);
    agentmem_tests::pg_drop_database(&url, "agentmem_upgrade_v1");
}
