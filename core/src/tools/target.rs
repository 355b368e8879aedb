//! How the LLM names a node of the code graph: as it knows it — a path, `path:symbol`, or a
//! node id — found within the context's resource.

use super::call::{Failure, Run, Tool};
use crate::cluster::route;
use crate::{Conn, Value};
use serde_json::{json, Value as Json};

/// How a graph tool's description tells the LLM to name its target (a literal, for
/// `concat!`).
macro_rules! naming {
    () => {
        "Name the target as a path (\"src/auth/tokens.ts\"), a symbol in a file \
         (\"src/auth/tokens.ts:verifyJwt\") or a node id.\n\n"
    };
}
pub(crate) use naming;

/// A graph tool: it takes a `target` (and the other `properties`); its description says how
/// to name one.
pub(crate) const fn tool(
    name: &'static str,
    description: &'static str,
    properties: fn() -> Json,
    run: Run,
) -> Tool {
    Tool {
        name,
        description,
        properties,
        required: &["target"],
        run,
    }
}

/// The `target` argument in a graph tool's JSON Schema.
pub(crate) fn property() -> Json {
    json!({ "type": "string", "description": "A path, path:symbol, or node id" })
}

/// The node `target` names: its id, else (within the resource) the file node of a path, or
/// the node labelled `symbol` in the file of `path:symbol`.
pub(crate) fn resolve(
    conn: &mut dyn Conn,
    target: &str,
    resource: Option<&str>,
) -> std::result::Result<String, Failure> {
    let by_id = route::query_value(
        conn,
        "SELECT resource_id FROM mem_graph_nodes WHERE id = ?1{home}",
        &[target.into()],
    )?;
    if let Some(r) = by_id {
        return match resource {
            Some(want) if r.as_str() != Some(want) => Err(not_found(target)),
            _ => Ok(target.to_string()),
        };
    }
    let resource = resource.ok_or_else(|| {
        Failure::from(
            "resourceId: finding a node by path needs the resource (pass {\"resourceId\":…} \
             as the context), or give the node's id",
        )
    })?;
    let (file, label) = match target.rsplit_once(':') {
        Some((f, l)) if !f.is_empty() && !l.is_empty() => (f, Some(l)),
        _ => (target, None),
    };
    let rows = conn.query(
        "SELECT id FROM mem_graph_nodes WHERE resource_id = ?1 AND file_path = ?2 \
           AND (CASE WHEN CAST(?3 AS TEXT) IS NULL THEN type = 'file' ELSE label = ?3 END) \
         ORDER BY id LIMIT 6",
        &[resource.into(), file.into(), label.into()],
    )?;
    let ids: Vec<String> = rows
        .into_iter()
        .filter_map(|r| r.into_iter().next().and_then(Value::into_string))
        .collect();
    match ids.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(not_found(target)),
        many => Err(format!(
            "target: {} names {} nodes; give one of their ids: {}",
            crate::error::echo(target),
            if many.len() > 5 {
                "more than 5".to_string()
            } else {
                many.len().to_string()
            },
            many.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
        )
        .into()),
    }
}

fn not_found(target: &str) -> Failure {
    format!(
        "target: no node {} in this project's graph",
        crate::error::echo(target)
    )
    .into()
}
