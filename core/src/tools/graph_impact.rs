//! `graph_impact` as a tool: what breaks if the agent changes a file or a symbol, named as
//! [`target`](super::target) reads it.

use super::call::{succeeded, Answer, Failure, Input, Tool};
use super::target::{self, resolve};
use crate::graph::{bound, query};
use crate::Conn;
use serde_json::{json, Map, Value as Json};

fn run(conn: &mut dyn Conn, i: &Input) -> Answer {
    let target = i.str("target")?;
    let resource = i.scope("resourceId")?;
    let node = resolve(conn, &target, resource.as_deref())?;
    let mut o = Map::new();
    if i.map.get("maxDepth").is_some_and(|v| !v.is_null()) {
        o.insert(
            "max_depth".into(),
            json!(i.int("maxDepth", 1, 1, bound::MAX_DEPTH as i64)?),
        );
    }
    let answer = query::impact(conn, &node, Some(&Json::Object(o).to_string()))
        .map_err(|e| Failure::renamed(e, &[("options.max_depth", "maxDepth")]))?;
    Ok(succeeded(&answer.to_text()))
}

/// The tool as the LLM sees it.
pub(crate) const TOOL: Tool = target::tool("graph_impact", DESCRIPTION, properties, run);

const DESCRIPTION: &str = concat!(
    "What breaks if you change a file or a symbol: everything in the project's code graph \
     that depends on it (imports it, calls it, …), grouped by distance, with the files to \
     re-check.\n\n",
    target::naming!(),
    "Example: { \"target\": \"src/auth/tokens.ts:verifyJwt\", \"maxDepth\": 3 }"
);

fn properties() -> Json {
    json!({
        "target": target::property(),
        "maxDepth": {
            "type": "integer", "minimum": 1, "maximum": bound::MAX_DEPTH,
            "description": "How many hops of dependents (default: the project's depth)"
        }
    })
}
