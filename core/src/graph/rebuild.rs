//! Building the closure from the edges at once, rather than edge by edge: a resource's whole
//! closure (a change of settings, a new layout), or the part a bulk write can have changed.
//!
//! A node's stored rows are what one bounded walk from it finds, and that walk reads only
//! the edges leaving the nodes it reaches within `depth - 1` hops through nodes that are not
//! hubs. Say a write changed the edges leaving some nodes (the *sources*) and made some nodes
//! hubs or no longer hubs (counted as sources too). A walk that goes on from a source after
//! the write either starts there or reaches it along a path whose first changed part is a
//! source it reached before the write too, within `depth - 1` hops: so the nodes to walk
//! again are the sources and the ancestors the stored closure lists for them within
//! `depth - 1`, read before any of it is rewritten. Every other row stays.

use super::bound::{self, Bound};
use super::closure::{put_paths, ROWS_PER_INSERT};
use super::keys::Keys;
use super::path::Path;
use super::walk::{walk_over, Direction, Present};
use crate::db::access::{self, Act};
use crate::db::batch;
use crate::db::row::Fields;
use crate::{Conn, Result, Value};
use std::collections::{BTreeSet, HashSet};

/// Rebuilds the closure of a resource from its edges and settings: the hubs are recounted,
/// the present edges read once, then one bounded walk (in memory) per node with an outgoing
/// edge, its rows written many per statement. A change of settings and repairs use it.
/// Memory: the resource's present edges. A caller that may not write the resource
/// ([`access::may`]) rebuilds nothing: its view of the resource is empty, and the closure
/// built from it would replace the one its owner sees.
pub(crate) fn rebuild(conn: &mut dyn Conn, resource: &str) -> Result<()> {
    if !access::may(conn, Act::Write, super::TABLES, resource)? {
        return Ok(());
    }
    let b = recount(conn, resource)?;
    let mut edges = Present::load(conn, resource)?;
    let keys = &mut Keys::default();
    keys.load_resource(conn, resource)?;
    whole(conn, keys, resource, &mut edges, &b)
}

/// The hubs of `resource` counted again from its edges; its bound with them.
fn recount(conn: &mut dyn Conn, resource: &str) -> Result<Bound> {
    let (_, hub_in_degree) = bound::settings(conn, resource)?;
    bound::recount(conn, resource, hub_in_degree)?;
    Bound::of(conn, resource)
}

/// [`rebuild`] once the hubs are counted and the edges and keys read.
fn whole(conn: &mut dyn Conn, keys: &mut Keys, resource: &str, edges: &mut Present, b: &Bound) -> Result<()> {
    conn.execute(
        "DELETE FROM mem_graph_closure WHERE resource_id = ?1",
        &[resource.into()],
    )?;
    let sources = edges.sources();
    walk_from(conn, keys, resource, edges, &sources, b)
}

/// Rebuilds the closure of every resource with edges (a new closure layout).
pub(crate) fn rebuild_all(conn: &mut dyn Conn) -> Result<()> {
    let resources = conn.query("SELECT DISTINCT resource_id FROM mem_graph_edges", &[])?;
    for r in resources {
        if let Some(resource) = Fields::new(r).text() {
            rebuild(conn, &resource)?;
        }
    }
    Ok(())
}

/// What a bulk write did to a resource's edges, as its row triggers saw it.
#[derive(Default)]
pub(crate) struct Touched {
    /// Nodes whose outgoing edges changed, by id.
    pub sources: HashSet<String>,
    /// Edges written (inserted or updated), by key: their sources are read at the end.
    pub edges: Vec<i64>,
    /// Keys of nodes removed during the write, and of the nodes that reached them before:
    /// found while the stored closure still held their rows.
    pub removed: BTreeSet<i64>,
}

/// The whole closure is rebuilt when at least one in this many of the nodes with an edge out
/// must be walked again: a node walked again costs about three times a node of a whole
/// rebuild (its rows deleted by key, not with the resource's; the nodes that reach many
/// others are the ones a change reaches).
const WHOLE: usize = 3;

/// Rebuilds the rows of the nodes whose walk the write in `t` can have changed (see the
/// module's doc), or the whole closure when they are many (see [`WHOLE`]).
pub(crate) fn around(conn: &mut dyn Conn, resource: &str, t: Touched) -> Result<()> {
    if !access::may(conn, Act::Write, super::TABLES, resource)? {
        return Ok(());
    }
    let Touched {
        mut sources,
        edges,
        removed,
    } = t;
    if sources.is_empty() && edges.is_empty() && removed.is_empty() {
        return Ok(());
    }
    // A write of many of the resource's edges is rebuilt whole without reading what it
    // touched (a tree indexed from nothing, a load).
    let held = conn
        .query_value(
            "SELECT count(*) FROM mem_graph_edges WHERE resource_id = ?1",
            &[resource.into()],
        )?
        .and_then(|v| v.as_i64())
        .unwrap_or(0);
    if (edges.len() + sources.len()) * WHOLE >= held as usize {
        return rebuild(conn, resource);
    }
    let written = batch::query_in(
        conn,
        "SELECT DISTINCT from_id FROM mem_graph_edges WHERE seq IN ({keys}) AND resource_id = ?1",
        &[resource.into()],
        &edges.into_iter().map(Value::Int).collect::<Vec<_>>(),
    )?;
    sources.extend(written.into_iter().filter_map(|r| Fields::new(r).text()));
    // A node that became a hub, or stopped being one, changes the walks through it.
    let before = bound::hubs(conn, resource)?;
    let b = recount(conn, resource)?;
    sources.extend(before.symmetric_difference(&b.hubs).cloned());
    let mut edges = Present::load(conn, resource)?;
    let keys = &mut Keys::default();
    keys.load_resource(conn, resource)?;
    // The sources that are still nodes; a removed one's key is in `removed`.
    let present: Vec<&String> = sources.iter().filter(|s| keys.seq(s).is_ok()).collect();
    if present.len() * WHOLE >= edges.source_count() {
        return whole(conn, keys, resource, &mut edges, &b);
    }
    let mut redo: BTreeSet<String> = present.iter().map(|s| (*s).clone()).collect();
    let mut stale: BTreeSet<i64> = removed;
    let seqs: Vec<Value> = present
        .iter()
        .map(|s| keys.seq(s).map(Value::Int))
        .collect::<Result<_>>()?;
    for r in batch::query_in(
        conn,
        "SELECT DISTINCT ancestor FROM mem_graph_closure \
         WHERE descendant IN ({keys}) AND depth <= ?2 AND resource_id = ?1",
        &[resource.into(), Value::Int(b.depth as i64 - 1)],
        &seqs,
    )? {
        if let Some(a) = Fields::new(r).int() {
            stale.insert(a);
        }
    }
    for a in &stale {
        if let Ok(id) = keys.id(*a) {
            redo.insert(id.to_owned());
        }
    }
    stale.extend(redo.iter().map(|id| keys.seq(id)).collect::<Result<Vec<_>>>()?);
    if redo.len() * WHOLE >= edges.source_count() {
        return whole(conn, keys, resource, &mut edges, &b);
    }
    let stale: Vec<Value> = stale.into_iter().map(Value::Int).collect();
    for chunk in batch::shaped(&stale, 256) {
        let mut params = vec![Value::from(resource)];
        params.extend_from_slice(chunk);
        conn.execute(
            &format!(
                "DELETE FROM mem_graph_closure WHERE resource_id = ?1 AND ancestor IN ({})",
                batch::values("#", chunk.len(), 2)
            ),
            &params,
        )?;
    }
    let redo: Vec<String> = redo.into_iter().collect();
    walk_from(conn, keys, resource, &mut edges, &redo, &b)
}

/// Writes the rows of one bounded walk from each of `starts` over `edges`, many per statement.
fn walk_from(
    conn: &mut dyn Conn,
    keys: &mut Keys,
    resource: &str,
    edges: &mut Present,
    starts: &[String],
    b: &Bound,
) -> Result<()> {
    let mut pending: Vec<Path> = Vec::new();
    for s in starts {
        conn.check_interrupt()?;
        pending.extend(walk_over(edges, s, Direction::Out, b.depth, b)?.into_values());
        if pending.len() >= ROWS_PER_INSERT * 10 {
            put_paths(conn, keys, resource, &pending)?;
            pending.clear();
        }
    }
    put_paths(conn, keys, resource, &pending)
}
