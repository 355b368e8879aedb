//! `memory_search(json)`: seed 000's memory-search tool as one SQL call. The agent passes the
//! LLM's tool arguments straight in and returns the answer straight back.

use crate::memory::message_search::{self, Request};
use crate::Conn;
use serde_json::{json, Value as Json};

/// Runs the tool. Never fails: a bad call answers `{"success":false,"error":…}`.
pub fn memory_search(conn: &mut dyn Conn, input: Option<&[u8]>) -> String {
    match run(conn, input) {
        Ok(v) => v.to_string(),
        Err(e) => json!({ "success": false, "error": e }).to_string(),
    }
}

fn run(conn: &mut dyn Conn, input: Option<&[u8]>) -> Result<Json, String> {
    let input = crate::tools::tool_text("input", input)?;
    let input: Json = serde_json::from_str(input.unwrap_or(""))
        .map_err(|e| format!("input must be JSON: {e}"))?;
    if !input.is_object() {
        return Err("input must be a JSON object".into());
    }
    match input.get("action") {
        None | Some(Json::Null) => return Err("action: missing (expected \"search\")".into()),
        Some(Json::String(a)) if a == "search" => {}
        Some(Json::String(a)) => {
            return Err(format!(
                "unknown action {} (expected \"search\")",
                crate::error::echo(a)
            ))
        }
        Some(_) => return Err("action: must be the string \"search\"".into()),
    }
    let query = input
        .get("query")
        .and_then(Json::as_str)
        .ok_or("query: must be a string")?;
    let limit = match input.get("limit") {
        None | Some(Json::Null) => 1,
        Some(v) => v
            .as_i64()
            .filter(|n| (1..=message_search::MAX_LIMIT).contains(n))
            .ok_or_else(|| {
                format!(
                    "limit: must be an integer between 1 and {}",
                    message_search::MAX_LIMIT
                )
            })?,
    };
    let mut req = Request::parse(None).map_err(|e| e.to_string())?;
    req.params.limit = limit as usize;
    let hits = message_search::run(conn, query, &req).map_err(|e| e.to_string())?;
    let results: Vec<Json> = hits
        .into_iter()
        .map(|h| {
            json!({
                "id": h.message_id,
                "source": h.source,
                "content": h.raw_content,
                // FTS5's convention, which the seed's tool documents: lower is better.
                "rank": -h.score,
                "taskId": h.task_id,
                "createdAt": h.created_at,
            })
        })
        .collect();
    Ok(json!({ "success": true, "totalHits": results.len(), "results": results }))
}
