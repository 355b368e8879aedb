//! `graph_load`: many nodes and edges at once, for indexers. Maintaining the closure edge by
//! edge costs, per edge, its source's ancestors times its target's descendants; a load
//! instead checks every node and edge first, writes them many rows per statement with that
//! maintenance switched off, and then builds the resource's closure once (one bounded walk
//! per node with an outgoing edge, over the edges read once), all in the call's one
//! transaction.

use super::closure;
use super::edges::{self, EdgeIn};
use super::nodes::{self, NodeIn};
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
pub fn load(conn: &mut dyn Conn, resource: &str, graph: &str) -> Result<String> {
    let g = crate::json_input::parse("graph", graph)?;
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
    let mut parsed_nodes = Vec::with_capacity(node_list.len());
    for (i, n) in node_list.iter().enumerate() {
        let at = |e: Error| Error::invalid(format!("graph.nodes[{i}]"), e.to_string());
        parsed_nodes.push(NodeIn::parse(&n.to_string()).map_err(at)?);
    }
    let mut parsed_edges = Vec::with_capacity(edge_list.len());
    for (i, e) in edge_list.iter().enumerate() {
        let at = |e: Error| Error::invalid(format!("graph.edges[{i}]"), e.to_string());
        let Json::Object(e) = e else {
            return Err(at(Error::invalid("edge", "must be a JSON object")));
        };
        let mut options = e.clone();
        let mut take = |k: &str| options.remove(k).as_ref().and_then(text_of);
        let (from, to, ty) = (take("from"), take("to"), take("type"));
        let options = Json::Object(options).to_string();
        parsed_edges.push(
            EdgeIn::parse(
                from.as_deref(),
                to.as_deref(),
                ty.as_deref(),
                Some(&options),
            )
            .map_err(at)?,
        );
    }
    let _bulk = Bulk::start();
    let nodes = nodes::upsert_many(conn, resource, parsed_nodes)?;
    let edges = edges::edge_add_many(conn, parsed_edges)?;
    let rows = closure::rebuild(conn, resource)?;
    Ok(json!({"nodes": nodes, "edges": edges, "closureRows": rows}).to_string())
}
