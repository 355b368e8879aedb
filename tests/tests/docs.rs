//! Every SQL block of the README and `docs/` runs as pasted, on SQLite and on Postgres.
//!
//! Blocks may use the placeholders a reader substitutes: `:thread`, `:tests`, `:refresh`,
//! `<thread id>`, `<thread>`, `<epic id>`, `<a>`, `<b>` and the task id `task-1`; each file
//! runs in a fresh database where they exist (a thread with ten messages, a few tasks). A
//! statement's trailing comment is checked when it states a result: a number or version
//! (`-- 2`), `-- no rows`, or `-- error: <message>` (the statement must fail with it). Lines
//! of the sqlite3 shell (`.load …`) are skipped; a block with `CREATE EXTENSION` runs on
//! Postgres only, from a database without the extension, and one with `ALTER EXTENSION` runs
//! on Postgres only; a block with `CREATE ROLE` runs on
//! Postgres only, in a transaction rolled back afterwards (roles belong to the cluster).

use agentmem_tests::backend::{Backend, Cell, Param, Postgres, Sqlite};
use std::path::Path;

/// One statement of a block, with where it starts and what its comment expects.
struct Statement {
    at: String,
    sql: String,
    expect: Expect,
}

enum Expect {
    Nothing,
    Value(String),
    NoRows,
    Error(String),
}

/// Splits a line into its code and its trailing `--` comment (outside string literals).
fn split_comment(line: &str) -> (&str, Option<&str>) {
    let mut in_str = false;
    let b = line.as_bytes();
    for i in 0..b.len() {
        match b[i] {
            b'\'' => in_str = !in_str,
            b'-' if !in_str && b.get(i + 1) == Some(&b'-') => {
                return (&line[..i], Some(line[i + 2..].trim()));
            }
            _ => {}
        }
    }
    (line, None)
}

fn expectation(comment: Option<&str>) -> Expect {
    let Some(c) = comment else {
        return Expect::Nothing;
    };
    if let Some(m) = c.strip_prefix("error:") {
        return Expect::Error(m.trim().to_string());
    }
    if c == "no rows" {
        return Expect::NoRows;
    }
    let value =
        !c.is_empty() && !c.contains(' ') && c.chars().all(|ch| ch.is_ascii_digit() || ch == '.');
    if value {
        Expect::Value(c.to_string())
    } else {
        Expect::Nothing
    }
}

/// The SQL blocks of a Markdown file, as statements.
fn blocks(file: &Path) -> Vec<Vec<Statement>> {
    let text = std::fs::read_to_string(file).unwrap();
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((_, line)) = lines.next() {
        if line.trim_end() != "```sql" {
            continue;
        }
        let mut block = Vec::new();
        let mut sql = String::new();
        let mut start = 0;
        for (n, line) in lines.by_ref() {
            if line.starts_with("```") {
                break;
            }
            if line.starts_with('.') {
                continue;
            }
            let (code, comment) = split_comment(line);
            if code.trim().is_empty() {
                continue;
            }
            if sql.is_empty() {
                start = n + 1;
            }
            sql.push_str(code);
            sql.push('\n');
            if code.trim_end().ends_with(';') {
                block.push(Statement {
                    at: format!("{name}:{start}"),
                    sql: std::mem::take(&mut sql),
                    expect: expectation(comment),
                });
            }
        }
        assert!(sql.trim().is_empty(), "{name}: a statement without its ';'");
        out.push(block);
    }
    out
}

/// The names the blocks use, bound to rows made for them.
struct Fixture(Vec<(&'static str, String)>);

impl Fixture {
    fn make(db: &mut dyn Backend) -> Fixture {
        let one = |db: &mut dyn Backend, sql: &str, p: &[Param]| -> String {
            db.query(sql, p).unwrap()[0][0].to_string()
        };
        let thread = one(
            db,
            "SELECT mem_thread_create('project:webapp', 'Login feature')",
            &[],
        );
        for i in 0..10 {
            db.query(
                "SELECT mem_message_add($1, 'user', $2)",
                &[
                    Param::Text(thread.clone()),
                    Param::Text(format!("step {i}: token refresh with oauth in LoginSchema")),
                ],
            )
            .unwrap();
        }
        let task = |db: &mut dyn Backend, options: &str| -> String {
            one(
                db,
                "SELECT task_create('Fixture task', $1)",
                &[Param::Text(options.into())],
            )
        };
        let epic = task(db, r#"{"type":"epic"}"#);
        task(db, r#"{"id":"task-1","labels":["auth"]}"#);
        let (tests, refresh) = (task(db, "{}"), task(db, "{}"));
        let (a, b) = (task(db, "{}"), task(db, "{}"));
        Fixture(vec![
            ("<thread id>", thread.clone()),
            ("<thread>", thread.clone()),
            ("<epic id>", epic),
            ("<a>", a),
            ("<b>", b),
            (":thread", format!("'{thread}'")),
            (":tests", format!("'{tests}'")),
            (":refresh", format!("'{refresh}'")),
        ])
    }

    fn apply(&self, sql: &str) -> String {
        self.0
            .iter()
            .fold(sql.to_string(), |s, (name, value)| s.replace(name, value))
    }
}

fn run(db: &mut dyn Backend, fx: &Fixture, st: &Statement) {
    let sql = fx.apply(&st.sql);
    let sql = sql.trim().trim_end_matches(';');
    let got = db.query(sql, &[]);
    let at = format!("{} ({}): {sql}", st.at, db.name());
    match (&st.expect, got) {
        (Expect::Error(m), Err(e)) => {
            let m = fx.apply(m);
            assert!(
                e.contains(&m),
                "{at}\nwanted an error with {m:?}, got {e:?}"
            );
        }
        (Expect::Error(m), Ok(_)) => panic!("{at}\nwanted the error {m:?}, it ran"),
        (_, Err(e)) => panic!("{at}\nfailed: {e}"),
        (Expect::Nothing, Ok(_)) => {}
        (Expect::NoRows, Ok(rows)) => assert!(rows.is_empty(), "{at}\nwanted no rows: {rows:?}"),
        (Expect::Value(v), Ok(rows)) => {
            let cell = rows.first().and_then(|r| r.first()).map(Cell::to_string);
            assert_eq!(cell.as_deref(), Some(v.as_str()), "{at}");
        }
    }
}

fn files() -> Vec<std::path::PathBuf> {
    let root = agentmem_tests::root();
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<_> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

fn creates_extension(block: &[Statement]) -> bool {
    block.iter().any(|s| s.sql.contains("CREATE EXTENSION"))
}

/// `ALTER EXTENSION agentmem UPDATE` is how Postgres migrates; SQLite's `mem_init()` has no
/// such statement.
fn alters_extension(block: &[Statement]) -> bool {
    block.iter().any(|s| s.sql.contains("ALTER EXTENSION"))
}

fn creates_role(block: &[Statement]) -> bool {
    block.iter().any(|s| s.sql.contains("CREATE ROLE"))
}

#[test]
fn sql_blocks_run_on_sqlite() {
    let mut ran = 0;
    for file in files() {
        let mut db = Sqlite::open(":memory:");
        let fx = Fixture::make(&mut db);
        for block in blocks(&file)
            .iter()
            .filter(|b| !creates_extension(b) && !alters_extension(b) && !creates_role(b))
        {
            for st in block {
                run(&mut db, &fx, st);
                ran += 1;
            }
        }
    }
    assert!(ran > 20, "only {ran} statements found");
}

#[test]
fn sql_blocks_run_on_postgres() {
    let Some(url) = agentmem_tests::pg_url() else {
        return;
    };
    let mut db = Postgres::connect(&url);
    for file in files() {
        let (install, rest): (Vec<_>, Vec<_>) = blocks(&file)
            .into_iter()
            .partition(|b| creates_extension(b));
        for block in install {
            db.query("DROP EXTENSION IF EXISTS agentmem CASCADE", &[])
                .unwrap();
            for st in &block {
                run(&mut db, &Fixture(Vec::new()), st);
            }
        }
        db.reset().unwrap();
        let fx = Fixture::make(&mut db);
        let (roles, rest): (Vec<_>, Vec<_>) = rest.into_iter().partition(|b| creates_role(b));
        for st in rest.iter().flatten() {
            run(&mut db, &fx, st);
        }
        for block in roles {
            db.query("BEGIN", &[]).unwrap();
            for st in &block {
                run(&mut db, &fx, st);
            }
            db.query("ROLLBACK", &[]).unwrap();
        }
    }
    db.reset().unwrap();
}
