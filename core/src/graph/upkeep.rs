//! How every change of an edge reaches the closure: what the row triggers of
//! `mem_graph_edges`, `mem_graph_nodes` and `mem_graph_settings` call.

use super::bound::Bound;
use super::closure::{self, Hop};
use super::{edges, load, nodes, rebuild};
use crate::cluster::route;
use crate::db::row::Fields;
use crate::db::session::Part;
use crate::{Conn, Error, Result, Value};

/// An edge row as the triggers read it.
struct EdgeRow {
    hop: Hop,
    active: bool,
}

fn edge_row(conn: &mut dyn Conn, seq: i64) -> Result<EdgeRow> {
    let row = route::query(
        conn,
        "SELECT resource_id, from_id, to_id, type, weight, \
         CASE WHEN stale_at IS NULL AND invalid_at IS NULL THEN 1 ELSE 0 END \
         FROM mem_graph_edges WHERE seq = ?1{home}",
        &[Value::Int(seq)],
    )?
        .into_iter()
        .next()
        .ok_or_else(|| Error::not_found("edge", seq.to_string()))?;
    let mut f = Fields::new(row);
    let hop = Hop {
        resource: f.text().unwrap_or_default(),
        from: f.text().unwrap_or_default(),
        to: f.text().unwrap_or_default(),
        ty: f.text().unwrap_or_default(),
        weight: f.value().as_f64().unwrap_or(1.0),
    };
    Ok(EdgeRow {
        active: f.int() == Some(1),
        hop,
    })
}

/// Refuses an edge row whose ends are unknown or in another resource, or whose weight is not
/// a positive number: the rules of `graph_edge_add`, for rows written by plain SQL.
pub(crate) fn check_edge(conn: &mut dyn Conn, hop: &Hop) -> Result<()> {
    edges::check_weight("weight", hop.weight)?;
    let owner = nodes::owners(conn, &[hop.from.as_str(), hop.to.as_str()])?;
    edges::check_ends(&owner, &hop.from, &hop.to, Some(&hop.resource)).map(|_| ())
}

/// The closure once `hop` counts: a target that it makes a hub stops being passed through
/// first, then the hop's paths are added.
fn start_counting(conn: &mut dyn Conn, hop: &Hop) -> Result<()> {
    let mut b = Bound::of(conn, &hop.resource)?;
    closure::recheck_hub(conn, &hop.resource, &hop.to, &mut b)?;
    closure::add(conn, hop, &b)
}

/// The closure once `hop` no longer counts: the paths that took it are recomputed, then its
/// target is passed through again if it stopped being a hub.
fn stop_counting(conn: &mut dyn Conn, hop: &Hop) -> Result<()> {
    let mut b = Bound::of(conn, &hop.resource)?;
    closure::remove(conn, hop, &b)?;
    closure::recheck_hub(conn, &hop.resource, &hop.to, &mut b)
}

/// An edge row's change, noted by its trigger for [`after_statement`] to apply.
enum Change {
    Insert(i64),
    Update(i64, OldEdge),
    Delete(String, OldEdge),
}

/// Set while [`after_statement`] runs its write: the edge triggers note what changed
/// instead of applying it.
#[derive(Default)]
struct Later(Option<Vec<Change>>);

impl Part for Later {
    fn rollback(&mut self) {
        self.0 = None;
    }
}

/// The changes noted so far when [`after_statement`] is under way on this connection.
fn later(conn: &mut dyn Conn) -> Option<&mut Vec<Change>> {
    conn.session().part::<Later>().0.as_mut()
}

/// Runs `write`, a call whose one write of edges is a statement that inserts, updates or
/// deletes one edge row, with the closure's upkeep of that row applied once the statement is
/// over rather than inside it by the row's trigger.
///
/// What a trigger writes is part of the statement that fired it, so on SQLite every page the
/// closure's rows touch was first copied into that statement's journal, to undo the statement
/// alone should it fail, and again into the journal of each statement the upkeep ran itself.
/// After the statement, the upkeep's writes are undone with the call that made them (a
/// transaction or savepoint of its own, see the hosts' call wrappers). For one row the closure
/// sees the same edges either way; a statement of many rows keeps its triggers, so each row's
/// upkeep sees the edges as they were when that row was written.
fn after_statement<T>(
    conn: &mut dyn Conn,
    write: impl FnOnce(&mut dyn Conn) -> Result<T>,
) -> Result<T> {
    if load::in_bulk(conn).is_some() || later(conn).is_some() {
        return write(conn);
    }
    conn.session().part::<Later>().0 = Some(Vec::new());
    let written = write(conn);
    let changes = conn.session().part::<Later>().0.take().unwrap_or_default();
    let written = written?;
    for change in changes {
        match change {
            Change::Insert(seq) => on_edge_insert(conn, seq)?,
            Change::Update(seq, old) => on_edge_update(conn, seq, &old)?,
            Change::Delete(resource, old) => on_edge_delete(conn, &resource, &old)?,
        }
    }
    Ok(written)
}

/// `graph_edge_add`: [`edges::edge_add`], its upkeep applied after its statement.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn edge_add(
    conn: &mut dyn Conn,
    from: &str,
    to: &str,
    ty: &str,
    options: Option<&str>,
) -> Result<String> {
    after_statement(conn, |c| edges::edge_add(c, from, to, ty, options))
}

/// `graph_edge_remove`: [`edges::edge_remove`], its upkeep applied after its statement.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn edge_remove(conn: &mut dyn Conn, id: &str) -> Result<i64> {
    after_statement(conn, |c| edges::edge_remove(c, id))
}

/// `graph_edge_invalidate`: [`edges::edge_invalidate`], its upkeep applied after its statement.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn edge_invalidate(conn: &mut dyn Conn, id: &str, at: Option<i64>) -> Result<i64> {
    after_statement(conn, |c| edges::edge_invalidate(c, id, at))
}

/// After an edge row is inserted.
pub(crate) fn on_edge_insert(conn: &mut dyn Conn, seq: i64) -> Result<()> {
    if let Some(t) = load::in_bulk(conn) {
        t.edges.push(seq);
        return Ok(());
    }
    if let Some(l) = later(conn) {
        l.push(Change::Insert(seq));
        return Ok(());
    }
    let e = edge_row(conn, seq)?;
    check_edge(conn, &e.hop)?;
    if e.active {
        start_counting(conn, &e.hop)?;
    }
    Ok(())
}

/// The counting state of an edge before a change.
#[derive(Clone)]
pub(crate) struct OldEdge {
    pub from: String,
    pub to: String,
    pub ty: String,
    pub active: bool,
}

impl OldEdge {
    /// The hop as a removal sees it (which reads no weight).
    fn hop(&self, resource: &str) -> Hop {
        Hop {
            resource: resource.to_string(),
            from: self.from.clone(),
            to: self.to.clone(),
            ty: self.ty.clone(),
            weight: 1.0,
        }
    }
}

/// After an edge row changed in a way the closure sees (ends, type, weight, staleness,
/// validity): the old hop stops counting, the new one starts.
pub(crate) fn on_edge_update(conn: &mut dyn Conn, seq: i64, old: &OldEdge) -> Result<()> {
    if let Some(t) = load::in_bulk(conn) {
        t.sources.insert(old.from.clone());
        t.targets.insert(old.to.clone());
        t.edges.push(seq);
        return Ok(());
    }
    if let Some(l) = later(conn) {
        l.push(Change::Update(seq, old.clone()));
        return Ok(());
    }
    let e = edge_row(conn, seq)?;
    check_edge(conn, &e.hop)?;
    if old.active {
        stop_counting(conn, &old.hop(&e.hop.resource))?;
    }
    if e.active {
        start_counting(conn, &e.hop)?;
    }
    Ok(())
}

/// After an edge row is gone.
pub(crate) fn on_edge_delete(conn: &mut dyn Conn, resource: &str, old: &OldEdge) -> Result<()> {
    if let Some(t) = load::in_bulk(conn) {
        t.sources.insert(old.from.clone());
        t.targets.insert(old.to.clone());
        return Ok(());
    }
    if let Some(l) = later(conn) {
        l.push(Change::Delete(resource.to_string(), old.clone()));
        return Ok(());
    }
    if old.active {
        stop_counting(conn, &old.hop(resource))?;
    }
    Ok(())
}

/// Before a node row goes: its edges go, their triggers keeping the closure exact. Those out
/// of it go first, after which no stored path passes through it; the paths that end at it
/// are then dropped at once, for no walk could find another way to a node that is going, and
/// its edges in find nothing left to recompute. (Going all at once, each edge in had a walk
/// from every ancestor of its start looking for another way to the node.)
pub(crate) fn on_node_delete(conn: &mut dyn Conn, id: &str) -> Result<()> {
    if load::in_bulk(conn).is_some() {
        // Its rows, and those of the nodes whose walks passed it, while they are stored.
        let stale = closure::reaching_node(conn, id)?;
        if let Some(t) = load::in_bulk(conn) {
            t.removed.extend(stale);
        }
    }
    route::execute(
        conn,
        "DELETE FROM mem_graph_edges WHERE from_id = ?1{home}",
        &[id.into()],
    )?;
    closure::drop_paths_to(conn, id)?;
    route::execute(
        conn,
        "DELETE FROM mem_graph_edges WHERE to_id = ?1{home}",
        &[id.into()],
    )?;
    Ok(())
}

/// After a resource's settings row is written or gone: its closure is rebuilt to the new
/// bounds.
pub(crate) fn on_settings_change(conn: &mut dyn Conn, resource: &str) -> Result<()> {
    rebuild::rebuild(conn, resource)
}
