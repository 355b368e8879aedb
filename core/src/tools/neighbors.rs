//! `graph_neighbors` as a tool: what is around a file or a symbol — what it uses and what
//! uses it, nearest first — named as [`target`](super::target) reads it.

use super::call::{Answer, Failure, Input};
use super::target::resolve;
use crate::graph::{bound, query};
use crate::{Conn, Value};
use serde_json::{json, Map, Value as Json};

/// Neighbours listed when the LLM does not say, and at most.
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
    let rows =
        query::neighbors(conn, Some(&node), Some(&Json::Object(o).to_string())).map_err(|e| {
            Failure::renamed(
                e,
                &[
                    ("options.direction", "direction"),
                    ("options.max_depth", "maxDepth"),
                ],
            )
        })?;
    let more = rows.len() as i64 > limit;
    let mut neighbors = Vec::new();
    let mut files = Vec::new();
    for row in rows.into_iter().take(limit as usize) {
        let n = Neighbor::of(row, &node);
        if let Some(f) = &n.file_path {
            files.push(f.clone());
        }
        neighbors.push(n.to_json());
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

/// One row of `graph_neighbors` as the LLM reads it.
struct Neighbor {
    id: String,
    ty: String,
    label: String,
    file_path: Option<String>,
    depth: i64,
    /// `out` when the path runs from the target (the target uses it), `in` otherwise.
    direction: &'static str,
    via: Json,
}

impl Neighbor {
    /// The row's columns: node_id, depth, path, total_weight, edge_types, type, label,
    /// file_path.
    fn of(row: Vec<Value>, target: &str) -> Neighbor {
        let mut c = row.into_iter();
        let mut next = || c.next().unwrap_or(Value::Null);
        let id = next().into_string().unwrap_or_default();
        let depth = next().as_i64().unwrap_or(0);
        let path = parsed(next());
        next(); // total_weight: the order already says it
        let via = parsed(next());
        let ty = next().into_string().unwrap_or_default();
        let label = next().into_string().unwrap_or_default();
        let file_path = next().into_string();
        let direction = match path.get(0).and_then(Json::as_str) {
            Some(first) if first == target => "out",
            _ => "in",
        };
        Neighbor {
            id,
            ty,
            label,
            file_path,
            depth,
            direction,
            via,
        }
    }

    fn to_json(&self) -> Json {
        json!({
            "id": self.id,
            "type": self.ty,
            "label": self.label,
            "filePath": self.file_path,
            "depth": self.depth,
            "direction": self.direction,
            "via": self.via,
        })
    }
}

/// A JSON text column as JSON (`null` if it is not).
fn parsed(v: Value) -> Json {
    v.into_string()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// The tool as the LLM sees it.
pub(crate) const TOOL: super::Tool = super::Tool {
    name: "graph_neighbors",
    description: "What is around a file or a symbol in the project's code graph: what it uses \
        (direction \"out\": the files it imports, the functions it calls, …) and what uses it \
        (\"in\"), nearest first, with the relation (\"via\") and the files to read.\n\n\
        Name the target as a path (\"src/auth/tokens.ts\"), a symbol in a file \
        (\"src/auth/tokens.ts:verifyJwt\") or a node id.\n\n\
        Example: { \"target\": \"src/auth/login.ts\", \"direction\": \"out\", \"maxDepth\": 2 }",
    schema,
    run,
};

fn schema() -> Json {
    json!({
        "type": "object",
        "properties": {
            "target": {
                "type": "string",
                "description": "A path, path:symbol, or node id"
            },
            "direction": {
                "type": "string", "enum": ["out", "in", "both"],
                "description": "out: what the target uses; in: what uses it; both (default)"
            },
            "maxDepth": {
                "type": "integer", "minimum": 1, "maximum": bound::MAX_DEPTH,
                "description": "How many hops (default 1: direct neighbours)"
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
                "description": "At most this many neighbours (default 30)"
            }
        },
        "required": ["target"],
        "additionalProperties": false
    })
}
