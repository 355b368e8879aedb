//! `agentmem observe` fed a recorded Claude Code session, one hook payload per call on
//! standard input, as the hooks configuration of docs/observer.md runs it: the session is
//! started by its first hook, tool calls and results land in the scratchpad with paths made
//! relative to the project, `Stop` finalizes, and a bad payload fails with the reason and
//! exit status 1 (which Claude Code shows and does not treat as a block).

use serde_json::Value as Json;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_agentmem");

fn observe(db: &str, payload: &str, extra: &[&str]) -> Output {
    let mut child = Command::new(BIN)
        .env_remove("AGENTMEM_PG")
        .env_remove("AGENTMEM_DB")
        .args([
            "--db",
            db,
            "--json",
            "observe",
            "--resource",
            "project:webapp",
        ])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running agentmem");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn query(db: &str, sql: &str) -> Vec<Vec<rusqlite::types::Value>> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut st = c.prepare(sql).unwrap();
    let n = st.column_count();
    st.query_map([], |r| (0..n).map(|i| r.get(i)).collect())
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn db_path(name: &str) -> String {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("agentmem-hooks-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("memory.db").display().to_string()
}

#[test]
fn a_recorded_claude_code_session_feeds_the_observer() {
    let db = db_path("session");
    let recorded = include_str!("hooks/claude-code-session.jsonl");
    let mut last = Json::Null;
    for line in recorded.lines() {
        let out = observe(&db, line, &[]);
        assert!(
            out.status.success(),
            "{line}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        last = serde_json::from_slice(&out.stdout).unwrap();
    }
    use rusqlite::types::Value::{Integer, Text};
    let t = |s: &str| Text(s.into());
    // Eight tool calls, each its own step, and their results; two prompts ended steps.
    assert_eq!(
        query(&db, "SELECT resource_id, session_type, status, outcome, step, events FROM mem_observer_sessions"),
        vec![vec![t("project:webapp"), t("build"), t("finalized"), t("success"), Integer(8), Integer(18)]]
    );
    assert_eq!(
        query(
            &db,
            "SELECT path, reads, edits FROM mem_observer_files ORDER BY path"
        ),
        vec![
            vec![t("src/auth/session.ts"), Integer(1), Integer(0)],
            vec![t("src/auth/token.ts"), Integer(1), Integer(1)],
        ]
    );
    assert_eq!(
        query(&db, "SELECT kind, pattern, count FROM mem_observer_patterns WHERE kind IN ('grep', 'test') ORDER BY kind"),
        vec![vec![t("grep"), t("refreshToken"), Integer(3)], vec![t("test"), t("npm test auth"), Integer(2)]]
    );
    // The failing run, fingerprinted from the line of stderr that names the error, resolved
    // by the passing run at step 7.
    assert_eq!(
        query(
            &db,
            "SELECT fingerprint, tool, resolved_step FROM mem_observer_errors"
        ),
        vec![vec![
            t("Error: connect ECONNREFUSED N.N:N"),
            t("Bash"),
            Integer(7)
        ]]
    );
    assert_eq!(
        query(&db, "SELECT count(*) FROM mem_observer_notes"),
        vec![vec![Integer(0)]]
    );
    // Stop answered the finalize; nothing of one session passes the frequency filter
    // except what stands alone.
    assert_eq!(last["hook"], "Stop");
    assert_eq!(last["answer"]["outcome"], "success");
    assert!(last["answer"]["discarded"]
        .as_array()
        .unwrap()
        .iter()
        .any(|d| d["class"] == "co_access"));
}

#[test]
fn a_bad_payload_fails_with_the_reason() {
    let db = db_path("bad");
    for (payload, reason) in [
        ("not json", "payload: malformed JSON"),
        (
            r#"{"hook_event_name":"PostToolUse"}"#,
            "payload.session_id: is required text",
        ),
        (
            r#"{"hook_event_name":"PostToolUse","session_id":"s"}"#,
            "payload.tool_name: is required text",
        ),
    ] {
        let out = observe(&db, payload, &[]);
        assert_eq!(out.status.code(), Some(1), "{payload}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(reason), "{payload}: {err}");
    }
    let out = observe(
        &db,
        r#"{"hook_event_name":"Stop","session_id":"s"}"#,
        &["--outcome", "done"],
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("outcome: must be one of"));
}
