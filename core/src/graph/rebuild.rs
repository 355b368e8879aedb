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
use super::closure::{delete_ancestors, replace_paths, KEYS_PER_DELETE, ROWS_PER_INSERT};
use super::keys::Keys;
use super::path::Path;
use super::walk::{walk, walk_over, Direction, EdgeFilter, Present};
use crate::db::access::{self, Act};
use crate::db::batch;
use crate::db::row::Fields;
use crate::{Conn, Result, Value};
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// Rebuilds the closure of a resource from its edges and settings: the hubs are recounted,
/// the present edges read once, then one bounded walk (in memory) per node with an outgoing
/// edge, of whose rows only those that differ from the stored ones are written
/// ([`put_walks`]); the rows of nodes with no edge out go. A change of settings and repairs
/// use it.
/// Memory: the resource's present edges. A caller that may not write the resource
/// ([`access::may`]) rebuilds nothing: its view of the resource is empty, and the closure
/// built from it would replace the one its owner sees.
pub(crate) fn rebuild(conn: &mut dyn Conn, resource: &str) -> Result<()> {
    if !access::may(conn, Act::Write, super::TABLES, resource)? {
        return Ok(());
    }
    let (_, hub_in_degree) = bound::settings(conn, resource)?;
    bound::recount(conn, resource, hub_in_degree)?;
    let b = Bound::of(conn, resource)?;
    let mut edges = Present::load(conn, resource)?;
    let keys = &mut Keys::default();
    keys.load_resource(conn, resource)?;
    let sources = edges.sources();
    put_walks(conn, keys, resource, &sources, |_, s| {
        walk_over(&mut edges, s, Direction::Out, b.depth, &b)
    })?;
    // The rows of nodes with no edge out now.
    let walked: HashSet<i64> = sources.iter().filter_map(|s| keys.seq(s).ok()).collect();
    let mut left = Vec::new();
    for r in conn.query(
        "SELECT DISTINCT ancestor FROM mem_graph_closure WHERE resource_id = ?1",
        &[resource.into()],
    )? {
        if let Some(a) = Fields::new(r).int().filter(|a| !walked.contains(a)) {
            left.push(a);
        }
    }
    delete_ancestors(conn, resource, left)
}

/// Makes the stored rows of each of `starts` those `walk` finds from it, many starts per
/// statement, rewriting only the rows that differ ([`replace_paths`]).
fn put_walks(
    conn: &mut dyn Conn,
    keys: &mut Keys,
    resource: &str,
    starts: &[String],
    mut walk: impl FnMut(&mut dyn Conn, &str) -> Result<BTreeMap<String, Path>>,
) -> Result<()> {
    keys.load_ids(conn, starts.iter().map(String::as_str))?;
    let (mut from, mut pending): (Vec<i64>, Vec<Path>) = (Vec::new(), Vec::new());
    for s in starts {
        conn.check_interrupt()?;
        from.extend(keys.seq(s).ok());
        pending.extend(walk(conn, s)?.into_values());
        if pending.len() >= ROWS_PER_INSERT * 10 || from.len() >= KEYS_PER_DELETE {
            let (from, pending) = (std::mem::take(&mut from), std::mem::take(&mut pending));
            replace_paths(conn, keys, resource, &from, pending)?;
        }
    }
    replace_paths(conn, keys, resource, &from, pending)
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
    /// Nodes an edge that changed or went led to, by id: their in-degree may have moved.
    pub targets: HashSet<String>,
    /// Edges written (inserted or updated), by key: their ends are read at the end.
    pub edges: Vec<i64>,
    /// Keys of nodes removed during the write, and of the nodes that reached them before:
    /// found while the stored closure still held their rows.
    pub removed: BTreeSet<i64>,
}

/// The whole closure is rebuilt when at least one in this many of the nodes with an edge out
/// must be walked again, or the write holds one in this many of the resource's edges: a node
/// walked again costs about three times a node of a whole rebuild (its rows deleted by key,
/// not with the resource's, and its edges read by statement, not all at once).
const WHOLE: usize = 3;

/// Whether `rows` (a query of the resource `?1`) returns more than `n` rows. It reads at most
/// `n + 1` of them: the rules that choose how to build the closure compare a small write with
/// a large resource, whose rows a count would read every one of.
pub(crate) fn more_than(conn: &mut dyn Conn, rows: &str, resource: &str, n: usize) -> Result<bool> {
    let limit = i64::try_from(n).unwrap_or(i64::MAX - 1) + 1;
    let sql = format!("SELECT count(*) FROM ({rows} LIMIT ?2) AS t");
    let found = conn.query_value(&sql, &[resource.into(), Value::Int(limit)])?;
    Ok(found.and_then(|v| v.as_i64()).unwrap_or(0) == limit)
}

/// Rebuilds the rows of the nodes whose walk the write in `t` can have changed (see the
/// module's doc), or the whole closure when they are many (see [`WHOLE`]). What is read is
/// what the write touched: the edges and keys of the rest of the resource are not loaded.
pub(crate) fn around(conn: &mut dyn Conn, resource: &str, t: Touched) -> Result<()> {
    if !access::may(conn, Act::Write, super::TABLES, resource)? {
        return Ok(());
    }
    let Touched {
        mut sources,
        mut targets,
        edges,
        removed,
    } = t;
    if sources.is_empty() && edges.is_empty() && removed.is_empty() {
        return Ok(());
    }
    let held = "SELECT 1 FROM mem_graph_edges WHERE resource_id = ?1";
    if !more_than(conn, held, resource, (edges.len() + sources.len()) * WHOLE)? {
        return rebuild(conn, resource);
    }
    let written = batch::query_in(
        conn,
        "SELECT from_id, to_id FROM mem_graph_edges WHERE seq IN ({keys}) AND resource_id = ?1",
        &[resource.into()],
        &edges.into_iter().map(Value::Int).collect::<Vec<_>>(),
    )?;
    for r in written {
        let mut f = Fields::new(r);
        if let (Some(from), Some(to)) = (f.text(), f.text()) {
            sources.insert(from);
            targets.insert(to);
        }
    }
    // A node that became a hub, or stopped being one, changes the walks through it; only
    // the ends of changed edges can have.
    let mut b = Bound::of(conn, resource)?;
    for node in &targets {
        let (was, is) = (!b.passes(node), bound::above(conn, node, b.hub_in_degree)?);
        if was != is {
            bound::set_hub(conn, resource, node, is)?;
            sources.insert(node.clone());
            match is {
                true => b.hubs.insert(node.clone()),
                false => b.hubs.remove(node),
            };
        }
    }
    let keys = &mut Keys::default();
    keys.load_ids(conn, sources.iter().map(String::as_str))?;
    // The sources that are still nodes; a removed one's key is in `removed`.
    let mut stale: BTreeSet<i64> = removed;
    let seqs: Vec<i64> = sources.iter().filter_map(|s| keys.seq(s).ok()).collect();
    stale.extend(&seqs);
    for r in batch::query_in(
        conn,
        "SELECT DISTINCT ancestor FROM mem_graph_closure \
         WHERE descendant IN ({keys}) AND depth <= ?2 AND resource_id = ?1",
        &[resource.into(), Value::Int(b.depth as i64 - 1)],
        &seqs.into_iter().map(Value::Int).collect::<Vec<_>>(),
    )? {
        if let Some(a) = Fields::new(r).int() {
            stale.insert(a);
        }
    }
    keys.load_seqs(conn, stale.iter().copied())?;
    let redo: Vec<String> = stale
        .iter()
        .filter_map(|a| keys.id(*a).ok().map(str::to_owned))
        .collect();
    let from = "SELECT DISTINCT from_id FROM mem_graph_edges WHERE resource_id = ?1";
    if !more_than(conn, from, resource, redo.len() * WHOLE)? {
        return rebuild(conn, resource);
    }
    // The removed nodes' rows go; the others are rewritten where their walks differ.
    let removed = stale.into_iter().filter(|a| keys.id(*a).is_err()).collect();
    delete_ancestors(conn, resource, removed)?;
    put_walks(conn, keys, resource, &redo, |conn, s| {
        walk(conn, s, Direction::Out, b.depth, &EdgeFilter::present(), &b)
    })
}
