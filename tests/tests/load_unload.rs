//! The SQLite extension as hosts use it: connections on many threads load it, use it and close,
//! some on their own thread and some on another one after theirs ended, round after round.
//!
//! SQLite unloads an extension with the last connection that loaded it, while threads that
//! used it may live on: their thread-local values and the allocator's per-thread heaps belong
//! to the library, so it must stay mapped (it pins itself). And memory one thread allocated is
//! freed by another when a connection is closed away from the thread that used it.

use agentmem_tests::backend::load;

const ROUNDS: usize = 6;
const THREADS: usize = 6;

/// One connection's work: enough writes, searches and reads to allocate on every path the
/// ingest and recall take. The connection is returned open.
fn session(n: usize) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    load(&conn);
    conn.query_row("SELECT mem_init()", [], |_| Ok(())).unwrap();
    let thread: String = conn
        .query_row("SELECT mem_thread_create('r')", [], |r| r.get(0))
        .unwrap();
    for i in 0..40 {
        conn.query_row(
            "SELECT mem_message_add(?1, 'user', ?2)",
            rusqlite::params![
                thread,
                format!("session {n} message {i}: parse_config reads settings.toml")
            ],
            |_| Ok(()),
        )
        .unwrap();
    }
    conn.execute(
        "INSERT INTO mem_messages (thread_id, role, raw_content) VALUES (?1, 'assistant', 'plain insert')",
        [&thread],
    )
    .unwrap();
    let hits: i64 = conn
        .query_row(
            "SELECT count(*) FROM mem_search('parse_config', '{\"limit\":100}')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(hits, 40, "hits of session {n}");
    let tokens: i64 = conn
        .query_row("SELECT mem_tokens('Hello, wörld!')", [], |r| r.get(0))
        .unwrap();
    assert!(tokens > 0);
    conn
}

/// Whether this process has the extension's file mapped.
fn mapped() -> bool {
    let path = agentmem_tests::sqlite_extension();
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    std::fs::read_to_string("/proc/self/maps").is_ok_and(|m| m.contains(&name))
}

#[test]
fn stays_loaded_for_threads_that_outlive_their_connections() {
    for round in 0..ROUNDS {
        // Odd threads hand their connection back and end; it is closed here, after them.
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                std::thread::spawn(move || {
                    let conn = session(round * THREADS + t);
                    (t % 2 == 1).then_some(conn)
                })
            })
            .collect();
        let handed: Vec<_> = workers
            .into_iter()
            .map(|w| w.join().expect("a session panicked"))
            .collect();
        drop(handed);
        assert!(
            mapped(),
            "round {round}: the extension was unloaded with its last connection"
        );
    }
}
