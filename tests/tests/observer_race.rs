//! Sessions of one resource observed at once: eight writers (SQLite: real processes on one
//! WAL file; Postgres: real connections started together), six with a session of their own
//! and two feeding one shared session, then each finalizing. No count is lost (every
//! session's events and file reads are exactly what its writers sent), every finalize
//! answers, and each promoted content is one memory.

use agentmem_tests::backend::{Backend, Postgres};
use std::sync::{Arc, Barrier};

const WRITERS: usize = 8;
const CALLS: usize = 40;

/// The session writer `w` feeds: its own, or the shared one for the last two.
fn session(w: usize) -> String {
    if w >= 6 {
        "shared".into()
    } else {
        format!("s{w}")
    }
}

/// Writer `w`'s calls: reads and edits of the same few files (so sessions co-access the same
/// pairs), one event per call, now and then a batch of two.
fn calls(w: usize) -> Vec<String> {
    (0..CALLS)
        .map(|i| {
            let tool = if i % 3 == 2 { "Edit" } else { "Read" };
            let read = |f: usize| {
                format!(r#"{{"type":"tool_call","tool":"{tool}","args":{{"file_path":"src/f{f}.ts"}},"step":{i}}}"#)
            };
            if i % 5 == 4 {
                format!("[{},{}]", read((i + w) % 4), read((i + w + 1) % 4))
            } else {
                read((i + w) % 4)
            }
        })
        .collect()
}

/// Events each session got: 48 per own session, twice that for the shared one.
fn events_of(w: usize) -> usize {
    calls(w)
        .iter()
        .map(|c| if c.starts_with('[') { 2 } else { 1 })
        .sum()
}

fn check(db: &mut dyn Backend) {
    let rows = db
        .query(
            "SELECT s.id, s.events, s.status, (SELECT CAST(sum(reads + edits) AS BIGINT) FROM mem_observer_files f WHERE f.session_id = s.id) \
             FROM mem_observer_sessions s ORDER BY s.id",
            &[],
        )
        .unwrap();
    assert_eq!(rows.len(), 7, "sessions");
    for r in rows {
        let id = r[0].to_string();
        let want = if id == "shared" {
            events_of(6) + events_of(7)
        } else {
            events_of(id[1..].parse().unwrap())
        };
        assert_eq!(r[1].to_string(), want.to_string(), "events of {id}");
        assert_eq!(
            r[3].to_string(),
            want.to_string(),
            "reads and edits of {id}"
        );
        assert_eq!(r[2].to_string(), "finalized", "{id}");
    }
    // A session after them finds the co-access the seven showed.
    for sql in [
        "SELECT mem_session_start('r', '{\"id\":\"late\"}')".to_string(),
        format!(
            "SELECT mem_observe('late', '[{}]')",
            [calls(0)[1].clone(), calls(0)[2].clone()].join(",")
        ),
    ] {
        db.query(&sql, &[]).unwrap();
    }
    let late = db
        .query(
            "SELECT CAST(mem_session_finalize('late', 'success') -> 'promoted' AS TEXT)",
            &[],
        )
        .unwrap();
    assert!(
        late[0][0].to_string().contains("\"co_access\""),
        "the late session finds the co-access: {}",
        late[0][0]
    );
    let m = db
        .query(
            "SELECT count(*), count(DISTINCT content_hash) FROM mem_memories",
            &[],
        )
        .unwrap();
    assert_eq!(
        m[0][0].to_string(),
        m[0][1].to_string(),
        "one memory per content"
    );
}

/// Writer `w`'s statements: start its session, its calls, finalize (the shared session is
/// finalized by the last writer to finish; the other's finalize then answers the same).
fn statements(w: usize) -> Vec<String> {
    let s = session(w);
    let mut v = vec![format!(
        "SELECT mem_session_start('r', '{{\"id\":\"{s}\"}}')"
    )];
    v.extend(
        calls(w)
            .iter()
            .map(|c| format!("SELECT mem_observe('{s}', '{c}') ->> 'events'")),
    );
    v
}

#[test]
fn sqlite_processes_observe_sessions_of_one_resource() {
    let (dir, path, mut db) = agentmem_tests::wal_database("obsrace");
    let scripts = (0..WRITERS)
        .map(|w| agentmem_tests::shell_script(statements(w)))
        .collect();
    for out in agentmem_tests::sqlite_shells(&path, scripts) {
        assert!(
            out.status.success(),
            "writer failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Then the finalizes, at once.
    let scripts = (0..WRITERS)
        .map(|w| {
            agentmem_tests::shell_script([format!(
                "SELECT mem_session_finalize('{}', 'success') ->> 'outcome'",
                session(w)
            )])
        })
        .collect();
    for out in agentmem_tests::sqlite_shells(&path, scripts) {
        assert!(
            out.status.success(),
            "finalize failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "success");
    }
    check(&mut db);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn postgres_connections_observe_sessions_of_one_resource() {
    let Some(url) = agentmem_tests::pg_url() else {
        return;
    };
    let mut db = Postgres::connect(&url);
    db.reset().unwrap();
    for phase in 0..2 {
        let start = Arc::new(Barrier::new(WRITERS));
        let handles: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (url, start) = (url.clone(), start.clone());
                std::thread::spawn(move || {
                    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
                    start.wait();
                    if phase == 0 {
                        for s in statements(w) {
                            c.batch_execute(&s).unwrap();
                        }
                    } else {
                        let row = c
                            .query_one(
                                "SELECT mem_session_finalize($1, 'success') ->> 'outcome'",
                                &[&session(w)],
                            )
                            .unwrap();
                        assert_eq!(row.get::<_, String>(0), "success");
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    }
    check(&mut db);
    db.reset().unwrap();
}
