//! `mem_session_summary`: what a session remembered and what it learned, for a panel or a
//! terminal.
//!
//! Remembered: the resource's memories that existed before the session and were used
//! (touched, as recall and the tools touch what they hand out) while it ran. Learned: what
//! its finalize promoted. The tokens saved are an estimate and say so: one step of the
//! session's mean size per memory it used, the work of finding that out again.

use crate::cluster::route;
use crate::text::ellipsis;
use crate::{Conn, Error, Result, Value};
use serde_json::{json, Value as Json};

/// Memories listed as remembered, most recent first.
const MAX_REMEMBERED: i64 = 20;

/// `mem_session_summary(session_id)` → JSON `{session_id, session_type, status, outcome,
/// remembered, learned, tokens_saved_estimate, text}`.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn summary(conn: &mut dyn Conn, session_id: &str) -> Result<String> {
    let row = route::query(
        conn,
        "SELECT resource_id, session_type, status, outcome, started_at, finalized_at, \
           input_tokens, steps_completed, CAST(result AS TEXT) \
         FROM mem_observer_sessions WHERE id = ?1{home}",
        &[session_id.into()],
    )?
        .into_iter()
        .next()
        .ok_or_else(|| Error::not_found("session", session_id))?;
    let started = row[4].as_i64().unwrap_or(0);
    let until = conn.now_or(row[5].as_i64())?;
    let remembered: Vec<Json> = conn
        .query(
            "SELECT id, type, content, citation_text FROM mem_memories WHERE resource_id = ?1 \
               AND created_at < ?2 AND last_accessed_at >= ?2 AND last_accessed_at <= ?3 \
               AND deprecated = 0 ORDER BY last_accessed_at DESC, id LIMIT ?4",
            &[row[0].clone(), Value::Int(started), Value::Int(until), Value::Int(MAX_REMEMBERED)],
        )?
        .into_iter()
        .map(|r| {
            json!({"memory_id": r[0].as_str(), "type": r[1].as_str(), "content": r[2].as_str(),
                   "citation": r[3].as_str()})
        })
        .collect();
    let result: Json = row[8]
        .as_str()
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or(Json::Null);
    let learned: Vec<Json> = result["promoted"].as_array().cloned().unwrap_or_default();
    let steps = row[7].as_i64().unwrap_or(0);
    let per_step = if steps > 0 { row[6].as_i64().unwrap_or(0) / steps } else { 0 };
    let saved = per_step * remembered.len() as i64;
    let mut answer = json!({
        "session_id": session_id,
        "session_type": row[1].as_str(),
        "status": row[2].as_str(),
        "outcome": row[3].as_str(),
        "remembered": remembered,
        "learned": learned,
        "tokens_saved_estimate": saved,
    });
    answer["text"] = Json::String(text(&answer));
    Ok(answer.to_string())
}

/// The summary as the terminal block of the design.
fn text(s: &Json) -> String {
    let mut out = format!(
        "Session complete: {} ({}, {})\n",
        s["session_id"].as_str().unwrap_or(""),
        s["session_type"].as_str().unwrap_or(""),
        s["outcome"].as_str().unwrap_or("open")
    );
    out.push_str(&format!(
        "Memory saved ~{} tokens of discovery this session (estimate)\n",
        thousands(s["tokens_saved_estimate"].as_i64().unwrap_or(0))
    ));
    let remembered = s["remembered"].as_array().map_or(&[][..], |v| v.as_slice());
    out.push_str("\nWhat the agent remembered:\n");
    if remembered.is_empty() {
        out.push_str("  (nothing)\n");
    }
    for m in remembered {
        let label = m["citation"].as_str().unwrap_or_else(|| m["content"].as_str().unwrap_or(""));
        out.push_str(&format!("  - {}\n", ellipsis(label, 80)));
    }
    let learned = s["learned"].as_array().map_or(&[][..], |v| v.as_slice());
    out.push_str(&format!("\nWhat the agent learned ({} new memories):\n", learned.len()));
    for (i, m) in learned.iter().enumerate() {
        let files: Vec<&str> = m["files"].as_array().map_or(Vec::new(), |f| f.iter().filter_map(Json::as_str).collect());
        let ty = m["type"].as_str().unwrap_or("").replace('_', " ").to_uppercase();
        let review = if m["needs_review"].as_bool() == Some(true) { "  [needs review]" } else { "" };
        let head = format!("  {}/{}  {}  {}{}", i + 1, learned.len(), ty, files.join(", "), review);
        out.push_str(head.trim_end());
        out.push('\n');
        out.push_str(&format!("       {}\n", ellipsis(m["content"].as_str().unwrap_or(""), 160)));
    }
    out
}

/// 6200 as "6,200".
fn thousands(n: i64) -> String {
    let digits = n.abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_are_grouped() {
        assert_eq!(super::thousands(6200), "6,200");
        assert_eq!(super::thousands(1234567), "1,234,567");
        assert_eq!(super::thousands(12), "12");
    }
}
