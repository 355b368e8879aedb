//! The promotion pipeline on scripted sessions: what each filter keeps and drops, the trust
//! gate, idempotence, and that memories come back reinforced rather than twice.

mod common;

use agentmem_core::Conn;
use common::observer::{finalize, observe, start};
use serde_json::{json, Value as Json};

fn run(db: &mut dyn Conn, id: &str, events: Json) {
    observe(db, id, &events.to_string()).unwrap();
}

fn call(tool: &str, args: Json, step: i64) -> Json {
    json!({"type": "tool_call", "tool": tool, "args": args, "step": step})
}

/// A session that reads the auth pair together, fails a test then passes it, and corrects
/// itself.
fn auth_session(db: &mut dyn Conn, n: usize, outcome: &str) -> Json {
    let id = start(
        db,
        "proj",
        Some(&json!({"id": format!("s{n}")}).to_string()),
    )
    .unwrap();
    run(
        db,
        &id,
        json!([
            call("Read", json!({"file_path": "src/auth/session.ts"}), 1),
            call("Read", json!({"file_path": "src/auth/token.ts"}), 1),
            call("Bash", json!({"command": "npm test auth"}), 2),
            {"type": "tool_result", "tool": "Bash", "ok": false, "step": 2,
             "error": format!("Error: Cannot find module './redis' from src/auth/token.ts:{n}")},
            {"type": "reasoning", "step": 3,
             "text": "Wait, the token is not refreshed in middleware. It happens in token.ts."},
            call("Edit", json!({"file_path": "src/auth/token.ts"}), 3),
            call("Bash", json!({"command": "npm test auth"}), 4),
            {"type": "tool_result", "tool": "Bash", "ok": true, "step": 4},
            {"type": "step_complete", "step": 4, "tokens": 1200},
        ]),
    );
    serde_json::from_str(&finalize(db, &id, outcome, None).unwrap()).unwrap()
}

fn classes(v: &Json, key: &str) -> Vec<String> {
    let mut c: Vec<String> = v[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["class"].as_str().unwrap().to_owned())
        .collect();
    c.sort();
    c.dedup();
    c
}

#[test]
fn signals_are_promoted_once_their_sessions_are_enough() {
    let mut db = common::open_with_triggers();
    let first = auth_session(&mut db, 1, "success");
    // One session: a self-correction stands alone; co-access needs 3, error-retry 2.
    assert_eq!(classes(&first, "promoted"), vec!["self_correction"]);
    let reasons: Vec<&str> = first["discarded"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["reason"].as_str().unwrap())
        .collect();
    assert!(
        reasons
            .iter()
            .any(|r| r.starts_with("frequency: seen in 1 of the 3")),
        "{reasons:?}"
    );

    let second = auth_session(&mut db, 2, "success");
    assert!(
        classes(&second, "promoted").contains(&"error_retry".to_owned()),
        "{second}"
    );
    let third = auth_session(&mut db, 3, "success");
    let promoted = classes(&third, "promoted");
    assert!(promoted.contains(&"co_access".to_owned()), "{third}");
    assert!(promoted.contains(&"test_order".to_owned()), "{third}");

    // The same self-correction each time: one memory, reinforced.
    let rows = db
        .query(
            "SELECT count(*) FROM mem_memories WHERE tags LIKE '%self_correction%'",
            &[],
        )
        .unwrap();
    assert_eq!(rows[0][0].as_i64(), Some(1));
    let m = db
        .query("SELECT type, source, session_id, related_files FROM mem_memories WHERE tags LIKE '%co_access%'", &[])
        .unwrap();
    assert_eq!(m[0][0].as_str(), Some("causal_dependency"));
    assert_eq!(m[0][1].as_str(), Some("observer_inferred"));
    assert_eq!(m[0][2].as_str(), Some("s3"));
    assert_eq!(
        m[0][3].as_str(),
        Some(r#"["src/auth/session.ts","src/auth/token.ts"]"#)
    );
}

#[test]
fn finalize_twice_answers_the_same_and_events_after_it_are_refused() {
    let mut db = common::open_with_triggers();
    let a = auth_session(&mut db, 1, "success");
    let again: Json =
        serde_json::from_str(&finalize(&mut db, "s1", "failure", None).unwrap()).unwrap();
    assert_eq!(a, again);
    let err = observe(&mut db, "s1", r#"{"type":"step_complete","step":9}"#).unwrap_err();
    assert!(err.to_string().contains("is finalized"), "{err}");
    let err = finalize(&mut db, "s1", "done", None).unwrap_err();
    assert!(err.to_string().contains("outcome: must be one of"), "{err}");
}

#[test]
fn a_failed_session_keeps_only_its_dead_ends() {
    let mut db = common::open_with_triggers();
    let events = json!([
        call("Read", json!({"file_path": "src/cache.rs"}), 1),
        {"type": "reasoning", "step": 2, "text": "Actually, the cache is not shared. This approach won't work without a lock."},
    ])
    .to_string();
    let v = common::observer::session(&mut db, "proj", None, &events, "failure").unwrap();
    assert_eq!(classes(&v, "promoted"), vec!["dead_end"]);
    assert_eq!(v["promoted"][0]["type"], "dead_end");
    assert!(v["discarded"]
        .as_array()
        .unwrap()
        .iter()
        .any(|d| d["class"] == "self_correction"
            && d["reason"].as_str().unwrap().starts_with("validation:")));
}

#[test]
fn signals_after_a_web_call_need_review() {
    let mut db = common::open_with_triggers();
    let events = json!([
        {"type": "reasoning", "step": 1, "text": "Correction: the port is 5433."},
        call("WebFetch", json!({"url": "https://example.com/howto"}), 2),
        {"type": "reasoning", "step": 3, "text": "I was wrong about the driver. The pool is actually per request."},
    ])
    .to_string();
    let v = common::observer::session(&mut db, "proj", None, &events, "success").unwrap();
    let by_step: Vec<(bool, f64)> = v["promoted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["needs_review"].as_bool().unwrap(),
                p["value"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(by_step.len(), 2, "{v}");
    let stored = db
        .query(
            "SELECT needs_review, confidence FROM mem_memories ORDER BY content",
            &[],
        )
        .unwrap();
    // "Correction: …" came before the web call, "I was wrong …" after it.
    let flags: Vec<i64> = stored.iter().map(|r| r[0].as_i64().unwrap()).collect();
    assert_eq!(flags, vec![0, 1]);
    let (clean, tainted) = (
        stored[0][1].as_f64().unwrap(),
        stored[1][1].as_f64().unwrap(),
    );
    assert!((tainted - clean * 0.7).abs() < 1e-9, "{clean} {tainted}");
}

#[test]
fn a_changelog_session_promotes_nothing() {
    let mut db = common::open_with_triggers();
    let events =
        json!({"type": "reasoning", "step": 1, "text": "Correction: v2 ships Friday."}).to_string();
    let v = common::observer::session(
        &mut db,
        "proj",
        Some(r#"{"session_type":"changelog"}"#),
        &events,
        "success",
    )
    .unwrap();
    assert_eq!(v["promoted"], json!([]));
    assert!(v["discarded"][0]["reason"]
        .as_str()
        .unwrap()
        .starts_with("gate:"));
}
