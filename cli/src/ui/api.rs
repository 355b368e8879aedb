//! The panel's JSON API: catalog functions called by name with named arguments.
//!
//! `POST /api/<function>` with a JSON object of the function's arguments (the names of the
//! reference, docs/functions.md) answers `{"value": …}` for a scalar function and
//! `{"columns": […], "rows": [{…}, …]}` for a table function, or `{"error": …}` with the
//! database's message. `GET /api` lists the functions served with their signatures. The
//! pages use nothing else, so anything they show or do can be scripted the same way.
//!
//! Only the functions a person browsing and governing the memory needs are served: no
//! import, forget, index upkeep or schema change goes through a browser.

use crate::db::{self, Db, Type};
use agentmem_core::api::{self, Function, Returns};
use serde_json::{json, Map, Value as Json};

/// The functions served: what the pages read, then what they change.
pub const SERVED: &[&str] = &[
    // Reads.
    "mem_version",
    "mem_health",
    "mem_stats",
    "mem_memory_list",
    "mem_memory_get",
    "mem_memory_search",
    "mem_memory_confidence",
    "mem_recall_hybrid",
    "mem_thread_list",
    "mem_thread_get",
    "mem_messages_page",
    "mem_search",
    "om_status",
    "om_context",
    "task_ready",
    "task_list",
    "task_show",
    "task_search",
    "graph_stats",
    "graph_neighbors",
    "graph_impact",
    "mem_session_list",
    "mem_session_summary",
    "mem_tools",
    // Changes, each one call of the core.
    "mem_tool",
    "mem_remember",
    "mem_memory_update",
    "mem_memory_deprecate",
    "mem_thread_archive",
    "mem_thread_restore",
    "mem_thread_delete",
    "task_claim",
    "task_close",
    "task_update",
];

/// A refused or failed call: the HTTP status and the message.
pub struct Failure {
    pub status: u16,
    pub message: String,
}

fn bad(message: impl Into<String>) -> Failure {
    Failure {
        status: 400,
        message: message.into(),
    }
}

/// `GET /api`: the functions served, each with its signature and arguments.
pub fn index() -> Json {
    let functions: Vec<Json> = SERVED
        .iter()
        .filter_map(|name| api::find(name))
        .map(|f| {
            json!({
                "name": f.name,
                "signature": api::signature(f),
                "arguments": f.args.iter().map(|a| a.name).collect::<Vec<_>>(),
                "required": f.required,
                "returns": match f.returns {
                    Returns::Scalar(..) => "value",
                    Returns::Table(..) => "rows",
                },
            })
        })
        .collect();
    json!({ "functions": functions })
}

/// `POST /api/<name>` with `body`: the call's answer.
pub fn call(db: &mut dyn Db, name: &str, body: &[u8]) -> Result<Json, Failure> {
    let f = SERVED
        .contains(&name)
        .then(|| api::find(name))
        .flatten()
        .ok_or_else(|| Failure {
            status: 404,
            message: format!("{name} is not a function the panel serves (GET /api lists them)"),
        })?;
    let named: Map<String, Json> = match body {
        [] => Map::new(),
        b => match serde_json::from_slice(b) {
            Ok(Json::Object(m)) => m,
            Ok(_) => return Err(bad("the body must be a JSON object of named arguments")),
            Err(e) => return Err(bad(format!("the body is not JSON: {e}"))),
        },
    };
    let args = positional(f, named)?;
    let refs: Vec<Option<&str>> = args.iter().map(Option::as_deref).collect();
    let db_error = |message: String| Failure {
        status: 400,
        message,
    };
    match f.returns {
        Returns::Scalar(..) => {
            Ok(json!({ "value": db::scalar(db, name, &refs).map_err(db_error)? }))
        }
        Returns::Table(..) => {
            let t = db::table(db, name, &refs).map_err(db_error)?;
            let rows: Vec<Json> = t
                .rows
                .into_iter()
                .map(|r| Json::Object(t.columns.iter().map(|c| c.to_string()).zip(r).collect()))
                .collect();
            Ok(json!({ "columns": t.columns, "rows": rows }))
        }
    }
}

/// The call's arguments in the catalog's order, as the text the database reads: trailing
/// omitted arguments left off, an omitted one before a given one NULL.
fn positional(f: &Function, mut named: Map<String, Json>) -> Result<Vec<Option<String>>, Failure> {
    if let Some(unknown) = named
        .keys()
        .find(|k| !f.args.iter().any(|a| a.name == k.as_str()))
    {
        return Err(bad(format!(
            "{unknown}: {} takes no such argument ({})",
            f.name,
            api::signature(f)
        )));
    }
    let last = f
        .args
        .iter()
        .rposition(|a| named.contains_key(a.name))
        .map_or(0, |i| i + 1)
        .max(f.required);
    f.args[..last]
        .iter()
        .enumerate()
        .map(|(i, a)| match named.remove(a.name) {
            None | Some(Json::Null) if i < f.required => Err(bad(format!(
                "{}: {} needs it ({})",
                a.name,
                f.name,
                api::signature(f)
            ))),
            None | Some(Json::Null) => Ok(None),
            Some(v) => text(a.name, a.ty, v).map(Some),
        })
        .collect()
}

/// A JSON argument as the text the database reads for type `ty`.
fn text(name: &str, ty: Type, v: Json) -> Result<String, Failure> {
    match (ty, v) {
        (_, Json::String(s)) => Ok(s),
        // Options are JSON objects passed as text.
        (Type::Json | Type::Text, v @ (Json::Object(_) | Json::Array(_))) => Ok(v.to_string()),
        (Type::Json, v) => Ok(v.to_string()),
        (Type::Int, Json::Number(n)) if n.is_i64() => Ok(n.to_string()),
        (Type::Real, Json::Number(n)) => Ok(n.to_string()),
        (Type::Bool, Json::Bool(b)) => Ok(if b { "1" } else { "0" }.into()),
        (_, v) => Err(bad(format!("{name}: {v} is not {}", type_name(ty)))),
    }
}

fn type_name(ty: Type) -> &'static str {
    match ty {
        Type::Int => "a whole number",
        Type::Real => "a number",
        Type::Bool => "a boolean",
        Type::Blob => "bytes",
        Type::Json | Type::Text => "text",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_served_function_is_in_the_catalog() {
        for name in SERVED {
            assert!(api::find(name).is_some(), "{name}");
        }
    }

    #[test]
    fn named_arguments_go_in_catalog_order() {
        let f = api::find("mem_memory_list").unwrap();
        let m = |v: Json| v.as_object().unwrap().clone();
        let args = positional(f, m(json!({"options": {"limit": 5}, "resource_id": "r"})));
        assert_eq!(
            args.ok().unwrap(),
            vec![Some("r".into()), Some("{\"limit\":5}".into())]
        );
        assert_eq!(
            positional(f, m(json!({"resource_id": "r"}))).ok().unwrap(),
            vec![Some("r".into())]
        );
        assert!(positional(f, m(json!({"options": "{}"}))).is_err());
        let e = positional(f, m(json!({"resource_id": "r", "limit": 5})))
            .err()
            .unwrap();
        assert!(e.message.starts_with("limit:"), "{}", e.message);
        let d = api::find("mem_memory_deprecate").unwrap();
        assert_eq!(
            positional(d, m(json!({"id": "x", "now": 5}))).ok().unwrap(),
            vec![Some("x".into()), Some("5".into())]
        );
        assert!(positional(d, m(json!({"id": "x", "now": "soon"}))).is_ok());
        assert!(positional(d, m(json!({"id": "x", "now": 1.5}))).is_err());
        assert!(positional(d, m(json!({"id": true}))).is_err());
    }
}
