//! Every SQL block of the README and `docs/` runs as pasted, on SQLite and on Postgres.
//!
//! Each file runs in a fresh database (`mem_init()` done, nothing else) and its blocks run in
//! order, as a reader pastes them: an example uses only what the blocks before it in the same
//! file made, naming rows by the ids they were given (`'{"id":"thread-1"}'`) or by a subquery.
//! Nothing is substituted: a block that still holds a placeholder for the reader to fill in —
//! a word in angle brackets (`<thread id>`), a `:name` parameter outside string literals, an
//! elided JSON value `"…"` — fails the test. A statement's trailing comment is checked when it
//! states a result: a number or version (`-- 2`), `-- no rows`, or `-- error: <message>` (the
//! statement must fail with it). Lines of the sqlite3 shell (`.load …`) are skipped; a block
//! with `CREATE EXTENSION` runs on Postgres only, first, from a database without the
//! extension, and one with `ALTER EXTENSION` runs on Postgres only; a block with `CREATE ROLE`
//! runs on Postgres only, in a transaction rolled back afterwards (roles belong to the
//! cluster); a block whose first line is a `-- Postgres …` (`-- SQLite …`) comment runs on
//! Postgres (SQLite) only, and one whose first line is `-- Citus …` on a Citus cluster only
//! (`tests/citus.rs`).

use agentmem_tests::backend::{Backend, Postgres, Sqlite};
use agentmem_tests::doc_blocks::{blocks, files, run, Statement};

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

/// Whether the block is for `backend` only ("Postgres", "SQLite" or "Citus").
fn only(block: &[Statement], backend: &str) -> bool {
    block.iter().any(|s| s.only == Some(backend))
}

#[test]
fn sql_blocks_run_on_sqlite() {
    let mut ran = 0;
    for file in files() {
        let mut db = Sqlite::open(":memory:");
        for block in blocks(&file).iter().filter(|b| {
            !creates_extension(b)
                && !alters_extension(b)
                && !creates_role(b)
                && !only(b, "Postgres")
                && !only(b, "Citus")
        }) {
            for st in block {
                run(&mut db, st);
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
            .filter(|b| !only(b, "Citus"))
            .partition(|b| creates_extension(b));
        for block in install {
            db.query("DROP EXTENSION IF EXISTS agentmem CASCADE", &[])
                .unwrap();
            for st in &block {
                run(&mut db, st);
            }
        }
        // A fresh database for the file's other blocks, which run in order.
        db.reset().unwrap();
        for block in rest.into_iter().filter(|b| !only(b, "SQLite")) {
            let role = creates_role(&block);
            if role {
                db.query("BEGIN", &[]).unwrap();
            }
            for st in &block {
                run(&mut db, st);
            }
            if role {
                db.query("ROLLBACK", &[]).unwrap();
            }
        }
    }
    db.reset().unwrap();
}
