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

/// `make sqlite` replaces dist/agentmem0.so while agents may have it loaded: the new file
/// must arrive by rename, never by writing over the mapped one (which kills them with SIGBUS).
#[test]
fn replacing_the_library_spares_processes_that_loaded_it() {
    use std::io::{BufRead, BufReader, Write};
    let dir = std::env::temp_dir().join(format!("agentmem-swap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let lib = dir.join("agentmem0.so");
    let src = agentmem_tests::sqlite_extension();
    let src = if src.exists() {
        src
    } else {
        src.with_extension("so")
    };
    std::fs::copy(&src, &lib).unwrap();
    // A process that loads the library, waits, then runs code it has not run yet.
    let script = r#"
import sqlite3, sys
c = sqlite3.connect(':memory:')
c.enable_load_extension(True)
c.load_extension(sys.argv[1])
print(c.execute('select mem_version()').fetchone()[0], flush=True)
sys.stdin.readline()
c.execute('select mem_init()')
t = c.execute("select mem_thread_create('r')").fetchone()[0]
for i in range(200):
    c.execute("select mem_message_add(?, 'user', ?)", (t, 'message number %d about LoginSchema' % i))
print(len(c.execute("select * from mem_search('LoginSchema', '{\"limit\":50}')").fetchall()), flush=True)
"#;
    let mut child = std::process::Command::new("/usr/bin/python3")
        .args(["-c", script])
        .arg(&lib)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), agentmem_core::VERSION);
    // Another "build" lands: bytes unlike the loaded ones.
    let junk = dir.join("junk");
    std::fs::write(&junk, vec![0u8; 4096]).unwrap();
    run(
        Command::new(agentmem_tests::root().join("scripts/place.sh"))
            .arg(&junk)
            .arg(&lib),
    );
    assert_eq!(std::fs::metadata(&lib).unwrap().len(), 4096);
    child.stdin.take().unwrap().write_all(b"go\n").unwrap();
    line.clear();
    out.read_line(&mut line).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "the process died: {status:?}");
    assert_eq!(line.trim(), "50");
    std::fs::remove_dir_all(&dir).ok();
}

/// The README's Python blocks run as pasted, with Debian's python3 (tests/docs/run_blocks.py).
#[test]
fn readme_python_blocks_run() {
    let script = agentmem_tests::root().join("tests/docs/run_blocks.py");
    run(Command::new("/usr/bin/python3").arg(&script));
}
