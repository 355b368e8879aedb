//! `memory_remember`: the agent writes a long-term memory of the context's resource through
//! `mem_remember`. Secrets are refused (the answer names the kind and where), and a memory
//! the resource already holds is reinforced instead of repeated.

use super::call::{succeeded, Answer, Failure, Input, Tool};
use crate::memories::{remember, secrets, TYPES};
use crate::Conn;
use serde_json::{json, Map, Value as Json};

fn run(conn: &mut dyn Conn, i: &Input) -> Answer {
    let resource = i.scope("resourceId")?.ok_or(
        "resourceId: remembering needs the resource the memory belongs to \
         (pass {\"resourceId\":…} as the context)",
    )?;
    let content = i.str("content")?;
    // The model cannot choose to store a secret redacted: it is told to leave it out.
    if let Some(f) = secrets::scan(&content).first() {
        return Err(format!(
            "content: contains a secret ({}) at character {}; remember the fact without it",
            f.kind,
            secrets::char_offset(&content, f.start)
        )
        .into());
    }
    let mut m = Map::new();
    m.insert("type".into(), json!(i.str("type")?));
    m.insert("content".into(), json!(content));
    for (key, field) in [("tags", "tags"), ("relatedFiles", "related_files")] {
        let v = i.strings(key)?;
        if !v.is_empty() {
            m.insert(field.into(), json!(v));
        }
    }
    if let Some(c) = i.map.get("confidence").filter(|v| !v.is_null()) {
        m.insert("confidence".into(), c.clone());
    }
    if let Some(s) = i.scope("sessionId")? {
        m.insert("session_id".into(), json!(s));
    }
    let answer =
        remember::remember(conn, &resource, &Json::Object(m).to_string(), None).map_err(|e| {
            Failure::renamed(
                e,
                &[
                    ("memory.type", "type"),
                    ("memory.content", "content"),
                    ("memory.tags", "tags"),
                    ("memory.related_files", "relatedFiles"),
                    ("memory.confidence", "confidence"),
                    ("resource_id", "context.resourceId"),
                ],
            )
        })?;
    Ok(succeeded(&answer))
}

/// The tool as the LLM sees it.
pub(crate) const TOOL: Tool = Tool {
    name: "memory_remember",
    description: "Remember something worth knowing in later sessions of this project: a \
        gotcha, a decision and why, a pattern the code follows, an error and its fix, a dead \
        end not to try again.\n\n\
        Write one self-contained fact per call. Never include secrets: a call whose content \
        holds a password, key or token is refused. Remembering a fact the project already \
        holds reinforces it.\n\n\
        Examples:\n\
        - { \"type\": \"gotcha\", \"content\": \"Run the migrations before the e2e tests.\", \"relatedFiles\": [\"e2e/login.spec.ts\"] }\n\
        - { \"type\": \"decision\", \"content\": \"JWT over sessions: the API is stateless.\" }",
    properties,
    required: &["type", "content"],
    run,
};

fn properties() -> Json {
    json!({
        "type": { "type": "string", "enum": TYPES, "description": "What kind of memory" },
        "content": {
            "type": "string", "maxLength": remember::MAX_CONTENT,
            "description": "The fact, self-contained"
        },
        "tags": { "type": "array", "items": { "type": "string" } },
        "relatedFiles": {
            "type": "array", "items": { "type": "string" },
            "description": "Files the memory is about"
        },
        "confidence": { "type": "number", "minimum": 0, "maximum": 1, "default": 0.8 }
    })
}
