//! `agentmem index` over a tree a user might have: `.gitignore`d folders, a binary file, a
//! file that is not UTF-8, one over the size limit, a symbolic link loop, a file without a
//! grammar; then runs with nothing changed, a definition renamed and a file deleted — on
//! SQLite, and on Postgres with the same answers.

use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_agentmem");

fn index(target: &[String], dir: &Path) -> Json {
    let out = Command::new(BIN)
        .env_remove("AGENTMEM_PG")
        .env_remove("AGENTMEM_DB")
        .args(target)
        .args([
            "--json",
            "index",
            "--max-size",
            "4000",
            "--resource",
            "project:t",
        ])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn tree(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("agentmem-index-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("src")).unwrap();
    std::fs::create_dir_all(d.join("build")).unwrap();
    let write = |p: &str, b: &[u8]| std::fs::write(d.join(p), b).unwrap();
    write(".gitignore", b"build/\n");
    write(
        "src/app.py",
        b"from .db import connect\n\ndef start():\n    return connect()\n",
    );
    write("src/db.py", b"def connect():\n    return 1\n");
    write("build/gen.py", b"def generated():\n    return 0\n");
    write("src/blob.py", b"def x():\x00\x01\x02\n");
    write("src/latin.py", b"# caf\xe9\ndef y():\n    return 2\n");
    write(
        "src/huge.js",
        format!("const a = '{}';\n", "x".repeat(5000)).as_bytes(),
    );
    write("README.md", b"# notes\n");
    std::os::unix::fs::symlink(&d, d.join("src/loop")).unwrap();
    d
}

/// The figures of an answer that do not depend on the database or the clock.
fn figures(a: &Json) -> Json {
    let mut a = a.clone();
    a.as_object_mut().unwrap().remove("seconds");
    a
}

/// Runs the whole story on one database; the answers, in order.
fn story(target: &[String], dir: &Path) -> Vec<Json> {
    let mut answers = Vec::new();
    let first = index(target, dir);
    assert_eq!(first["files"], 5, "{first}");
    assert_eq!(first["indexed"], 2, "{first}");
    assert_eq!(first["skipped"]["binary"], 1, "{first}");
    assert_eq!(first["skipped"]["not UTF-8"], 1, "{first}");
    assert_eq!(first["skipped"]["larger than --max-size"], 1, "{first}");
    assert_eq!(first["failed"], Json::Array(vec![]), "{first}");
    assert_eq!(first["written"]["edges"]["calls"], 1, "{first}");
    assert_eq!(first["written"]["edges"]["imports"], 1, "{first}");
    answers.push(figures(&first));

    let again = index(target, dir);
    assert_eq!(
        (again["indexed"].as_u64(), again["unchanged"].as_u64()),
        (Some(0), Some(2)),
        "{again}"
    );
    // Nothing was read again: each file's stat is the one its node records.
    assert_eq!(again["written"]["bytes"], 0, "{again}");
    answers.push(figures(&again));

    // Written back the same, as a checkout does: read once to find it unchanged, its new
    // stat recorded, and not read at the next run.
    let db_py = dir.join("src/db.py");
    std::fs::write(&db_py, std::fs::read(&db_py).unwrap()).unwrap();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(&db_py)
        .unwrap()
        .set_modified(later)
        .unwrap();
    let touched = index(target, dir);
    assert_eq!(
        (
            touched["indexed"].as_u64(),
            touched["written"]["bytes"].as_u64()
        ),
        (Some(0), Some(28)),
        "{touched}"
    );
    answers.push(figures(&touched));
    let settled = index(target, dir);
    assert_eq!(settled["written"]["bytes"], 0, "{settled}");

    // The definition is renamed: app.py's call no longer resolves, its edge goes.
    std::fs::write(dir.join("src/db.py"), b"def open_db():\n    return 1\n").unwrap();
    let renamed = index(target, dir);
    assert_eq!(renamed["indexed"], 1, "{renamed}");
    assert_eq!(renamed["written"]["edges"].get("calls"), None, "{renamed}");
    answers.push(figures(&renamed));

    std::fs::remove_file(dir.join("src/app.py")).unwrap();
    let deleted = index(target, dir);
    assert_eq!(
        (deleted["removed"].as_u64(), deleted["files"].as_u64()),
        (Some(1), Some(4)),
        "{deleted}"
    );
    answers.push(figures(&deleted));
    answers
}

/// The graph's rows that must agree: every node and edge by its ends' labels.
fn sqlite_graph(db: &Path) -> Vec<String> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut s = c
        .prepare(
            "SELECT n.type || ' ' || n.label || ' ' || coalesce(n.file_path, '') FROM mem_graph_nodes n \
             UNION ALL SELECT e.type || ' ' || f.label || ' ' || t.label FROM mem_graph_edges e \
             JOIN mem_graph_nodes f ON f.id = e.from_id JOIN mem_graph_nodes t ON t.id = e.to_id ORDER BY 1",
        )
        .unwrap();
    s.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// A Go module below the tree's root: its go.mod is walked with the Go files, and an import
/// reaches each file of the package its path names under the module.
#[test]
fn go_imports_resolve_through_the_go_mod() {
    let d = std::env::temp_dir().join(format!("agentmem-index-go-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("svc/util")).unwrap();
    let write = |p: &str, b: &str| std::fs::write(d.join(p), b).unwrap();
    write("svc/go.mod", "module example.com/svc\n\ngo 1.22\n");
    write(
        "svc/main.go",
        "package main\n\nimport \"example.com/svc/util\"\n\nfunc main() { util.Run() }\n",
    );
    write("svc/util/run.go", "package util\n\nfunc Run() { step() }\n");
    write("svc/util/step.go", "package util\n\nfunc step() {}\n");
    let db = d.with_extension("db");
    let _ = std::fs::remove_file(&db);
    let a = index(&["--db".to_owned(), db.display().to_string()], &d);
    assert_eq!(
        (a["files"].as_u64(), a["indexed"].as_u64()),
        (Some(4), Some(4)),
        "{a}"
    );
    assert_eq!(a["written"]["edges"]["imports"], 2, "{a}");
    assert_eq!(a["written"]["edges"]["calls"], 2, "{a}");
    let graph = sqlite_graph(&db);
    for edge in [
        "imports main.go run.go",
        "imports main.go step.go",
        "module example.com/svc svc/go.mod",
    ] {
        assert!(graph.iter().any(|g| g == edge), "{edge} not in {graph:#?}");
    }
    std::fs::remove_dir_all(&d).ok();
    std::fs::remove_file(&db).ok();
}

#[test]
fn a_tree_indexed_then_changed() {
    let dir = tree("sqlite");
    let db = dir.with_extension("db");
    let _ = std::fs::remove_file(&db);
    let target = vec!["--db".to_owned(), db.display().to_string()];
    story(&target, &dir);
    assert_eq!(
        sqlite_graph(&db),
        [
            "defines db.py open_db",
            "file db.py src/db.py",
            "function open_db src/db.py",
        ]
    );
    std::fs::remove_dir_all(&dir).ok();
    std::fs::remove_file(&db).ok();
}

#[test]
fn postgres_answers_as_sqlite_does() {
    let Some(url) = agentmem_tests::pg_url() else {
        return;
    };
    let dsn = agentmem_tests::pg_database(&url, "agentmem_cli_index");
    postgres::Client::connect(&dsn, postgres::NoTls)
        .unwrap()
        .batch_execute("CREATE EXTENSION agentmem")
        .unwrap();
    let (pg_dir, sqlite_dir) = (tree("pg"), tree("pg-sqlite"));
    let db = sqlite_dir.with_extension("db");
    let _ = std::fs::remove_file(&db);
    let pg = story(&["--pg".to_owned(), dsn], &pg_dir);
    let sqlite = story(&["--db".to_owned(), db.display().to_string()], &sqlite_dir);
    assert_eq!(
        pg, sqlite,
        "agentmem index answers differ between Postgres and SQLite"
    );
    agentmem_tests::pg_drop_database(&url, "agentmem_cli_index");
    for d in [&pg_dir, &sqlite_dir] {
        std::fs::remove_dir_all(d).ok();
    }
    std::fs::remove_file(&db).ok();
}

/// The README's first example runs as written, from the root of this checkout.
#[test]
fn the_readme_first_example_runs() {
    let root = agentmem_tests::root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let block = readme
        .split("```bash\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a bash block in the README");
    assert!(
        block.starts_with("agentmem --db /tmp/code.db index ."),
        "{block}"
    );
    let _ = std::fs::remove_file("/tmp/code.db");
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut last = String::new();
    for line in block.lines().filter(|l| !l.trim().is_empty()) {
        let out = Command::new("bash")
            .args(["-c", line])
            .current_dir(&root)
            .env("PATH", &path)
            .env_remove("AGENTMEM_DB")
            .env_remove("AGENTMEM_PG")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "README: {line}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        last = String::from_utf8(out.stdout).unwrap();
    }
    for importer in ["1|index.rs", "1|files.rs", "1|mod.rs"] {
        assert!(
            last.lines().any(|l| l == importer),
            "{importer} not in:\n{last}"
        );
    }
    std::fs::remove_file("/tmp/code.db").ok();
}

/// `--watch` indexes a change once the tree settles, and says so in a line of JSON.
#[test]
fn watch_indexes_a_change() {
    use std::io::{BufRead, BufReader};
    let dir = tree("watch");
    let db = dir.with_extension("db");
    let _ = std::fs::remove_file(&db);
    let mut child = Watcher(
        Command::new(BIN)
            .env_remove("AGENTMEM_PG")
            .env_remove("AGENTMEM_DB")
            .arg("--db")
            .arg(&db)
            .args([
                "--json",
                "index",
                "--watch",
                "--max-size",
                "4000",
                "--resource",
                "project:t",
            ])
            .arg(&dir)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // Its lines, read on a thread so that a watcher that never answers fails the test.
    let (tx, rx) = std::sync::mpsc::channel();
    let out = child.0.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let wait = std::time::Duration::from_secs(60);
    let next_line = || -> Json {
        serde_json::from_str(&rx.recv_timeout(wait).expect("an answer of the watcher")).unwrap()
    };
    let first = next_line();
    assert_eq!(first["indexed"], 2, "{first}");
    // The next answer's files looked at, indexed and removed.
    let counts = || {
        let a = next_line();
        let n = |k: &str| a[k].as_u64().unwrap_or_else(|| panic!("{k} in {a}"));
        (n("files"), n("indexed"), n("removed"))
    };
    // A held file changed: the pass looks at that file alone.
    std::fs::write(dir.join("src/db.py"), b"def connect():\n    return 2\n").unwrap();
    assert_eq!(counts(), (1, 1, 0));
    // A new file: only a walk can say whether it counts (it does), so the pass walks.
    std::fs::write(dir.join("src/extra.py"), b"def extra():\n    return 3\n").unwrap();
    assert_eq!(counts(), (6, 1, 0));
    // A held file gone: removed without a walk.
    std::fs::remove_file(dir.join("src/db.py")).unwrap();
    assert_eq!(counts(), (0, 0, 1));
    drop(child);
    std::fs::remove_dir_all(&dir).ok();
    std::fs::remove_file(&db).ok();
}

/// A watching process, killed however the test ends (it would hold what the test holds).
struct Watcher(std::process::Child);

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
