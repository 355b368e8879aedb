//! `mem_observe_hook`: a coding agent's hook payload, as it arrives on the hook's standard
//! input, turned into the observer's calls — so an existing agent feeds the observer without
//! a line of glue. The payload is Claude Code's (`hook_event_name`, `session_id`,
//! `tool_name`, `tool_input`, `tool_response`); other agents' hooks send the same shape or
//! call `mem_observe` directly.
//!
//! | hook | what it does |
//! |---|---|
//! | `SessionStart` | starts the session |
//! | `PreToolUse` | a tool call |
//! | `PostToolUse` | the tool call and its result (configure it instead of `PreToolUse`) |
//! | `UserPromptSubmit` | the end of a step (the next prompt begins another) |
//! | `Stop`, `SessionEnd` | finalizes the session with `options.outcome` (default `success`) |
//!
//! Each tool call is a step of its own: hooks carry no step numbers. Paths under the payload's
//! `cwd` are made relative to it.

use super::{observe, promote, session, store, tools};
use crate::json_input;
use crate::text::head_chars;
use crate::json_opts::Opts;
use crate::{Conn, Error, Result};
use serde_json::{json, Map, Value as Json};

const OPTIONS: &[&str] = &["session_type", "outcome", "thread_id"];

/// Most characters of a tool's response read for its error text.
const MAX_ERROR: usize = 4096;

/// `mem_observe_hook(resource_id, payload [, options])` → JSON `{hook, session_id, answer}`:
/// `answer` is what the call it made answered (`mem_observe`'s, `mem_session_finalize`'s), or
/// null for a hook the observer does not use. Options: `session_type` and `thread_id` (for the
/// session's start), `outcome` (for its end).
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn observe_hook(conn: &mut dyn Conn, resource_id: &str, payload: &str, options: Option<&str>) -> Result<String> {
    let o = Opts::parse("options", options, OPTIONS)?;
    let v = json_input::parse("payload", payload)?;
    let p = v.as_object().ok_or_else(|| Error::invalid("payload", "must be a JSON object"))?;
    let hook = text(p, "hook_event_name")?;
    let id = text(p, "session_id")?;
    let start = json!({
        "id": id,
        "session_type": o.opt_str("session_type")?,
        "thread_id": o.opt_str("thread_id")?,
    });
    // A hook runner calls once per event and may miss the session's start: every hook starts
    // the session it names if it is new (the same resource and type answer the same id).
    let start = strip_nulls(start);
    session::start(conn, resource_id, Some(&start.to_string()))?;
    let answer = match hook.as_str() {
        "SessionStart" => None,
        "PreToolUse" | "PostToolUse" => {
            let step = store::step(conn, &id)? + 1;
            let tool = text(p, "tool_name")?;
            let mut args = p.get("tool_input").cloned().unwrap_or(Json::Null);
            if let (Some(cwd), Json::Object(a)) = (p.get("cwd").and_then(Json::as_str), &mut args) {
                relative(a, cwd);
            }
            let mut events = vec![json!({"type": "tool_call", "tool": tool, "args": args, "step": step})];
            if hook == "PostToolUse" {
                events.push(result(&tool, p.get("tool_response"), step));
            }
            Some(observe::observe(conn, &id, &Json::Array(events).to_string())?)
        }
        "UserPromptSubmit" => {
            let step = store::step(conn, &id)?;
            Some(observe::observe(conn, &id, &json!({"type": "step_complete", "step": step}).to_string())?)
        }
        "Stop" | "SessionEnd" => {
            let outcome = o.opt_str("outcome")?.unwrap_or_else(|| "success".into());
            Some(promote::finalize(conn, &id, &outcome, None)?)
        }
        _ => None,
    };
    let answer = answer
        .map(|a| serde_json::from_str::<Json>(&a))
        .transpose()
        .map_err(|e| Error::internal(format!("the observer answered malformed JSON: {e}")))?;
    Ok(json!({"hook": hook, "session_id": id, "answer": answer}).to_string())
}

/// Paths under the session's working directory, as the project names them (agents send
/// absolute paths; the same file must count as the same file on every machine).
fn relative(args: &mut Map<String, Json>, cwd: &str) {
    let root = format!("{}/", cwd.trim_end_matches('/'));
    for (k, v) in args.iter_mut() {
        if !tools::PATH_KEYS.contains(&k.as_str()) && !tools::PATHS_KEYS.contains(&k.as_str()) {
            continue;
        }
        let strip = |s: &mut Json| {
            if let Some(rest) = s.as_str().and_then(|p| p.strip_prefix(&root)) {
                *s = Json::String(rest.to_owned());
            }
        };
        match v {
            Json::Array(items) => items.iter_mut().for_each(strip),
            v => strip(v),
        }
    }
}

fn text(p: &Map<String, Json>, key: &str) -> Result<String> {
    p.get(key)
        .and_then(Json::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| Error::invalid(format!("payload.{key}"), "is required text"))
}

fn strip_nulls(v: Json) -> Json {
    match v {
        Json::Object(m) => Json::Object(m.into_iter().filter(|(_, v)| !v.is_null()).collect()),
        v => v,
    }
}

/// A tool's response as a result event: failed when it says so (`is_error`, `success:
/// false`, an `error`, or a shell command's non-zero exit or stderr-only output).
fn result(tool: &str, response: Option<&Json>, step: i64) -> Json {
    let r = response.cloned().unwrap_or(Json::Null);
    let size = match &r {
        Json::String(s) => s.len(),
        Json::Null => 0,
        other => other.to_string().len(),
    };
    let field = |k: &str| r.get(k).filter(|v| !v.is_null());
    let failed = field("is_error").and_then(Json::as_bool) == Some(true)
        || field("success").and_then(Json::as_bool) == Some(false)
        || field("error").is_some()
        || field("exit_code").and_then(Json::as_i64).is_some_and(|c| c != 0)
        || field("interrupted").and_then(Json::as_bool) == Some(true)
        || (field("stdout").and_then(Json::as_str).is_some_and(|o| o.trim().is_empty())
            && field("stderr").and_then(Json::as_str).is_some_and(|e| !e.trim().is_empty()));
    if !failed {
        return json!({"type": "tool_result", "tool": tool, "ok": true, "output_size": size, "step": step});
    }
    let error = ["error", "stderr", "message", "content", "stdout"]
        .iter()
        .find_map(|k| field(k).map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
        .unwrap_or_else(|| format!("{tool} failed"));
    let error = head_chars(&error, MAX_ERROR);
    json!({"type": "tool_result", "tool": tool, "ok": false, "error": error, "output_size": size, "step": step})
}
