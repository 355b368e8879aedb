//! The search index partitioned by resource (`mem_index_partition('resource')`) against the
//! shared one, on SQLite and Postgres.
//!
//! Twin databases get the same random rows of three resources (messages, observations,
//! tasks, memories, code chunks); one is then partitioned. Afterwards, through random writes
//! (function calls and plain SQL), a forgotten resource and back to one shared index:
//!
//! 1. every search across resources gives the same hits and scores (to 1e-9) in both: the
//!    partitioned search reads every resource's index as one, with summed statistics;
//! 2. a search within a resource gives what the shared index gives in a database holding
//!    only that resource's rows (the others forgotten): its own statistics, nothing else's;
//! 3. `mem_index_check()` is empty, and each resource's documents sit in its own index.

use agentmem_tests::backend::{Backend, Cell, Param, Postgres, Sqlite};
use agentmem_tests::sample::{self, text, RESOURCES};
use agentmem_tests::Rng;

const SEED: u64 = 0x5eed_1d3a;
const NOW: i64 = 1_900_000_000_000;
const STEPS: usize = 60;
const DAY_MS: i64 = 86_400_000;

/// A small source file of resource `r`, whose functions name its secret word.
fn source(r: &str, n: usize) -> String {
    let s = sample::secret(r);
    format!("def {s}_load_{n}(path):\n    return open(path)\n\n\nclass Cache{n}:\n    def refresh(self):\n        return {s}_load_{n}('x')\n")
}

/// Fills `db` the same way for every twin: the sample's rows and two code files per resource.
/// The sample's memories were stamped by the clock, and a memory's score decays from its last
/// access: twins filled a moment apart would rank equal memories by when each was written.
/// Their times are pinned to one moment.
fn fill(db: &mut dyn Backend) {
    sample::populate(db, &mut Rng(SEED));
    db.query(
        "UPDATE mem_memories SET created_at = $1, updated_at = $1, last_accessed_at = $1",
        &[Param::Int(NOW - DAY_MS)],
    )
    .unwrap();
    for r in RESOURCES {
        for n in 0..2 {
            db.query(
                "SELECT graph_index_file($1, $2, $3)",
                &[text(r), text(&format!("src/m{n}.py")), text(&source(r, n))],
            )
            .unwrap();
        }
    }
}

/// The searches compared, over every search function: `(label, [(key, score)])`, a hit's key
/// what names it in every twin (its id, or its text where ids are generated).
type Answers = Vec<(String, Vec<(String, f64)>)>;

fn hits(db: &mut dyn Backend, sql: &str, params: &[Param]) -> Vec<(String, f64)> {
    db.query(sql, params)
        .unwrap_or_else(|e| panic!("{}: {sql}: {e}", db.name()))
        .into_iter()
        .map(|r| {
            let score = match &r[1] {
                Cell::Real(f) => *f,
                Cell::Int(i) => *i as f64,
                c => panic!("score {c:?}"),
            };
            (r[0].to_string(), score)
        })
        .collect()
}

/// Every search of `query` (within `resource` when given).
fn answers(db: &mut dyn Backend, queries: &[String], resource: Option<&str>) -> Answers {
    let scope = resource.map_or(String::new(), |r| format!(r#","resource_id":"{r}""#));
    let mut out = Vec::new();
    for q in queries {
        let searches = [
            (
                "mem_search",
                format!(r#"{{"limit":30,"now":{NOW},"code":true,"include_deleted":true{scope}}}"#),
                "SELECT CASE WHEN source = 'reflection' THEN 'obs ' || thread_id ELSE message_id END, score \
                 FROM mem_search($1, $2)",
            ),
            (
                "mem_memory_search",
                format!(r#"{{"limit":30,"now":{NOW}{scope}}}"#),
                "SELECT content, score FROM mem_memory_search($1, $2)",
            ),
            (
                "mem_recall_hybrid",
                format!(
                    r#"{{"limit":30,"now":{NOW},"kinds":["memory","message","observation","code"]{scope}}}"#
                ),
                "SELECT kind || ' ' || content, score FROM mem_recall_hybrid($1, $2)",
            ),
            (
                "task_search",
                format!(r#"{{"limit":30,"now":{NOW}{scope}}}"#),
                "SELECT id, score FROM task_search($1, $2)",
            ),
        ];
        for (name, options, sql) in searches {
            let got = hits(db, sql, &[text(q), text(&options)]);
            out.push((format!("{name}({q:?}, {options})"), got));
        }
    }
    out
}

/// Hits in a canonical order: by score, ties by id (equal scores may come in either order
/// when two databases number rows differently).
fn canonical(mut a: Answers) -> Answers {
    for (_, hits) in &mut a {
        hits.sort_by(|x, y| y.1.total_cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
    }
    a
}

fn assert_same(context: &str, got: &Answers, want: &Answers) {
    assert_eq!(got.len(), want.len());
    for ((label, g), (_, w)) in got.iter().zip(want) {
        let ids = |h: &[(String, f64)]| h.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
        assert_eq!(ids(g), ids(w), "{context}: {label}: hits differ");
        for (a, b) in g.iter().zip(w) {
            assert!(
                (a.1 - b.1).abs() <= 1e-9,
                "{context}: {label}: score of {} is {} (want {})",
                a.0,
                a.1,
                b.1
            );
        }
    }
}

/// Every search across resources, in both twins: the same hits and scores. Returns them.
fn same_across(
    context: &str,
    shared: &mut dyn Backend,
    parted: &mut dyn Backend,
    queries: &[String],
) -> Answers {
    let want = answers(shared, queries, None);
    assert_same(context, &answers(parted, queries, None), &want);
    want
}

fn queries() -> Vec<String> {
    let mut q: Vec<String> = RESOURCES.iter().map(|r| sample::secret(r)).collect();
    q.extend(
        [
            "cache",
            "login cache",
            "remember deploying",
            "fix bug",
            "refresh",
            "shared work",
        ]
        .map(String::from),
    );
    q.push(format!("{} cache", sample::secret("ra")));
    q
}

fn one(db: &mut dyn Backend, sql: &str) -> String {
    db.query(sql, &[]).unwrap()[0][0].to_string()
}

fn check_index(db: &mut dyn Backend, context: &str) {
    let problems = db
        .query("SELECT problem FROM mem_index_check()", &[])
        .unwrap();
    assert!(
        problems.is_empty(),
        "{context}: {}: {problems:?}",
        db.name()
    );
}

/// One random write, the same in every database given.
fn step(dbs: &mut [&mut dyn Backend], rng: &mut Rng, n: usize) {
    let r = RESOURCES[(rng.next() % 3) as usize];
    let s = sample::secret(r);
    let (sql, params): (String, Vec<Param>) = match rng.next() % 8 {
        0 | 1 => (
            "SELECT mem_message_add($1, 'user', $2, $3)".into(),
            vec![
                text(&format!("{r}-t0")),
                text(&format!("step {n} of the {s} login cache")),
                text(&format!(
                    r#"{{"id":"step-{n}","created_at":{}}}"#,
                    NOW - n as i64
                )),
            ],
        ),
        2 => (
            "UPDATE mem_messages SET raw_content = $1 WHERE id = $2".into(),
            vec![
                text(&format!("rewritten {s} refresh {n}")),
                text(&format!("{r}-t0-m{}", rng.next() % 3)),
            ],
        ),
        3 => (
            "DELETE FROM mem_messages WHERE id = $1".into(),
            vec![text(&format!("{r}-t1-m{}", rng.next() % 3))],
        ),
        4 => (
            "SELECT mem_remember($1, $2, $3)".into(),
            vec![
                text(r),
                text(&format!(
                    r#"{{"type":"gotcha","content":"remember the {s} cache {n}"}}"#
                )),
                text(&format!(r#"{{"now":{}}}"#, NOW - n as i64)),
            ],
        ),
        5 => (
            "DELETE FROM mem_memories WHERE resource_id = $1 AND content LIKE $2".into(),
            vec![text(r), text(&format!("%number {}%", rng.next() % 3))],
        ),
        6 => (
            "SELECT graph_remove_file($1, $2)".into(),
            vec![text(r), text(&format!("src/m{}.py", rng.next() % 2))],
        ),
        _ => (
            "UPDATE mem_tasks SET title = $1 WHERE id = $2".into(),
            vec![
                text(&format!("fix the {s} refresh {n}")),
                text(&format!("task-{r}")),
            ],
        ),
    };
    for db in dbs.iter_mut() {
        db.query(&sql, &params)
            .unwrap_or_else(|e| panic!("{}: {sql}: {e}", db.name()));
    }
}

/// The whole property on one backend: `open(name)` gives a fresh database.
fn run(open: &mut dyn FnMut(&str) -> Box<dyn Backend>) {
    let queries = queries();
    let mut shared = open("agentmem_parts_shared");
    let mut parted = open("agentmem_parts_parted");
    fill(shared.as_mut());
    fill(parted.as_mut());
    assert_eq!(
        one(parted.as_mut(), "SELECT mem_index_partition() ->> 'by'"),
        "none"
    );
    let set = one(parted.as_mut(), "SELECT mem_index_partition('resource')");
    assert!(set.contains(r#""changed":true"#), "{set}");
    assert!(
        one(parted.as_mut(), "SELECT mem_index_partition('resource')")
            .contains(r#""changed":false"#)
    );
    let parts = one(
        parted.as_mut(),
        "SELECT count(DISTINCT resource_id) FROM mem_idx_meta WHERE resource_id <> ''",
    );
    assert_eq!(parts, "3", "every resource gets its index");
    check_index(parted.as_mut(), "partitioned");

    same_across(
        "across resources",
        shared.as_mut(),
        parted.as_mut(),
        &queries,
    );

    // Within a resource: the shared index of a database of that resource alone.
    for r in RESOURCES {
        let mut alone = open(&format!("agentmem_parts_alone_{r}"));
        fill(alone.as_mut());
        for other in RESOURCES.iter().filter(|o| *o != r) {
            alone
                .query("SELECT mem_forget($1)", &[text(other)])
                .unwrap();
        }
        let want = canonical(answers(alone.as_mut(), &queries, Some(r)));
        let got = canonical(answers(parted.as_mut(), &queries, Some(r)));
        // Tasks carry no resource in the sample: the alone database forgot some of them.
        let keep = |a: Answers| -> Answers {
            a.into_iter()
                .filter(|(l, _)| !l.starts_with("task_search"))
                .collect()
        };
        let shared_within = canonical(answers(shared.as_mut(), &queries, Some(r)));
        assert_ne!(
            keep(got.clone()),
            keep(shared_within),
            "within {r}: the resource's own statistics rank differently from the shared index's"
        );
        assert_same(&format!("within {r}"), &keep(got), &keep(want));
    }

    let mut rng = Rng(SEED ^ 0xabc);
    for n in 0..STEPS {
        step(&mut [shared.as_mut(), parted.as_mut()], &mut rng, n);
        if n % 20 == 19 {
            parted.query("SELECT mem_optimize()", &[]).unwrap();
        }
    }
    for db in [shared.as_mut(), parted.as_mut()] {
        db.query("SELECT mem_forget('rc')", &[]).unwrap();
    }
    assert_eq!(
        one(
            parted.as_mut(),
            "SELECT count(*) FROM mem_idx_delta WHERE resource_id = 'rc'"
        ),
        "0",
        "a forgotten resource's index keeps no pending document"
    );
    check_index(parted.as_mut(), "after the writes");
    check_index(shared.as_mut(), "after the writes (shared)");
    let want = same_across(
        "after the writes",
        shared.as_mut(),
        parted.as_mut(),
        &queries,
    );

    let back = one(parted.as_mut(), "SELECT mem_index_partition('none')");
    assert!(back.contains(r#""changed":true"#), "{back}");
    assert_eq!(
        one(
            parted.as_mut(),
            "SELECT count(*) FROM mem_idx_meta WHERE resource_id <> ''"
        ),
        "0",
        "the resources' indexes are dropped"
    );
    check_index(parted.as_mut(), "shared again");
    assert_same(
        "shared again",
        &answers(parted.as_mut(), &queries, None),
        &want,
    );
    let want = answers(shared.as_mut(), &queries, Some("rb"));
    assert_same(
        "shared again, within rb",
        &answers(parted.as_mut(), &queries, Some("rb")),
        &want,
    );
}

#[test]
fn partitioned_index_on_sqlite() {
    run(&mut |_| Box::new(Sqlite::open(":memory:")));
}

#[test]
fn partitioned_index_on_postgres() {
    let Some(server) = agentmem_tests::pg_url() else {
        return;
    };
    let mut made = Vec::new();
    run(&mut |name| {
        made.push(name.to_owned());
        let url = agentmem_tests::pg_database(&server, name);
        let mut db = Postgres::connect(&url);
        db.reset().unwrap();
        Box::new(db)
    });
    for name in made {
        agentmem_tests::pg_drop_database(&server, &name);
    }
}

/// Writers keep writing while the layout changes back and forth (Postgres): each change waits
/// for the transactions that wrote in the old layout, the ones after it write in the new one,
/// so the index is exact after every change (checked in one snapshot while the writers go on)
/// and at the end. A writer the change's lock queue deadlocks is aborted by Postgres
/// and retried, as a client retries a deadlock.
#[test]
fn layout_changes_under_concurrent_writers_on_postgres() {
    let Some(server) = agentmem_tests::pg_url() else {
        return;
    };
    let name = "agentmem_parts_concurrent";
    let url = agentmem_tests::pg_database(&server, name);
    let mut db = Postgres::connect(&url);
    db.reset().unwrap();
    for r in RESOURCES {
        db.query(
            "SELECT mem_thread_create($1, NULL, NULL, $2)",
            &[text(r), text(&format!(r#"{{"id":"{r}-t"}}"#))],
        )
        .unwrap();
    }
    const WRITERS: usize = 4;
    const PER_WRITER: usize = 40;
    // Writers go on until every switch is done, so the switches land among their writes.
    let switched = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let url = url.clone();
            let switched = switched.clone();
            std::thread::spawn(move || {
                let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
                let mut retried = 0;
                let mut i = 0;
                while i < PER_WRITER || !switched.load(std::sync::atomic::Ordering::SeqCst) {
                    let r = RESOURCES[(w + i) % 3];
                    let thread = format!("{r}-t");
                    let id = format!("w{w}-{i}");
                    let content = format!("writer {w} message {i} refresh_tokens {r}");
                    loop {
                        let attempt = (|| -> Result<(), postgres::Error> {
                            let mut tx = c.transaction()?;
                            if i % 2 == 0 {
                                tx.execute(
                                    "INSERT INTO mem_messages (id, thread_id, role, raw_content) \
                                     VALUES ($1, $2, 'user', $3)",
                                    &[&id, &thread, &content],
                                )?;
                            } else {
                                let opts = format!(r#"{{"id":"{id}"}}"#);
                                tx.execute(
                                    "SELECT mem_message_add($1, 'assistant', $2, $3)",
                                    &[&thread, &content, &opts],
                                )?;
                            }
                            if i % 7 == 3 {
                                tx.execute(
                                    "UPDATE mem_messages SET raw_content = raw_content || ' edited' \
                                     WHERE id = $1",
                                    &[&id],
                                )?;
                            }
                            if i % 11 == 5 {
                                tx.execute("DELETE FROM mem_messages WHERE id = $1", &[&id])?;
                            }
                            tx.commit()
                        })();
                        match attempt {
                            Ok(()) => break,
                            Err(e) if e.code() == Some(&postgres::error::SqlState::T_R_DEADLOCK_DETECTED) => {
                                retried += 1;
                            }
                            Err(e) => panic!("writer {w}: {e:?}"),
                        }
                    }
                    i += 1;
                }
                retried
            })
        })
        .collect();
    let switcher = {
        let url = url.clone();
        let switched = switched.clone();
        std::thread::spawn(move || {
            let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
            // The writers' backends load the extension first: the switches start once they
            // write.
            while c
                .query_one("SELECT count(*) FROM mem_messages", &[])
                .unwrap()
                .get::<_, i64>(0)
                < (WRITERS * 3) as i64
            {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            for k in 0..5 {
                let by = if k % 2 == 0 { "resource" } else { "none" };
                loop {
                    match c.query("SELECT mem_index_partition($1)", &[&by]) {
                        Ok(rows) => {
                            let v: serde_json::Value = rows[0].get(0);
                            let moved = v["documents"]["msg"].as_i64().unwrap_or(0);
                            assert!(moved > 0, "the switch to {by} found messages to move: {v}");
                            break;
                        }
                        Err(e)
                            if e.code()
                                == Some(&postgres::error::SqlState::T_R_DEADLOCK_DETECTED) => {}
                        Err(e) => panic!("switch to {by}: {e:?}"),
                    }
                }
                // One snapshot for the whole check: what committed so far sits in its index.
                let mut tx = c
                    .build_transaction()
                    .isolation_level(postgres::IsolationLevel::RepeatableRead)
                    .start()
                    .unwrap();
                let problems = tx
                    .query("SELECT problem FROM mem_index_check()", &[])
                    .unwrap();
                let problems: Vec<String> = problems.iter().map(|r| r.get(0)).collect();
                assert!(
                    problems.is_empty(),
                    "after the switch to {by}: {problems:?}"
                );
                tx.commit().unwrap();
                std::thread::sleep(std::time::Duration::from_millis(30));
            }
            switched.store(true, std::sync::atomic::Ordering::SeqCst);
        })
    };
    let retried: usize = writers.into_iter().map(|h| h.join().unwrap()).sum();
    switcher.join().unwrap();
    // Five switches end partitioned: each resource's index holds its live messages.
    check_index(&mut db, "after concurrent switches");
    let live = one(&mut db, "SELECT count(*) FROM mem_messages");
    let found = one(
        &mut db,
        "SELECT count(*) FROM mem_search('refresh_tokens', '{\"limit\":1000}')",
    );
    eprintln!("{retried} writes retried after a deadlock with a layout change");
    assert_eq!(found, live, "every live message is found");
    assert_eq!(
        one(
            &mut db,
            "SELECT count(*) FROM mem_idx_meta WHERE resource_id <> ''"
        ),
        "3"
    );
    drop(db);
    agentmem_tests::pg_drop_database(&server, name);
}
