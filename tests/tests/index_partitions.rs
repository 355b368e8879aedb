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

/// A small source file of resource `r`, whose functions name its secret word.
fn source(r: &str, n: usize) -> String {
    let s = sample::secret(r);
    format!("def {s}_load_{n}(path):\n    return open(path)\n\n\nclass Cache{n}:\n    def refresh(self):\n        return {s}_load_{n}('x')\n")
}

/// Fills `db` the same way for every twin: the sample's rows and two code files per resource.
fn fill(db: &mut dyn Backend) {
    sample::populate(db, &mut Rng(SEED));
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
            "SELECT mem_remember($1, $2)".into(),
            vec![
                text(r),
                text(&format!(
                    r#"{{"type":"gotcha","content":"remember the {s} cache {n}"}}"#
                )),
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
