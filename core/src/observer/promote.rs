//! `mem_session_finalize`: the promotion pipeline, from a finished session's signals to
//! validated memories, in one transaction.
//!
//! The filters run in the seed's order: the session type's gate (which classes it may
//! promote), validation (a failed session keeps only its dead ends), frequency (each class's
//! minimum of sessions), value (below 0.4 is noise), the trust gate (a signal that arose
//! after the session's first web call needs review and loses 30% of its confidence), then
//! the strongest first up to the type's cap. Novelty is the memories' own rule: content that
//! is already a memory reinforces it instead of making another. Every candidate appears in
//! the answer, promoted or with the reason it was not.

use super::signals::{self, Candidate, MIN_VALUE};
use super::synthesis;
use crate::cluster::route;
use crate::json_opts::Opts;
use crate::memories::remember;
use crate::{Conn, Error, Result, Value};
use serde_json::{json, Value as Json};

/// The outcomes a session may end with.
pub(crate) const OUTCOMES: &[&str] = &["success", "failure", "partial", "abandoned"];

/// Each session type's gate: the most memories it promotes, and the classes it promotes
/// from (`None`: all).
pub(crate) fn gate(session_type: &str) -> (usize, Option<&'static [&'static str]>) {
    match session_type {
        "build" => (20, None),
        "insights" => (5, Some(&["co_access", "self_correction", "repeated_grep"])),
        // The roadmap's signals (decisions, requirements) are the agent's to state.
        "roadmap" => (3, Some(&[])),
        "terminal" => (3, Some(&["error_retry", "tool_sequence", "dead_end"])),
        "changelog" => (0, Some(&[])),
        "spec" => (3, Some(&["file_access", "repeated_grep", "external_reference"])),
        "pr_review" => (8, Some(&["error_retry", "self_correction", "dead_end"])),
        _ => (3, Some(&[])),
    }
}

/// Most confidence a promoted memory starts with: the user's confirmation or use raise it.
const MAX_CONFIDENCE: f64 = 0.9;

/// `mem_session_finalize(session_id, outcome [, options])` → JSON `{session_id, outcome,
/// promoted, discarded, synthesis}` (`synthesis`: the prompt to send, or null). A second call answers what the first did. Options: `now`.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn finalize(conn: &mut dyn Conn, session_id: &str, outcome: &str, options: Option<&str>) -> Result<String> {
    if !OUTCOMES.contains(&outcome) {
        return Err(Error::invalid("outcome", format!("must be one of {}", OUTCOMES.join(", "))));
    }
    let o = Opts::parse("options", options, &["now"])?;
    let now = conn.now_or(o.opt_int("now")?)?;
    let row = route::query(
        conn,
        "UPDATE mem_observer_sessions SET updated_at = updated_at WHERE id = ?1{home} \
         RETURNING resource_id, status, session_type, CAST(result AS TEXT)",
        &[session_id.into()],
    )?
        .into_iter()
        .next()
        .ok_or_else(|| Error::not_found("session", session_id))?;
    if row[1].as_str() == Some("finalized") {
        return Ok(row[3].as_str().unwrap_or("{}").to_owned());
    }
    // The signals read the tables: they take the events still in the log first.
    let (state, _) = super::store::checkpoint_now(conn, session_id)?;
    let resource = row[0].as_str().unwrap_or_default().to_owned();
    let session_type = row[2].as_str().unwrap_or("build").to_owned();
    let external = state.external_step;
    let mut candidates = signals::detect(conn, session_id, &resource, &session_type)?;
    candidates.sort_by(|a, b| {
        let (va, vb) = (a.class.value(a.sessions), b.class.value(b.sessions));
        vb.total_cmp(&va).then_with(|| a.class.name.cmp(b.class.name)).then_with(|| a.key.cmp(&b.key))
    });
    let (cap, classes) = gate(&session_type);
    let failed = matches!(outcome, "failure" | "abandoned");
    let mut kept: Vec<Candidate> = Vec::new();
    let mut discarded = Vec::new();
    let mut contents: Vec<String> = Vec::new();
    for c in candidates {
        let value = c.class.value(c.sessions);
        let reason = if classes.is_some_and(|cs| !cs.contains(&c.class.name)) {
            Some(format!("gate: {session_type} sessions do not promote {}", c.class.name))
        } else if failed && c.class.name != "dead_end" {
            Some(format!("validation: the session ended in {outcome}; only dead ends are kept"))
        } else if c.sessions < c.class.min_sessions {
            Some(format!("frequency: seen in {} of the {} sessions it needs", c.sessions, c.class.min_sessions))
        } else if value < MIN_VALUE {
            Some(format!("value: {value:.2} is below {MIN_VALUE}"))
        } else if contents.contains(&c.content) {
            Some("novelty: another signal of this session says the same".to_owned())
        } else if kept.len() >= cap {
            Some(format!("cap: {session_type} sessions promote at most {cap}"))
        } else {
            None
        };
        match reason {
            Some(reason) => discarded.push(json!({
                "class": c.class.name, "key": c.key, "sessions": c.sessions, "reason": reason,
            })),
            None => {
                contents.push(c.content.clone());
                kept.push(c);
            }
        }
    }
    // Written in the order of their content, whatever their rank: two sessions finishing at
    // once then take the memories' unique keys in the same order and never wait on each other
    // in a circle. The answer lists them by rank.
    let mut order: Vec<usize> = (0..kept.len()).collect();
    order.sort_by(|&a, &b| kept[a].content.cmp(&kept[b].content));
    let mut promoted = vec![Json::Null; kept.len()];
    if !kept.is_empty() {
        crate::memories::hold_index(conn, &resource)?;
    }
    for i in order {
        let c = &kept[i];
        promoted[i] = store(conn, session_id, &resource, c, c.class.value(c.sessions), external, now)?;
    }
    let synthesis = if session_type == "changelog" {
        None
    } else {
        synthesis::request(conn, session_id, &resource, outcome, &kept)?
    };
    let answer = json!({
        "session_id": session_id,
        "outcome": outcome,
        "promoted": promoted,
        "discarded": discarded,
        "synthesis": synthesis,
    })
    .to_string();
    route::execute(
        conn,
        "UPDATE mem_observer_sessions SET status = 'finalized', outcome = ?2, \
           result = CAST(?3 AS @JSON), finalized_at = ?4, updated_at = ?4, synthesis = ?5 \
         WHERE id = ?1{home}",
        &[
            session_id.into(),
            outcome.into(),
            answer.as_str().into(),
            Value::Int(now),
            synthesis.as_ref().map(|_| "pending").into(),
        ],
    )?;
    Ok(answer)
}

/// Writes one promoted candidate as a memory; what the answer says of it.
fn store(
    conn: &mut dyn Conn,
    session_id: &str,
    resource: &str,
    c: &Candidate,
    value: f64,
    external: Option<i64>,
    now: i64,
) -> Result<Json> {
    let tainted = external.is_some_and(|x| c.step > x);
    let confidence = value.min(MAX_CONFIDENCE);
    let memory = json!({
        "type": c.class.promotes_to,
        "content": c.content,
        "confidence": confidence,
        "related_files": c.files,
        "tags": ["observer", c.class.name],
        "source": "observer_inferred",
        "session_id": session_id,
    });
    let options = json!({"after_external_tool": tainted, "secrets": "redact", "now": now});
    let stored: Json = serde_json::from_str(&remember::remember(
        conn,
        resource,
        &memory.to_string(),
        Some(&options.to_string()),
    )?)
    .map_err(|e| Error::internal(format!("mem_remember answered malformed JSON: {e}")))?;
    Ok(json!({
        "memory_id": stored["id"],
        "created": stored["created"],
        "class": c.class.name,
        "key": c.key,
        "type": c.class.promotes_to,
        "content": c.content,
        "files": c.files,
        "sessions": c.sessions,
        "value": (value * 1000.0).round() / 1000.0,
        "needs_review": tainted,
        "redacted": stored["redacted"],
    }))
}
