//! Many writers at once: message indexes stay unique and gap-free, counters exact, and
//! rolled-back writes leave nothing behind. Real processes on one SQLite WAL file; real
//! connections on Postgres.

use agentmem_tests::backend::{Backend, Param, Postgres, Sqlite};

const WRITERS: usize = 6;
const PER_WRITER: usize = 40;

/// Every fifth transaction of a writer is rolled back; those numbers must be handed out again.
fn committed_per_writer() -> usize {
    (0..PER_WRITER).filter(|i| i % 5 != 4).count()
}

/// Searches and merges ran while the writers wrote: the index must now equal the table.
fn check_index(db: &mut dyn Backend, thread: &str) {
    let problems = db.query("SELECT * FROM mem_index_check()", &[]).unwrap();
    assert!(problems.is_empty(), "index problems: {problems:?}");
    let expect = (WRITERS * committed_per_writer()) as i64;
    let found = db
        .query(
            "SELECT count(*) FROM mem_search('refresh_tokens', '{\"limit\":1000,\"thread_id\":\"' || $1 || '\"}')",
            &[Param::Text(thread.into())],
        )
        .unwrap();
    assert_eq!(
        found[0][0].to_string(),
        expect.to_string(),
        "search hits after the run"
    );
}

fn check_thread(db: &mut dyn Backend, thread: &str) {
    let expect = (WRITERS * committed_per_writer()) as i64;
    let rows = db
        .query(
            "SELECT count(*), count(DISTINCT message_index), min(message_index), max(message_index), \
             CAST(sum(token_count) AS BIGINT) FROM mem_messages WHERE thread_id = $1",
            &[Param::Text(thread.into())],
        )
        .unwrap();
    let r = &rows[0];
    assert_eq!(r[0].to_string(), expect.to_string(), "message count");
    assert_eq!(r[1].to_string(), expect.to_string(), "distinct indexes");
    assert_eq!(r[2].to_string(), "0", "first index");
    assert_eq!(
        r[3].to_string(),
        (expect - 1).to_string(),
        "last index (gap-free)"
    );
    let t = db
        .query(
            "SELECT message_count, token_count, next_message_index FROM mem_threads WHERE id = $1",
            &[Param::Text(thread.into())],
        )
        .unwrap();
    assert_eq!(
        t[0][0].to_string(),
        expect.to_string(),
        "thread message_count"
    );
    assert_eq!(t[0][1].to_string(), r[4].to_string(), "thread token_count");
    assert_eq!(
        t[0][2].to_string(),
        expect.to_string(),
        "thread next_message_index"
    );
    let rolled = db
        .query(
            "SELECT count(*) FROM mem_messages WHERE raw_content LIKE 'rolled back%'",
            &[],
        )
        .unwrap();
    assert_eq!(rolled[0][0].to_string(), "0", "rolled-back rows");
}

/// The script one writer process feeds the sqlite3 shell: half plain INSERTs (as an ORM
/// would write), half mem_message_add, each in its own IMMEDIATE transaction.
fn writer_script(ext: &str, thread: &str, writer: usize) -> String {
    let mut s = format!(".load {ext}\n.timeout 60000\n.bail on\n");
    for i in 0..PER_WRITER {
        let content = if i % 5 == 4 {
            "rolled back".to_string()
        } else {
            format!("writer {writer} message {i} refresh_tokens")
        };
        let insert = if i % 2 == 0 {
            format!("INSERT INTO mem_messages (thread_id, role, raw_content) VALUES ('{thread}', 'user', '{content}');")
        } else {
            format!("SELECT mem_message_add('{thread}', 'assistant', '{content}') IS NULL;")
        };
        let end = if i % 5 == 4 { "ROLLBACK;" } else { "COMMIT;" };
        s.push_str(&format!("BEGIN IMMEDIATE;\n{insert}\n{end}\n"));
    }
    s
}

#[test]
fn sqlite_processes_share_one_thread() {
    let dir = std::env::temp_dir().join(format!("agentmem-conc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("conc.db");
    let _ = std::fs::remove_file(&path);
    let mut db = Sqlite::open(path.to_str().unwrap());
    db.conn
        .query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
        .unwrap();
    let thread: String = db
        .conn
        .query_row("SELECT mem_thread_create('r')", [], |r| r.get(0))
        .unwrap();
    let ext = agentmem_tests::sqlite_extension();
    let scripts = (0..WRITERS)
        .map(|w| writer_script(ext.to_str().unwrap(), &thread, w))
        .collect();
    for out in agentmem_tests::sqlite_shells(&path, scripts) {
        assert!(
            out.status.success(),
            "writer failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    check_thread(&mut db, &thread);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn postgres_connections_share_one_thread() {
    let Some(url) = agentmem_tests::pg_url() else {
        return;
    };
    let mut db = Postgres::connect(&url);
    db.client
        .batch_execute("CREATE EXTENSION IF NOT EXISTS agentmem")
        .unwrap();
    let thread: String = db
        .client
        .query_one("SELECT mem_thread_create('conc')", &[])
        .unwrap()
        .get(0);
    let handles: Vec<_> = (0..WRITERS)
        .map(|w| {
            let url = url.clone();
            let thread = thread.clone();
            std::thread::spawn(move || {
                let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
                for i in 0..PER_WRITER {
                    let mut tx = c.transaction().unwrap();
                    if i % 5 == 4 {
                        tx.execute("SELECT mem_message_add($1, 'user', 'rolled back')", &[&thread]).unwrap();
                        tx.rollback().unwrap();
                        continue;
                    }
                    let content = format!("writer {w} message {i} refresh_tokens");
                    if i % 2 == 0 {
                        tx.execute(
                            "INSERT INTO mem_messages (thread_id, role, raw_content) VALUES ($1, 'user', $2)",
                            &[&thread, &content],
                        )
                        .unwrap();
                    } else {
                        tx.execute("SELECT mem_message_add($1, 'assistant', $2)", &[&thread, &content]).unwrap();
                    }
                    tx.commit().unwrap();
                }
            })
        })
        .collect();
    // Searchers and a merger run beside the writers.
    let others: Vec<_> = (0..3)
        .map(|k| {
            let url = url.clone();
            std::thread::spawn(move || {
                let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
                for _ in 0..30 {
                    if k == 2 {
                        c.execute("SELECT mem_optimize()", &[]).unwrap();
                    } else {
                        c.query(
                            "SELECT * FROM mem_search('refresh_tokens writer', '{\"limit\":50}')",
                            &[],
                        )
                        .unwrap();
                    }
                }
            })
        })
        .collect();
    for h in handles.into_iter().chain(others) {
        h.join().unwrap();
    }
    check_thread(&mut db, &thread);
    check_index(&mut db, &thread);
    db.client
        .execute("DELETE FROM mem_threads WHERE id = $1", &[&thread])
        .unwrap();
}
