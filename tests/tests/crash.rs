//! Crashes in the middle of the engine's and the task graph's longest writes: a failpoint
//! (core `failpoint`) parks the writer inside an index flush, an index merge or a blocked-state
//! refresh, and the test kills it there — SIGKILL of a SQLite process; termination and SIGKILL
//! of a Postgres backend. Afterwards the database passes its integrity check (`PRAGMA
//! integrity_check`; `amcheck` on every agentmem B-tree), and the index, the counters and the
//! blocked state agree with the base rows; then it takes more writes.

use agentmem_tests::backend::{Postgres, Sqlite};
use agentmem_tests::invariants::check;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const POINTS: &[(&str, &str)] = &[
    ("search.flush", "messages"),
    ("search.merge", "messages"),
    ("tasks.refresh", "tasks"),
];

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agentmem-crash-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // The Postgres server (user postgres) writes its markers here too.
    Command::new("chmod")
        .arg("0777")
        .arg(&dir)
        .status()
        .unwrap();
    dir
}

fn wait_for(mark: &Path, what: &str) {
    let start = Instant::now();
    while !mark.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "{what}: the failpoint was never reached"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn worker(db: &Path, workload: &str, steps: Option<u64>) -> Command {
    let mut cmd = Command::new("/usr/bin/python3");
    cmd.arg(agentmem_tests::root().join("tests/python/crash_worker.py"))
        .arg(db)
        .arg(agentmem_tests::sqlite_extension())
        .arg(workload);
    if let Some(n) = steps {
        cmd.arg(n.to_string());
    }
    cmd.stdout(Stdio::null());
    cmd
}

#[test]
fn sqlite_writer_killed_inside_flush_merge_and_refresh() {
    for &(point, workload) in POINTS {
        let dir = scratch(point);
        let db = dir.join("crash.db");
        let mark = dir.join("mark");
        // Some history first, then a writer parked at the failpoint and killed there.
        let status = worker(&db, workload, Some(3)).status().unwrap();
        assert!(status.success());
        let mut child = worker(&db, workload, None)
            .env("AGENTMEM_FAILPOINT", point)
            .env("AGENTMEM_FAILPOINT_MARK", &mark)
            .spawn()
            .unwrap();
        wait_for(&mark, point);
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let mut s = Sqlite::open(db.to_str().unwrap());
        let ok: String = s
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(ok, "ok", "{point}");
        check(&mut s, &format!("sqlite after SIGKILL at {point}"));
        drop(s);
        let status = worker(&db, workload, Some(400)).status().unwrap();
        assert!(status.success(), "{point}: writing after the crash failed");
        let mut s = Sqlite::open(db.to_str().unwrap());
        check(&mut s, &format!("sqlite writing on after {point}"));
        std::fs::remove_dir_all(&dir).ok();
    }
}

/// The statement each Postgres workload repeats.
fn pg_step(workload: &str) -> &'static str {
    match workload {
        "messages" => {
            "SELECT mem_message_add((SELECT id FROM mem_threads ORDER BY id LIMIT 1), 'user', 'message about login, caching and LoginSchema')"
        }
        _ => {
            "UPDATE mem_tasks SET status = CASE WHEN status = 'open' THEN 'closed' ELSE 'open' END, \
             close_reason = CASE WHEN status = 'open' THEN 'completed' END WHERE id = 'root'"
        }
    }
}

fn pg_setup(c: &mut postgres::Client) {
    c.batch_execute(
        "DROP EXTENSION IF EXISTS agentmem CASCADE; CREATE EXTENSION agentmem; \
         CREATE EXTENSION IF NOT EXISTS amcheck; SELECT mem_thread_create('crash'); \
         SELECT task_create('root', '{\"id\":\"root\"}');",
    )
    .unwrap();
    for i in 0..40 {
        c.batch_execute(&format!(
            "SELECT task_create('mid', '{{\"id\":\"m{i}\"}}'); SELECT task_dep_add('m{i}', 'root');"
        ))
        .unwrap();
        for j in 0..5 {
            c.batch_execute(&format!(
                "SELECT task_create('leaf', '{{\"id\":\"l{i}_{j}\"}}'); SELECT task_dep_add('l{i}_{j}', 'm{i}', 'parent-child');"
            ))
            .unwrap();
        }
    }
}

fn pg_connect_retrying(url: &str) -> postgres::Client {
    let start = Instant::now();
    loop {
        match postgres::Client::connect(url, postgres::NoTls) {
            Ok(c) => return c,
            Err(e) => {
                assert!(
                    start.elapsed() < Duration::from_secs(60),
                    "server did not come back: {e}"
                );
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    }
}

fn pg_verify(url: &str, context: &str) {
    let mut c = pg_connect_retrying(url);
    // Every B-tree of agentmem's tables, with all heap tuples indexed.
    let rows = c
        .query(
            "SELECT c.relname::text, bt_index_check(c.oid, true)::text FROM pg_index i \
             JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam \
             JOIN pg_class t ON t.oid = i.indrelid WHERE am.amname = 'btree' AND t.relname LIKE 'mem\\_%'",
            &[],
        )
        .unwrap_or_else(|e| panic!("{context}: amcheck: {e}"));
    assert!(
        rows.len() > 10,
        "{context}: amcheck saw {} indexes",
        rows.len()
    );
    let mut db = Postgres { client: c };
    check(&mut db, context);
    for _ in 0..150 {
        db.client.batch_execute(pg_step("messages")).unwrap();
        db.client.batch_execute(pg_step("tasks")).unwrap();
    }
    check(&mut db, &format!("{context}, then writing on"));
}

#[test]
fn postgres_backend_terminated_or_killed_inside_flush_merge_and_refresh() {
    let Some(url) = agentmem_tests::pg_url() else {
        return;
    };
    for &(point, workload) in POINTS {
        for how in ["terminate", "sigkill"] {
            let dir = scratch(&format!("pg-{point}-{how}"));
            let mark = dir.join("mark");
            let mut setup = pg_connect_retrying(&url);
            pg_setup(&mut setup);
            let mut w = pg_connect_retrying(&url);
            let pid: i32 = w.query_one("SELECT pg_backend_pid()", &[]).unwrap().get(0);
            w.batch_execute(&format!(
                "SET agentmem.failpoint = '{point}'; SET agentmem.failpoint_mark = '{}'",
                mark.display()
            ))
            .unwrap();
            let step = pg_step(workload);
            let runner = std::thread::spawn(move || {
                for _ in 0..100_000 {
                    if w.batch_execute(step).is_err() {
                        return;
                    }
                }
                panic!("the failpoint was never reached");
            });
            wait_for(&mark, point);
            match how {
                "terminate" => {
                    setup
                        .execute("SELECT pg_terminate_backend($1)", &[&pid])
                        .unwrap();
                }
                _ => {
                    let ok = Command::new("kill")
                        .args(["-KILL", &pid.to_string()])
                        .status()
                        .unwrap();
                    assert!(ok.success());
                }
            }
            runner.join().unwrap();
            // A killed backend makes the server restart every session (crash recovery), once
            // the postmaster has noticed; a terminated one leaves the others alone.
            if how == "terminate" {
                assert!(setup.simple_query("SELECT 1").is_ok(), "{how} at {point}");
            } else {
                let start = Instant::now();
                while setup.simple_query("SELECT 1").is_ok() {
                    assert!(
                        start.elapsed() < Duration::from_secs(30),
                        "{how} at {point}: the server did not restart the other sessions"
                    );
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
            drop(setup);
            pg_verify(&url, &format!("postgres after {how} at {point}"));
            std::fs::remove_dir_all(&dir).ok();
        }
    }
}
