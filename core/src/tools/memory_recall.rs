//! `memory_recall`: what the project's long-term memory knows about a question, through
//! `mem_recall_hybrid`, bounded by the context's resource. Each memory returned counts as an
//! access (toward the trust it earns by being used).

use super::call::{Answer, Failure, Input, Tool};
use crate::memories::TYPES;
use crate::recall::hybrid::{self, candidates::KIND_NAMES, phases::PHASES};
use crate::Conn;
use serde_json::{json, Map, Value as Json};

fn run(conn: &mut dyn Conn, i: &Input) -> Answer {
    let query = i.str("query")?;
    let mut o = Map::new();
    if let Some(r) = i.scope("resourceId")? {
        o.insert("resource_id".into(), json!(r));
    }
    if let Some(p) = i.opt_str("phase")? {
        o.insert("phase".into(), json!(p));
    }
    for (key, option) in [
        ("currentFiles", "current_files"),
        ("types", "types"),
        ("kinds", "kinds"),
    ] {
        let v = i.strings(key)?;
        if !v.is_empty() {
            o.insert(option.into(), json!(v));
        }
    }
    o.insert("limit".into(), json!(i.limit(10, 100)?));
    if i.map.get("budget").is_some_and(|v| !v.is_null()) {
        o.insert("budget".into(), json!(i.int("budget", 0, 1, 100_000)?));
    }
    o.insert("touch".into(), json!(true));
    let rows = hybrid::recall_hybrid(conn, Some(&query), Some(&Json::Object(o).to_string()))
        .map_err(|e| {
            Failure::renamed(
                e,
                &[
                    ("options.current_files", "currentFiles"),
                    ("options.resource_id", "context.resourceId"),
                ],
            )
        })?;
    let mut total = 0;
    let mut results = Vec::with_capacity(rows.len());
    for r in rows {
        // The ranks and boosts explain the score to a developer, not to the model.
        total += r.tokens;
        results.push(json!({
            "kind": r.kind,
            "id": r.id,
            "content": r.content,
            "score": r.score,
            "tokens": r.tokens,
        }));
    }
    Ok(json!({ "success": true, "results": results, "totalTokens": total }))
}

/// The tool as the LLM sees it.
pub(crate) const TOOL: Tool = Tool {
    name: "memory_recall",
    description: "Recall what the project's long-term memory knows that bears on a question: \
        gotchas, decisions, patterns, error patterns, dead ends and more, best first, within \
        a token budget.\n\n\
        Use it before starting work on a file or when something fails in a way that may have \
        happened before. Pass the files you are working in: memories about them and their \
        neighbors rank higher.\n\n\
        Examples:\n\
        - { \"query\": \"why does login fail on staging\", \"phase\": \"validate\" }\n\
        - { \"query\": \"token refresh\", \"currentFiles\": [\"src/auth/refresh.ts\"] }",
    properties,
    required: &["query"],
    run,
};

fn properties() -> Json {
    json!({
        "query": { "type": "string", "description": "What you want to know" },
        "phase": {
            "type": "string", "enum": PHASES,
            "description": "The phase of your work: weighs the memory types that matter in it"
        },
        "currentFiles": {
            "type": "array", "items": { "type": "string" },
            "description": "Files you are working in"
        },
        "types": {
            "type": "array", "items": { "type": "string", "enum": TYPES },
            "description": "Only memories of these types"
        },
        "kinds": {
            "type": "array", "items": { "type": "string", "enum": KIND_NAMES },
            "description": "What to recall from (default: memories only)"
        },
        "limit": { "type": "integer", "minimum": 1, "maximum": 100, "default": 10 },
        "budget": {
            "type": "integer", "minimum": 1, "maximum": 100000,
            "description": "Most tokens the results may take (default: the phase's budget)"
        }
    })
}
