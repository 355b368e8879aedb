//! `graph_load`: many nodes and edges at once, for indexers. Maintaining the closure edge by
//! edge costs, per edge, its source's ancestors times its target's descendants; a load
//! instead checks every node and edge first, writes them many rows per statement with that
//! maintenance switched off, and then builds the closure once, for the nodes whose walks the
//! load can have changed (see [`rebuild`]), all in the call's one transaction.

use super::edges::{self, EdgeIn};
use super::nodes::{self, NodeIn};
use super::rebuild::{self, Touched};
use crate::db::access::{self, Act};
use crate::db::session::Part;
use crate::{Conn, Error, Result};
use serde_json::{json, Value as Json};

/// Set while a bulk write runs on this connection, in its session: the edge triggers (which
/// run on the writing connection, in SQLite and in Postgres alike) leave the closure to the
/// write's end and note what they saw, so that it is rebuilt only where it can have changed.
/// A write that fails part-way rolls back, and this with it.
#[derive(Default)]
struct Bulk(Option<Touched>);

impl Part for Bulk {
    fn rollback(&mut self) {
        self.0 = None;
    }
}

/// What the bulk write under way on this connection did so far, or `None` when no bulk write
/// is under way.
pub(crate) fn in_bulk(conn: &mut dyn Conn) -> Option<&mut Touched> {
    conn.session().part::<Bulk>().0.as_mut()
}

fn text_of(v: &Json) -> Option<String> {
    v.as_str().map(str::to_string)
}

/// `graph_load(resource_id, graph)` → JSON `{nodes, edges, closureRows}`. `graph` is
/// `{"nodes": [node …], "edges": [{"from", "to", "type", …options} …]}` with nodes as for
/// `graph_node_upsert` and edges as for `graph_edge_add`. All or nothing.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn load(conn: &mut dyn Conn, resource: &str, graph: &str) -> Result<String> {
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
    let in_bulk = goes_in_bulk(conn, resource, parsed_edges.len())?;
    let write = |conn: &mut dyn Conn| -> Result<(usize, usize)> {
        let nodes = nodes::upsert_many(conn, resource, parsed_nodes)?;
        Ok((nodes, edges::edge_add_many(conn, parsed_edges)?))
    };
    let (nodes, edges) = match in_bulk {
        true => bulk(conn, resource, write)?,
        false => write(conn)?,
    };
    // Counted only where the caller may write: what it may not, it did not build.
    let rows = match access::may(conn, Act::Write, super::TABLES, resource)? {
        true => conn
            .query_value(
                "SELECT count(*) FROM mem_graph_closure WHERE resource_id = ?1",
                &[resource.into()],
            )?
            .and_then(|v| v.as_i64())
            .unwrap_or(0),
        false => 0,
    };
    Ok(json!({"nodes": nodes, "edges": edges, "closureRows": rows}).to_string())
}

/// Edges a write adds at least before its closure is built once rather than kept edge by
/// edge (below, the two cost about the same).
const BULK_EDGES: usize = 1000;

/// Whether a write adding `adding` edges to `resource` goes in [`bulk`]: when they are many,
/// and at least half as many as the resource holds. Edge by edge, a closure built from
/// nothing costs many times its rebuild; but a rebuild around a small write into a large
/// graph walks again from every ancestor of the nodes it touched, where the edge triggers
/// add only the new paths. The resource's edges are counted only as far as the answer needs.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn goes_in_bulk(conn: &mut dyn Conn, resource: &str, adding: usize) -> Result<bool> {
    let held = "SELECT 1 FROM mem_graph_edges WHERE resource_id = ?1";
    Ok(adding >= BULK_EDGES && !rebuild::more_than(conn, held, resource, 2 * adding)?)
}

/// Runs `write` with the edge triggers' closure upkeep switched off, then rebuilds the
/// resource's closure once, around what the write changed ([`rebuild::around`]); returns
/// what `write` did. For writes of many edges (a load, a large batch of files): `write` must
/// check the edges it adds as `graph_edge_add` does, which the triggers then do not.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn bulk<T>(
    conn: &mut dyn Conn,
    resource: &str,
    write: impl FnOnce(&mut dyn Conn) -> Result<T>,
) -> Result<T> {
    conn.session().part::<Bulk>().0 = Some(Touched::default());
    let written = write(conn);
    let touched = conn.session().part::<Bulk>().0.take().unwrap_or_default();
    let written = written?;
    rebuild::around(conn, resource, touched)?;
    Ok(written)
}
