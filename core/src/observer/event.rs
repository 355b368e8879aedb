//! One observed event, read from its JSON: a tool call, a tool's result, the agent's
//! reasoning text, or the end of a step. Reading is strict about the shape (an unknown type
//! or key is an error naming it, as options are) and bounded about size: a text past its
//! limit is cut and the answer says which, so a 10 MB tool output costs what 4 KB does and is
//! never stored whole.

use super::tools::{self, Kind};
use crate::json_input;
use crate::text::head_chars;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

/// Longest path, pattern or command kept, in characters.
pub(crate) const MAX_ARG: usize = 1000;

/// Most files one call is counted for.
pub(crate) const MAX_PATHS: usize = 16;

/// The event types.
pub(crate) const TYPES: &[&str] = &["tool_call", "tool_result", "reasoning", "step_complete"];

const KEYS: &[&str] = &[
    "type", "tool", "args", "step", "ok", "error", "output_size", "text", "tokens",
];

/// What happened. Its serialised form is how the session's log keeps an event until the
/// next checkpoint: the call already reduced to what the analytics read.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum What {
    #[serde(rename = "tool_call")]
    Call(Call),
    #[serde(rename = "tool_result")]
    Result {
        tool: String,
        ok: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        output_size: i64,
    },
    Reasoning { text: String },
    StepComplete { tokens: i64 },
}

/// A tool call, reduced to what the analytics keep.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Call {
    pub(crate) tool: String,
    pub(crate) kind: Kind,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) paths: Vec<String>,
    /// The grep or glob pattern, the test a command runs, or the web address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) pattern: Option<String>,
    /// A shell command that runs tests: its key (`npm test auth`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) test: Option<String>,
}

/// An event and the step it belongs to (`None`: the session's current step).
#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Event {
    #[serde(flatten)]
    pub(crate) what: What,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) step: Option<i64>,
    /// The fields that were cut, by name (`event.args.command`): the answer's, not the log's.
    #[serde(skip)]
    pub(crate) cut: Vec<String>,
}

/// Reads the event `v`; `arg` names it in errors (`event`, `events[3]`).
pub(crate) fn read(arg: &str, v: &Json) -> Result<Event> {
    let m = v
        .as_object()
        .ok_or_else(|| Error::invalid(arg, "must be a JSON object"))?;
    json_input::check_object(arg, m)?;
    if let Some(k) = m.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(Error::invalid(
            arg,
            format!("unknown key {} (allowed: {})", crate::error::echo(k), KEYS.join(", ")),
        ));
    }
    let mut cut = Vec::new();
    let ty = m
        .get("type")
        .and_then(Json::as_str)
        .ok_or_else(|| Error::invalid(format!("{arg}.type"), format!("is required: one of {}", TYPES.join(", "))))?;
    let step = int(arg, m, "step")?;
    let what = match ty {
        "tool_call" => {
            let tool = tool_name(arg, m)?;
            let args = match m.get("args") {
                None | Some(Json::Null) => Map::new(),
                Some(Json::Object(a)) => a.clone(),
                Some(_) => return Err(Error::invalid(format!("{arg}.args"), "must be a JSON object")),
            };
            let kind = tools::kind(&tool, &args);
            let mut paths = tools::paths(&args, MAX_PATHS);
            for p in &mut paths {
                if bound(p, MAX_ARG) {
                    cut.push(format!("{arg}.args.path"));
                }
            }
            let mut pattern = match kind {
                Kind::Grep | Kind::Glob => tools::pattern(&args).map(str::to_owned),
                Kind::Web => tools::web_target(&args).map(str::to_owned),
                _ => None,
            };
            if pattern.as_mut().is_some_and(|p| bound(p, MAX_ARG)) {
                cut.push(format!("{arg}.args.pattern"));
            }
            let command = (kind == Kind::Shell).then(|| tools::command(&args)).flatten();
            if command.is_some_and(|c| c.chars().count() > MAX_ARG) {
                cut.push(format!("{arg}.args.command"));
            }
            let test = command.and_then(|c| tools::test_command(head_chars(c, MAX_ARG)));
            What::Call(Call { tool, kind, paths, pattern, test })
        }
        "tool_result" => {
            let tool = tool_name(arg, m)?;
            let ok = match m.get("ok") {
                Some(Json::Bool(b)) => *b,
                None | Some(Json::Null) => !m.get("error").is_some_and(|e| !e.is_null()),
                Some(_) => return Err(Error::invalid(format!("{arg}.ok"), "must be true or false")),
            };
            let error = match m.get("error") {
                None | Some(Json::Null) => None,
                Some(Json::String(s)) => Some(s.clone()),
                Some(_) => return Err(Error::invalid(format!("{arg}.error"), "must be text")),
            };
            let output_size = int(arg, m, "output_size")?.unwrap_or(0);
            What::Result { tool, ok, error, output_size }
        }
        "reasoning" => match m.get("text") {
            Some(Json::String(s)) => What::Reasoning { text: s.clone() },
            _ => return Err(Error::invalid(format!("{arg}.text"), "is required: the agent's text")),
        },
        "step_complete" => {
            if step.is_none() {
                return Err(Error::invalid(format!("{arg}.step"), "is required for step_complete"));
            }
            What::StepComplete { tokens: int(arg, m, "tokens")?.unwrap_or(0) }
        }
        other => {
            return Err(Error::invalid(
                format!("{arg}.type"),
                format!("unknown type {} (one of {})", crate::error::echo(other), TYPES.join(", ")),
            ))
        }
    };
    Ok(Event { what, step, cut })
}

fn tool_name(arg: &str, m: &Map<String, Json>) -> Result<String> {
    let t = m
        .get("tool")
        .and_then(Json::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| Error::invalid(format!("{arg}.tool"), "is required: the tool's name"))?;
    if t.chars().count() > 200 {
        return Err(Error::invalid(format!("{arg}.tool"), "must be at most 200 characters"));
    }
    Ok(t.to_owned())
}

/// A non-negative integer field.
fn int(arg: &str, m: &Map<String, Json>, key: &str) -> Result<Option<i64>> {
    match m.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(v) => match v.as_i64() {
            Some(n) if (0..=i64::MAX / 4).contains(&n) => Ok(Some(n)),
            _ => Err(Error::invalid(format!("{arg}.{key}"), "must be a non-negative integer")),
        },
    }
}

/// Cuts `s` to `max` characters; whether it was cut.
fn bound(s: &mut String, max: usize) -> bool {
    let keep = head_chars(s, max).len();
    let cut = keep < s.len();
    s.truncate(keep);
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tool_call_keeps_what_the_analytics_need() {
        let e = read("event", &json!({"type": "tool_call", "tool": "Grep", "step": 3,
            "args": {"pattern": "refreshToken", "path": "src/auth"}}))
        .unwrap();
        assert_eq!(e.step, Some(3));
        let What::Call(c) = e.what else { panic!() };
        assert_eq!((c.kind, c.pattern.as_deref()), (Kind::Grep, Some("refreshToken")));
        assert_eq!(c.paths, vec!["src/auth"]);
    }

    #[test]
    fn huge_arguments_are_cut_and_named() {
        let e = read("event", &json!({"type": "tool_call", "tool": "Bash",
            "args": {"command": format!("npm test {}", "x".repeat(5000))}}))
        .unwrap();
        assert_eq!(e.cut, vec!["event.args.command"]);
        let What::Call(c) = e.what else { panic!() };
        assert!(c.test.unwrap().len() <= 120);
    }

    #[test]
    fn bad_events_name_the_field_and_the_rule() {
        for (v, msg) in [
            (json!({"type": "tool_cal"}), "event.type: unknown type"),
            (json!({"tool": "Read"}), "event.type: is required"),
            (json!({"type": "tool_call"}), "event.tool: is required"),
            (json!({"type": "tool_call", "tool": "Read", "args": []}), "event.args: must be a JSON object"),
            (json!({"type": "step_complete"}), "event.step: is required"),
            (json!({"type": "step_complete", "step": -1}), "event.step: must be a non-negative integer"),
            (json!({"type": "reasoning", "text": "x", "colour": 1}), "event: unknown key"),
            (json!([1]), "event: must be a JSON object"),
        ] {
            let e = read("event", &v).unwrap_err().to_string();
            assert!(e.contains(msg), "{v}: {e}");
        }
    }

    #[test]
    fn the_log_form_reads_back_as_the_same_event() {
        for v in [
            json!({"type": "tool_call", "tool": "Grep", "step": 3, "args": {"pattern": "x", "path": "src"}}),
            json!({"type": "tool_call", "tool": "Bash", "args": {"command": "cargo test auth"}}),
            json!({"type": "tool_result", "tool": "Bash", "error": "boom", "step": 1}),
            json!({"type": "tool_result", "tool": "Read", "ok": true}),
            json!({"type": "reasoning", "text": "Wait, no."}),
            json!({"type": "step_complete", "step": 2, "tokens": 9}),
        ] {
            let e = read("event", &v).unwrap();
            let logged = serde_json::to_string(&e).unwrap();
            assert_eq!(serde_json::from_str::<Event>(&logged).unwrap(), e, "{logged}");
        }
    }

    #[test]
    fn a_result_without_ok_fails_when_it_has_an_error() {
        let e = read("e", &json!({"type": "tool_result", "tool": "Bash", "error": "boom"})).unwrap();
        assert!(matches!(e.what, What::Result { ok: false, .. }));
        let e = read("e", &json!({"type": "tool_result", "tool": "Bash"})).unwrap();
        assert!(matches!(e.what, What::Result { ok: true, .. }));
    }
}
