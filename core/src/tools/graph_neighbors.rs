//! `graph_neighbors` as a tool: what is around a file or a symbol — what it uses and what
//! uses it, nearest first — named as [`target`](super::target) reads it.

use super::call::{Answer, Failure, Input, Tool};
use super::target::{self, resolve};
use crate::graph::bound;
use crate::graph::query::{self, Reached};
use crate::Conn;
use serde_json::{json, Map, Value as Json};

/// Neighbors listed when the LLM does not say, and at most.
const DEFAULT_LIMIT: i64 = 30;
const MAX_LIMIT: i64 = 200;

fn run(conn: &mut dyn Conn, i: &Input) -> Answer {
    let target = i.str("target")?;
    let resource = i.scope("resourceId")?;
    let node = resolve(conn, &target, resource.as_deref())?;
    let limit = i.limit(DEFAULT_LIMIT, MAX_LIMIT)?;
    let mut o = Map::new();
    o.insert(
        "direction".into(),
        json!(i.opt_str("direction")?.unwrap_or_else(|| "both".into())),
    );
    o.insert(
        "max_depth".into(),
        json!(i.int("maxDepth", 1, 1, bound::MAX_DEPTH as i64)?),
    );
    // One more than asked: whether the list was cut.
    o.insert("limit".into(), json!(limit + 1));
    for (key, option) in [("edgeTypes", "edge_types"), ("nodeTypes", "node_types")] {
        let v = i.strings(key)?;
        if !v.is_empty() {
            o.insert(option.into(), json!(v));
        }
    }
    let reached = query::reached(conn, &node, Some(&Json::Object(o).to_string())).map_err(|e| {
        Failure::renamed(
            e,
            &[
                ("options.direction", "direction"),
                ("options.max_depth", "maxDepth"),
            ],
        )
    })?;
    let more = reached.len() as i64 > limit;
    let mut neighbors = Vec::new();
    let mut files = Vec::new();
    for r in reached.into_iter().take(limit as usize) {
        neighbors.push(neighbor(&r, &node));
        files.extend(r.file_path);
    }
    files.sort();
    files.dedup();
    Ok(json!({
        "success": true,
        "nodeId": node,
        "neighbors": neighbors,
        "files": files,
        "more": more,
    }))
}

/// A reached node as the LLM reads it: `direction` is `out` when its path runs from the
/// target (the target uses it), `in` otherwise.
fn neighbor(r: &Reached, target: &str) -> Json {
    let via = &r.edge_types;
    let direction = if r.path.iter().next() == Some(target) {
        "out"
    } else {
        "in"
    };
    json!({
        "id": r.id,
        "type": r.ty,
        "label": r.label,
        "filePath": r.file_path,
        "depth": r.depth,
        "direction": direction,
        "via": via,
    })
}

/// The tool as the LLM sees it.
pub(crate) const TOOL: Tool = target::tool("graph_neighbors", DESCRIPTION, properties, run);

const DESCRIPTION: &str = concat!(
    "What is around a file or a symbol in the project's code graph: what it uses \
     (direction \"out\": the files it imports, the functions it calls, …) and what uses it \
     (\"in\"), nearest first, with the relation (\"via\") and the files to read.\n\n",
    target::naming!(),
    "Example: { \"target\": \"src/auth/login.ts\", \"direction\": \"out\", \"maxDepth\": 2 }"
);

fn properties() -> Json {
    json!({
        "target": target::property(),
        "direction": {
            "type": "string", "enum": ["out", "in", "both"],
            "description": "out: what the target uses; in: what uses it; both (default)"
        },
        "maxDepth": {
            "type": "integer", "minimum": 1, "maximum": bound::MAX_DEPTH,
            "description": "How many hops (default 1: direct neighbors)"
        },
        "edgeTypes": {
            "type": "array", "items": { "type": "string" },
            "description": "Only these relations, e.g. [\"imports\", \"calls\"]"
        },
        "nodeTypes": {
            "type": "array", "items": { "type": "string" },
            "description": "Only nodes of these types, e.g. [\"file\"]"
        },
        "limit": {
            "type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
            "description": "At most this many neighbors (default 30)"
        }
    })
}
