//! Shared machinery of the test suites: the two backends behind one small interface, so a
//! case written once runs on SQLite (the built `dist/agentmem0.so`, loaded at run time like any
//! client would) and on a real PostgreSQL server with `CREATE EXTENSION agentmem`.

pub mod backend;
pub mod cases;
pub mod closure;
pub mod doc_blocks;
pub mod graph_oracle;
pub mod invariants;
pub mod sample;
pub mod tenants;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The workspace root (tests run with the `tests/` crate as working directory).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The SQLite extension to load: `$AGENTMEM_SQLITE_EXT` or `dist/agentmem0`.
pub fn sqlite_extension() -> PathBuf {
    std::env::var_os("AGENTMEM_SQLITE_EXT")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("dist/agentmem0"))
}

/// Connection string of the test Postgres server (`$AGENTMEM_PG`), or `None` when unset.
/// `make test` always sets it and also sets `AGENTMEM_PG_REQUIRED=1`, so a missing server is a
/// failure there, never a silent skip.
pub fn pg_url() -> Option<String> {
    match std::env::var("AGENTMEM_PG") {
        Ok(url) => Some(url),
        Err(_) => {
            assert!(
                std::env::var_os("AGENTMEM_PG_REQUIRED").is_none(),
                "AGENTMEM_PG_REQUIRED is set but AGENTMEM_PG is not"
            );
            eprintln!("AGENTMEM_PG not set: skipping the Postgres half (run `make test` for both)");
            None
        }
    }
}

/// A small deterministic PRNG (xorshift64) for the randomised tests: a failing run replays.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// True with the given probability in percent.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// A SQLite file in WAL mode, new, in a temporary folder of its own named after `name`: the
/// folder (to remove at the end), the file, and a connection with the extension.
pub fn wal_database(name: &str) -> (PathBuf, PathBuf, backend::Sqlite) {
    let dir = std::env::temp_dir().join(format!("agentmem-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.db"));
    let _ = std::fs::remove_file(&path);
    let db = backend::Sqlite::open(path.to_str().unwrap());
    db.conn
        .query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
        .unwrap();
    (dir, path, db)
}

/// A `sqlite3` shell script that loads the extension, waits for locks and stops at the first
/// error, then runs `statements`.
pub fn shell_script(statements: impl IntoIterator<Item = String>) -> String {
    let mut script = format!(
        ".load {}\n.timeout 60000\n.bail on\n",
        sqlite_extension().display()
    );
    for s in statements {
        script.push_str(&s);
        script.push_str(";\n");
    }
    script
}

/// Runs one `sqlite3` shell per script on the database file `db`, all at once, and returns
/// their outputs in script order. Each shell's stdin is written and its pipes drained on their
/// own threads: a shell blocked on a full pipe would hold its write transaction and stall the
/// others.
pub fn sqlite_shells(db: &Path, scripts: Vec<String>) -> Vec<Output> {
    let running: Vec<_> = scripts
        .into_iter()
        .map(|script| {
            let mut child = Command::new("sqlite3")
                .arg(db)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("sqlite3 shell");
            let mut stdin = child.stdin.take().unwrap();
            std::thread::spawn(move || stdin.write_all(script.as_bytes()).unwrap());
            std::thread::spawn(move || child.wait_with_output().unwrap())
        })
        .collect();
    running.into_iter().map(|h| h.join().unwrap()).collect()
}

/// A new, empty database `name` on the test server (`url` is `$AGENTMEM_PG`), dropped first
/// when a run before left it; its connection string. For the suites that need a database of
/// their own: updates, tenants, the CLI.
pub fn pg_database(url: &str, name: &str) -> String {
    let server: Vec<&str> = url
        .split_whitespace()
        .filter(|kv| !kv.starts_with("dbname="))
        .collect();
    let mut admin = postgres::Client::connect(url, postgres::NoTls)
        .unwrap_or_else(|e| panic!("connecting to Postgres at {url}: {e}"));
    // One statement per call: several in one string run as one transaction, which DROP
    // DATABASE and CREATE DATABASE refuse.
    for sql in [
        format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
        format!("CREATE DATABASE {name}"),
    ] {
        admin.batch_execute(&sql).unwrap();
    }
    format!("{} dbname={name}", server.join(" "))
}

/// Drops the database `name` of the test server, if it is there.
pub fn pg_drop_database(url: &str, name: &str) {
    let mut admin = postgres::Client::connect(url, postgres::NoTls).unwrap();
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .unwrap();
}
