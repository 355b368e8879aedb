//! `graph_load`: many nodes and edges at once, for indexers. Maintaining the closure edge by
//! edge costs, per edge, its source's ancestors times its target's descendants; a load
//! instead writes every row with that maintenance switched off and then builds the resource's
//! closure once (one bounded walk per node with an outgoing edge), all in the call's one
//! transaction.

use super::{closure, nodes};
use crate::args::required;
use crate::{Conn, Error, Result};
use serde_json::{json, Value as Json};
use std::cell::Cell;

thread_local! {
    /// Set while a load writes its rows: the edge triggers (which run on the loading thread,
    /// in SQLite and in Postgres alike) leave the closure to the load.
    static BULK: Cell<bool> = const { Cell::new(false) };
}

/// Whether a load is writing rows on this thread.
pub fn in_bulk() -> bool {
    BULK.with(Cell::get)
}

/// Clears the flag however the load ends (an error or a panic included).
struct Bulk;

impl Bulk {
    fn start() -> Bulk {
        BULK.with(|b| b.set(true));
        Bulk
    }
}

impl Drop for Bulk {
    fn drop(&mut self) {
        BULK.with(|b| b.set(false));
    }
}

fn text_of(v: &Json) -> Option<String> {
    v.as_str().map(str::to_string)
}

/// `graph_load(resource_id, graph)` → JSON `{nodes, edges, closureRows}`. `graph` is
/// `{"nodes": [node …], "edges": [{"from", "to", "type", …options} …]}` with nodes as for
/// `graph_node_upsert` and edges as for `graph_edge_add`. All or nothing.
pub fn load(conn: &mut dyn Conn, resource_id: Option<&str>, graph: Option<&str>) -> Result<String> {
    let resource = required("resource_id", resource_id)?;
    let g: Json = serde_json::from_str(required("graph", graph)?)
        .map_err(|e| Error::invalid("graph", format!("malformed JSON: {e}")))?;
    let Json::Object(g) = g else {
        return Err(Error::invalid("graph", "must be a JSON object"));
    };
    if let Some(k) = g.keys().find(|k| *k != "nodes" && *k != "edges") {
        return Err(Error::invalid(
            "graph",
            format!(
                "unknown key {} (allowed: nodes, edges)",
                crate::error::echo(k)
            ),
        ));
    }
    let list = |key: &str| -> Result<Vec<Json>> {
        match g.get(key) {
            None | Some(Json::Null) => Ok(Vec::new()),
            Some(Json::Array(a)) => Ok(a.clone()),
            Some(_) => Err(Error::invalid(format!("graph.{key}"), "must be an array")),
        }
    };
    let (node_list, edge_list) = (list("nodes")?, list("edges")?);
    let _bulk = Bulk::start();
    for n in &node_list {
        nodes::upsert(conn, Some(resource), Some(&n.to_string()))?;
    }
    for (i, e) in edge_list.iter().enumerate() {
        let Json::Object(e) = e else {
            return Err(Error::invalid(
                format!("graph.edges[{i}]"),
                "must be a JSON object",
            ));
        };
        let mut options = e.clone();
        let mut take = |k: &str| options.remove(k).as_ref().and_then(text_of);
        let (from, to, ty) = (take("from"), take("to"), take("type"));
        nodes::edge_add(
            conn,
            from.as_deref(),
            to.as_deref(),
            ty.as_deref(),
            Some(&Json::Object(options).to_string()),
        )
        .map_err(|err| Error::invalid(format!("graph.edges[{i}]"), err.to_string()))?;
    }
    let rows = closure::rebuild(conn, resource)?;
    Ok(
        json!({"nodes": node_list.len(), "edges": edge_list.len(), "closureRows": rows})
            .to_string(),
    )
}
