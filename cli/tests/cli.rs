//! The `agentmem` binary as a user runs it, over a SQLite file and over Postgres: every
//! command, its tables and its `--json`, the same answers from both databases, an export
//! that imports back whole, errors that name the problem, and an MCP session through the
//! official Python SDK.

use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_agentmem");

/// Where a session's memory is: the CLI's own flags for it.
#[derive(Clone)]
struct Memory(Vec<String>);

impl Memory {
    fn sqlite(path: &Path) -> Memory {
        Memory(vec!["--db".into(), path.display().to_string()])
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            // The tests' own AGENTMEM_PG names their server, not this memory.
            .env_remove("AGENTMEM_PG")
            .env_remove("AGENTMEM_DB")
            .args(&self.0)
            .args(args)
            .output()
            .expect("running agentmem")
    }

    /// Runs a command that must succeed; its standard output.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "agentmem {args:?} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// The command's `--json` answer.
    fn json(&self, args: &[&str]) -> Json {
        let mut a = vec!["--json"];
        a.extend_from_slice(args);
        let text = self.ok(&a);
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{args:?}: {e}: {text}"))
    }

    /// Runs a command that must fail; its standard error.
    fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(!out.status.success(), "agentmem {args:?} succeeded");
        String::from_utf8(out.stderr).unwrap()
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("agentmem-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A fixed session: a thread with messages, tasks with a dependency, a claim and a close, a
/// memory. Ids are given, so two databases hold the same rows.
fn session(m: &Memory, setup: &dyn Fn(&str)) -> Vec<Json> {
    setup(
        "SELECT mem_thread_create('project:webapp', 'Login feature', NULL, '{\"id\":\"t1\",\"agent_id\":\"agent-7\"}'); \
         SELECT mem_message_add('t1', 'user', 'Implement LoginSchema with zod in src/auth/login.ts', '{\"id\":\"m1\",\"created_at\":1700000000000}'); \
         SELECT mem_message_add('t1', 'assistant', 'export const LoginSchema = z.object({ email: z.string() })', '{\"id\":\"m2\",\"created_at\":1700000001000}'); \
         SELECT mem_remember('project:webapp', '{\"type\":\"gotcha\",\"content\":\"Run the migrations before the e2e tests.\"}')",
    );
    let mut seen = Vec::new();
    assert_eq!(
        m.json(&[
            "tasks",
            "create",
            "Add refresh tokens",
            "--id",
            "refresh",
            "--priority",
            "1",
            "--label",
            "auth"
        ]),
        json!("refresh")
    );
    assert_eq!(
        m.json(&["tasks", "create", "Test the refresh flow", "--id", "tests"]),
        json!("tests")
    );
    setup("SELECT task_dep_add('tests', 'refresh')");
    let ready = m.json(&["tasks", "ready"]);
    assert_eq!(ready.as_array().unwrap().len(), 1, "{ready}");
    assert_eq!(ready[0]["id"], "refresh");
    assert_eq!(ready[0]["labels"], json!(r#"["auth"]"#));
    seen.push(ready);
    m.ok(&[
        "tasks",
        "claim",
        "refresh",
        "--session",
        "s1",
        "--thread",
        "t1",
    ]);
    let refused = m.fails(&["tasks", "claim", "refresh", "--session", "s2"]);
    assert!(refused.contains("claimed"), "{refused}");
    m.ok(&[
        "tasks",
        "close",
        "refresh",
        "--summary",
        "Rotating refresh tokens",
    ]);
    let shown = m.json(&["tasks", "show", "tests"]);
    assert_eq!(shown["isBlocked"], false, "{shown}");
    seen.push(shown["task"]["dependencies"].clone());
    seen.push(m.json(&["tasks", "list", "--status", "closed"]));

    let hits = m.json(&["search", "LoginSchema", "--limit", "5"]);
    let ids: Vec<&str> = hits
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["message_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2, "{hits}");
    seen.push(json!(ids));
    let threads = m.json(&["threads", "--resource", "project:webapp"]);
    assert_eq!(threads[0]["message_count"], 2, "{threads}");
    seen.push(json!([
        threads[0]["id"],
        threads[0]["title"],
        threads[0]["agent_id"]
    ]));
    let messages = m.json(&["messages", "t1", "--desc", "--limit", "1"]);
    assert_eq!(messages[0]["message_index"], 1, "{messages}");
    seen.push(messages);
    let recalled = m.json(&["recall", "e2e migrations", "--resource", "project:webapp"]);
    assert_eq!(recalled[0]["kind"], "memory", "{recalled}");
    seen.push(recalled[0]["content"].clone());
    let stats = m.json(&["stats", "--by", "agent"]);
    assert_eq!(stats["messages"], 2, "{stats}");
    assert_eq!(stats["breakdown"][0]["key"], "agent-7", "{stats}");
    seen.push(json!([stats["tasks"], stats["threads"], stats["tokens"]]));
    let tools = m.json(&["tools", "--format", "anthropic"]);
    assert_eq!(tools.as_array().unwrap().len(), 7);
    let answer = m.json(&[
        "tool",
        "memory_search",
        r#"{"action":"search","query":"zod","limit":5}"#,
        "--resource",
        "project:other",
    ]);
    assert_eq!(
        answer["totalHits"], 0,
        "the resource bounds the search: {answer}"
    );
    let answer = m.json(&[
        "tool",
        "memory_search",
        r#"{"action":"search","query":"zod"}"#,
    ]);
    assert_eq!(answer["results"][0]["id"], "m1", "{answer}");
    seen.push(answer);
    assert_eq!(m.json(&["check"]), json!([]));
    seen
}

/// People get aligned tables with times as dates, and errors name the problem.
fn human_output(m: &Memory) {
    let table = m.ok(&["threads"]);
    let mut lines = table.lines();
    let header = lines.next().unwrap();
    for col in ["id", "title", "state", "message_count", "updated_at"] {
        assert!(header.contains(col), "{table}");
    }
    assert!(lines.next().unwrap().starts_with('─'), "{table}");
    assert!(table.contains("Login feature"), "{table}");
    assert!(table.contains("(1 row)"), "{table}");
    let messages = m.ok(&["messages", "t1"]);
    assert!(messages.contains("2023-11-14 22:13:20"), "{messages}");
    let narrow = m.ok(&["--width", "12", "messages", "t1"]);
    assert!(narrow.contains("Implement L…"), "{narrow}");

    let e = m.fails(&["tasks", "close", "nope", "--summary", "x"]);
    assert!(e.starts_with("agentmem: ") && e.contains("nope"), "{e}");
    let e = m.fails(&["search", "x", "--role", "robot"]);
    assert!(e.contains("role"), "{e}");
    let e = m.fails(&["forget", "project:webapp"]);
    assert!(e.contains("--yes"), "{e}");
    let e = m.fails(&["import", "/nonexistent/export.json"]);
    assert!(e.contains("/nonexistent/export.json"), "{e}");
}

/// `export` streams the rows and writes `mem_export`'s document; `import` reads it into an
/// empty database, which then exports the same; `--progress` reports both.
fn export_round_trip(m: &Memory, fresh: &Memory, dir: &Path, direct: &dyn Fn() -> Json) {
    let file = dir.join("export.json");
    let out = m.run(&["export", "--progress", "-o", file.to_str().unwrap()]);
    assert!(out.status.success());
    let progress = String::from_utf8_lossy(&out.stderr);
    assert!(
        progress.starts_with("export: ") && progress.contains(" records"),
        "{progress}"
    );
    let exported: Json = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        exported,
        direct(),
        "the CLI's export is mem_export's document"
    );
    let markdown = m.ok(&["export", "--thread", "t1", "--format", "markdown"]);
    assert!(
        markdown.contains("Login feature") && markdown.contains("LoginSchema"),
        "{markdown}"
    );

    let out = fresh.run(&["import", "--progress", file.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("import: "));
    let counts: Json = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(counts["mem_messages"], 2, "{counts}");
    let again = fresh.ok(&["export"]);
    assert_eq!(serde_json::from_str::<Json>(&again).unwrap(), exported);

    let out = fresh.run(&["reindex", "--progress"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("2 messages indexed"));
    fresh.ok(&["optimize", "-q"]);
    let forgot = fresh.json(&["forget", "project:webapp", "--yes"]);
    assert_eq!(forgot["mem_messages"], 2, "{forgot}");
    assert_eq!(fresh.json(&["search", "LoginSchema"]), json!([]));
}

/// Runs SQL on a SQLite file through the built extension (`dist/agentmem0`).
fn sqlite_setup(path: &Path) -> impl Fn(&str) + '_ {
    move |sql: &str| {
        let conn = rusqlite::Connection::open(path).unwrap();
        // SAFETY: this repository's extension.
        unsafe {
            conn.load_extension_enable().unwrap();
            conn.load_extension(agentmem_tests::sqlite_extension(), None::<&str>)
                .unwrap();
        }
        conn.execute_batch(&format!("SELECT mem_init(); {sql}"))
            .unwrap();
    }
}

#[test]
fn sqlite_session() {
    let dir = temp_dir("sqlite");
    let path = dir.join("memory.db");
    let m = Memory::sqlite(&path);
    assert_eq!(
        m.json(&["init"]),
        json!(agentmem_core::schema::latest_version())
    );
    let seen = session(&m, &sqlite_setup(&path));
    human_output(&m);
    let fresh = Memory::sqlite(&dir.join("fresh.db"));
    let direct = || -> Json {
        let conn = rusqlite::Connection::open(&path).unwrap();
        unsafe {
            conn.load_extension_enable().unwrap();
            conn.load_extension(agentmem_tests::sqlite_extension(), None::<&str>)
                .unwrap();
        }
        let text: String = conn
            .query_row("SELECT mem_export('{}')", [], |r| r.get(0))
            .unwrap();
        serde_json::from_str(&text).unwrap()
    };
    export_round_trip(&m, &fresh, &dir, &direct);
    std::fs::write(dir.join("seen.json"), serde_json::to_string(&seen).unwrap()).unwrap();
    mcp_session(&Memory::sqlite(&dir.join("mcp.db")));
    if std::env::var_os("AGENTMEM_MCP_PYTHON").is_some() {
        observed_mcp_session(&dir.join("mcp.db"));
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Given a resource and a session, the MCP server recorded each call and its answer for the
/// observer: every tool of the session was called, each call has its result.
fn observed_mcp_session(db: &Path) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let (resource, status, events): (String, String, i64) = conn
        .query_row(
            "SELECT resource_id, status, events FROM mem_observer_sessions WHERE id = 'agent-7'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("the MCP session's observer session");
    assert_eq!(
        (resource.as_str(), status.as_str()),
        ("project:webapp", "open")
    );
    assert!(events >= 14 && events % 2 == 0, "{events} events");
    let tools: i64 = conn
        .query_row(
            "SELECT json_array_length(recent) FROM mem_observer_sessions",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(tools, 8, "the last 8 calls are kept");
}

/// A new, empty database of the test cluster with the extension; its connection string.
fn pg_database(url: &str, name: &str) -> String {
    let dsn = agentmem_tests::pg_database(url, name);
    postgres::Client::connect(&dsn, postgres::NoTls)
        .unwrap()
        .batch_execute("CREATE EXTENSION agentmem")
        .unwrap();
    dsn
}

#[test]
fn postgres_session_answers_as_sqlite_does() {
    let Some(url) = agentmem_tests::pg_url() else {
        return;
    };
    let dir = temp_dir("pg");
    let dsn = pg_database(&url, "agentmem_cli");
    let m = Memory(vec!["--pg".into(), dsn.clone()]);
    let setup = |sql: &str| {
        postgres::Client::connect(&dsn, postgres::NoTls)
            .unwrap()
            .batch_execute(sql)
            .unwrap();
    };
    let seen = session(&m, &setup);
    human_output(&m);

    // The same session on SQLite sees the same, value for value.
    let sdir = temp_dir("pg-sqlite");
    let spath = sdir.join("memory.db");
    let sqlite_seen = session(&Memory::sqlite(&spath), &sqlite_setup(&spath));
    assert_eq!(
        normalise(json!(seen)),
        normalise(json!(sqlite_seen)),
        "the CLI answers differ between Postgres and SQLite"
    );

    let fresh = Memory(vec!["--pg".into(), pg_database(&url, "agentmem_cli_fresh")]);
    let direct = || -> Json {
        let mut c = postgres::Client::connect(&dsn, postgres::NoTls).unwrap();
        let text: String = c.query_one("SELECT mem_export('{}')", &[]).unwrap().get(0);
        serde_json::from_str(&text).unwrap()
    };
    export_round_trip(&m, &fresh, &dir, &direct);
    mcp_session(&Memory(vec![
        "--pg".into(),
        pg_database(&url, "agentmem_cli_mcp"),
    ]));

    let e = Memory(vec!["--pg".into(), format!("{url} dbname=postgres")]).fails(&["threads"]);
    assert!(e.contains("CREATE EXTENSION agentmem"), "{e}");
    for name in ["agentmem_cli", "agentmem_cli_fresh", "agentmem_cli_mcp"] {
        agentmem_tests::pg_drop_database(&url, name);
    }
    std::fs::remove_dir_all(&dir).ok();
    std::fs::remove_dir_all(&sdir).ok();
}

/// Times and generated ids differ between runs; everything else must not.
fn normalise(v: Json) -> Json {
    match v {
        Json::Object(m) => Json::Object(
            m.into_iter()
                .filter(|(k, _)| !k.ends_with("_at") && !k.ends_with("At") && k != "score")
                .map(|(k, v)| (k, normalise(v)))
                .collect(),
        ),
        Json::Array(a) => Json::Array(a.into_iter().map(normalise).collect()),
        other => other,
    }
}

/// The MCP session of `tests/mcp/mcp_client.py`, through the official Python SDK (the venv
/// `make test` prepares is named by `AGENTMEM_MCP_PYTHON`).
fn mcp_session(m: &Memory) {
    let python = match std::env::var("AGENTMEM_MCP_PYTHON") {
        Ok(p) => p,
        Err(_) => {
            assert!(
                std::env::var_os("AGENTMEM_PG_REQUIRED").is_none(),
                "make test runs the MCP session: AGENTMEM_MCP_PYTHON must be set"
            );
            eprintln!("AGENTMEM_MCP_PYTHON not set: skipping the MCP session");
            return;
        }
    };
    let script = agentmem_tests::root().join("tests/mcp/mcp_client.py");
    let out = Command::new(python)
        .env_remove("AGENTMEM_PG")
        .arg(script)
        .arg(BIN)
        .args(&m.0)
        .output()
        .expect("running the MCP client");
    assert!(
        out.status.success(),
        "MCP session failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = String::from_utf8(out.stdout).unwrap();
    assert!(lines.contains("\"refused\": \"no_such_tool\""), "{lines}");
}

/// docs/cli.md's command block runs as written, line by line, from an empty directory.
#[test]
fn the_documented_commands_run() {
    let doc = std::fs::read_to_string(agentmem_tests::root().join("docs/cli.md")).unwrap();
    let block = doc
        .split("```bash\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a bash block in docs/cli.md");
    let dir = temp_dir("docs");
    let mut ran = 0;
    for line in block.lines() {
        let command = line.split(" # ").next().unwrap().trim();
        let Some(rest) = command.strip_prefix("agentmem ") else {
            panic!("docs/cli.md: not an agentmem command: {line}");
        };
        // The shell's quoting, for the few quoted words the block uses.
        let mut args = Vec::new();
        let mut word = String::new();
        let mut quoted = false;
        for c in rest.chars() {
            match c {
                '"' => quoted = !quoted,
                ' ' if !quoted => {
                    if !word.is_empty() {
                        args.push(std::mem::take(&mut word));
                    }
                }
                c => word.push(c),
            }
        }
        args.push(word);
        let out = Command::new(BIN)
            .env_remove("AGENTMEM_PG")
            .env_remove("AGENTMEM_DB")
            .current_dir(&dir)
            .args(&args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "docs/cli.md: {line}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        ran += 1;
    }
    assert!(ran >= 10, "{ran} commands");
    let md = std::fs::read_to_string(dir.join("memory.md")).unwrap();
    assert!(md.contains("Add refresh tokens"), "{md}");
    std::fs::remove_dir_all(&dir).ok();
}

/// The README's Rust block is `examples/load_with_rusqlite.rs` (cargo builds it with the
/// tests) and runs as written from a directory with the README's `dist/`.
#[test]
fn the_readme_rust_example_runs() {
    let root = agentmem_tests::root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let block = readme
        .split("```rust\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a rust block in the README");
    let example = std::fs::read_to_string(root.join("cli/examples/load_with_rusqlite.rs")).unwrap();
    assert!(
        example.ends_with(block),
        "cli/examples/load_with_rusqlite.rs is not the README's Rust block"
    );
    // Examples are built beside the test binaries: target/<profile>/examples.
    let exe = std::env::current_exe().unwrap();
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .join("examples/load_with_rusqlite");
    let dir = temp_dir("readme");
    std::os::unix::fs::symlink(
        agentmem_tests::sqlite_extension().parent().unwrap(),
        dir.join("dist"),
    )
    .unwrap();
    let out = Command::new(&bin)
        .current_dir(&dir)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e} (cargo builds examples when it runs all of a package's tests: \
                 cargo test -p agentmem-cli)",
                bin.display()
            )
        });
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!(
            "agentmem schema version {}\n",
            agentmem_core::schema::latest_version()
        )
    );
    std::fs::remove_dir_all(&dir).ok();
}
