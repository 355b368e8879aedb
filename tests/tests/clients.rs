//! Real clients: the sqlite3 shell, Python's sqlite3 module and psql.

use std::process::Command;

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn sqlite3_shell_loads_the_extension() {
    let dir = std::env::temp_dir().join(format!("agentmem-shell-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("my.db");
    // The README's one-liner, with the path the README uses.
    let out = run(Command::new("sqlite3")
        .current_dir(agentmem_tests::root())
        .arg(&db)
        .args([
            ".load dist/agentmem0",
            "select mem_init()",
            "select mem_version()",
        ]));
    assert_eq!(
        out,
        format!(
            "{}\n{}\n",
            agentmem_core::schema::latest_version(),
            agentmem_core::VERSION
        )
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Debian's /usr/bin/python3 can load extensions; the pyenv default on this machine cannot.
#[test]
fn python_sqlite3_module() {
    let python = "/usr/bin/python3";
    let can_load = Command::new(python)
        .args([
            "-c",
            "import sqlite3; sqlite3.connect(':memory:').enable_load_extension",
        ])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        can_load,
        "{python} cannot load SQLite extensions (install Debian's python3)"
    );
    let script = agentmem_tests::root().join("tests/python/test_sqlite.py");
    let out = Command::new(python)
        .arg(&script)
        .env("AGENTMEM_SQLITE_EXT", agentmem_tests::sqlite_extension())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("OK"), "{err}");
}

#[test]
fn psql_creates_the_extension() {
    let Some(url) = agentmem_tests::pg_url() else {
        return;
    };
    let out = run(Command::new("psql").args([
        "-X",
        "-q",
        "-A",
        "-t",
        &url,
        "-c",
        "CREATE EXTENSION IF NOT EXISTS agentmem",
        "-c",
        "SELECT mem_version()",
        "-c",
        "SELECT mem_tokens('hello world')",
    ]));
    assert_eq!(out, format!("{}\n2\n", agentmem_core::VERSION));
}
