//! Long calls can be cancelled the host's way: `sqlite3_interrupt` and progress handlers in
//! SQLite, `statement_timeout` and `pg_cancel_backend` in Postgres. A cancelled call leaves
//! the index as it was (the statement rolls back), and hostile queries are fast to begin with.

use agentmem_tests::backend::Sqlite;
use std::time::{Duration, Instant};

const MESSAGES: i64 = 8000;

/// `MESSAGES` messages in one thread, written in one statement.
fn fill() -> String {
    format!(
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < {MESSAGES}) \
         INSERT INTO mem_messages (thread_id, role, raw_content) \
         SELECT (SELECT id FROM mem_threads), 'user', 'message ' || n || ' ka ka about caching and the login flow ka' FROM c"
    )
}

fn sqlite_filled() -> Sqlite {
    let db = Sqlite::open(":memory:");
    db.conn
        .query_row("SELECT mem_thread_create('r')", [], |_| Ok(()))
        .unwrap();
    db.conn.execute(&fill(), []).unwrap();
    db
}

fn hostile_phrase() -> String {
    format!("\"{}\"", "ka ".repeat(6000))
}

#[test]
fn sqlite_hostile_phrase_is_fast() {
    let db = sqlite_filled();
    let t = Instant::now();
    let n: i64 = db
        .conn
        .query_row(
            "SELECT count(*) FROM mem_search(?1)",
            [hostile_phrase()],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 0);
    // Not a timing assertion on the engine (work is bounded in the core's tests); a guard
    // against the old minutes-long stall in this real host.
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
}

#[test]
fn sqlite_interrupt_stops_a_reindex() {
    let db = sqlite_filled();
    let handle = db.conn.get_interrupt_handle();
    let stop = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        handle.interrupt();
    });
    let e = db
        .conn
        .query_row("SELECT mem_reindex()", [], |r| r.get::<_, i64>(0))
        .unwrap_err()
        .to_string();
    stop.join().unwrap();
    assert!(e.contains("interrupt"), "{e}");
    assert!(
        db.conn.is_autocommit(),
        "the interrupted call left its transaction open"
    );
    let problems: i64 = db
        .conn
        .query_row("SELECT count(*) FROM mem_index_check()", [], |r| r.get(0))
        .unwrap();
    assert_eq!(problems, 0);
}

#[test]
fn sqlite_progress_handler_stops_a_search() {
    let db = sqlite_filled();
    db.conn
        .query_row("SELECT mem_optimize()", [], |_| Ok(()))
        .unwrap();
    db.conn.progress_handler(1, Some(|| true));
    let e = db
        .conn
        .query_row(
            "SELECT count(*) FROM mem_search('ka caching login flow about', '{\"limit\":1000,\"recency_weight\":0}')",
            [],
            |r| r.get::<_, i64>(0),
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("interrupt"), "{e}");
    db.conn.progress_handler(1, None::<fn() -> bool>);
    let n: i64 = db
        .conn
        .query_row("SELECT count(*) FROM mem_search('caching')", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(n, 10);
}

#[test]
fn postgres_statement_timeout_and_cancel() {
    let Some(url) = agentmem_tests::pg_url() else {
        return;
    };
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    c.batch_execute("DROP EXTENSION IF EXISTS agentmem CASCADE; CREATE EXTENSION agentmem;")
        .unwrap();
    c.batch_execute("SELECT mem_thread_create('r')").unwrap();
    c.batch_execute(&fill()).unwrap();
    let n: i64 = c
        .query_one("SELECT count(*) FROM mem_search($1)", &[&hostile_phrase()])
        .unwrap()
        .get(0);
    assert_eq!(n, 0);
    c.batch_execute("SET statement_timeout = '20ms'").unwrap();
    let e = c.batch_execute("SELECT mem_reindex()").unwrap_err();
    let msg = agentmem_tests::backend::pg_message(&e);
    assert!(msg.contains("statement timeout"), "{msg}");
    c.batch_execute("RESET statement_timeout").unwrap();
    let cancel = c.cancel_token();
    let stop = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        cancel.cancel_query(postgres::NoTls).unwrap();
    });
    let e = c.batch_execute("SELECT mem_reindex()").unwrap_err();
    stop.join().unwrap();
    let msg = agentmem_tests::backend::pg_message(&e);
    assert!(msg.contains("canceling statement"), "{msg}");
    let problems: i64 = c
        .query_one("SELECT count(*) FROM mem_index_check()", &[])
        .unwrap()
        .get(0);
    assert_eq!(problems, 0);
}
