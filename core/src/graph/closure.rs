//! The closure, kept exact incrementally: one row per (ancestor, descendant) pair within the
//! depth bound, holding the best path (see [`Path::order`]) over the present, non-stale edges.
//!
//! * Adding an edge `u → v` can only shorten paths through it: every ancestor of `u` (and `u`)
//!   is joined with every descendant of `v` (and `v`) within the bound, and a pair keeps the
//!   joined path when it beats the stored one. Joining the stored best paths is exact: the best
//!   path through the edge is the best path to `u`, the hop, then the best path from `v` (a
//!   join that revisits a node is beaten by a shorter path that is already stored).
//! * Removing (or staling, or invalidating) an edge can only lengthen paths that used it: the
//!   pairs whose stored path takes that hop are recomputed by a bounded walk from their
//!   ancestor; no other pair changes.
//!
//! Cycles are legal: paths never revisit a node, and a node is never its own descendant.

use super::path::Path;
use super::walk::{walk, Direction, EdgeFilter};
use crate::db::row::Fields;
use crate::{Conn, Result, Value};
use std::collections::BTreeMap;

/// Hops a closure path may have.
pub const MAX_DEPTH: usize = 4;

/// Pairs per lookup statement.
const CHUNK: usize = 400;

/// A stored closure row's path.
fn path_of(f: &mut Fields) -> Result<Option<Path>> {
    let (p, t, w) = (f.text(), f.text(), f.text());
    match (p, t, w) {
        (Some(p), Some(t), Some(w)) => Path::from_json(&p, &t, &w).map(Some),
        _ => Ok(None),
    }
}

/// The stored paths that end at `node` (`Direction::In`) or start at it (`Out`), within
/// `max_depth` hops, keyed by the other end.
pub fn stored(
    conn: &mut dyn Conn,
    node: &str,
    dir: Direction,
    max_depth: usize,
) -> Result<BTreeMap<String, Path>> {
    let (at, other) = match dir {
        Direction::Out => ("ancestor_id", "descendant_id"),
        Direction::In => ("descendant_id", "ancestor_id"),
    };
    let sql = format!(
        "SELECT {other}, CAST(path AS TEXT), CAST(edge_types AS TEXT), CAST(hop_weights AS TEXT) \
         FROM mem_graph_closure WHERE {at} = ?1 AND depth <= ?2"
    );
    let mut out = BTreeMap::new();
    for r in conn.query(&sql, &[node.into(), Value::Int(max_depth as i64)])? {
        let mut f = Fields::new(r);
        let Some(key) = f.text() else { continue };
        if let Some(p) = path_of(&mut f)? {
            out.insert(key, p);
        }
    }
    Ok(out)
}

/// The stored paths from `ancestor` to any of `descendants`.
fn stored_pairs(
    conn: &mut dyn Conn,
    ancestor: &str,
    descendants: &[&String],
) -> Result<BTreeMap<String, Path>> {
    let mut out = BTreeMap::new();
    for chunk in descendants.chunks(CHUNK) {
        let marks: Vec<String> = (2..chunk.len() + 2).map(|i| format!("?{i}")).collect();
        let sql = format!(
            "SELECT descendant_id, CAST(path AS TEXT), CAST(edge_types AS TEXT), \
             CAST(hop_weights AS TEXT) FROM mem_graph_closure \
             WHERE ancestor_id = ?1 AND descendant_id IN ({})",
            marks.join(", ")
        );
        let mut params = vec![Value::from(ancestor)];
        params.extend(chunk.iter().map(|d| Value::from(d.as_str())));
        for r in conn.query(&sql, &params)? {
            let mut f = Fields::new(r);
            let Some(key) = f.text() else { continue };
            if let Some(p) = path_of(&mut f)? {
                out.insert(key, p);
            }
        }
    }
    Ok(out)
}

/// Writes `path` as its pair's row.
fn put(conn: &mut dyn Conn, resource: &str, path: &Path) -> Result<()> {
    let (p, t, w) = path.to_json();
    conn.execute(
        "INSERT INTO mem_graph_closure \
           (ancestor_id, descendant_id, resource_id, depth, path, edge_types, hop_weights, total_weight) \
         VALUES (?1, ?2, ?3, ?4, CAST(?5 AS @JSON), CAST(?6 AS @JSON), CAST(?7 AS @JSON), ?8) \
         ON CONFLICT (ancestor_id, descendant_id) DO UPDATE SET depth = excluded.depth, \
           path = excluded.path, edge_types = excluded.edge_types, \
           hop_weights = excluded.hop_weights, total_weight = excluded.total_weight",
        &[
            path.first().into(),
            path.last().into(),
            resource.into(),
            Value::Int(path.depth() as i64),
            p.into(),
            t.into(),
            w.into(),
            Value::Real(path.total_weight()),
        ],
    )?;
    Ok(())
}

/// An edge as the closure sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Hop {
    pub resource: String,
    pub from: String,
    pub to: String,
    pub ty: String,
    pub weight: f64,
}

/// The closure after a present, non-stale edge appeared (or got better). Cost:
/// O(ancestors of `from` × descendants of `to`) within the bound.
pub fn add(conn: &mut dyn Conn, hop: &Hop) -> Result<()> {
    let mut heads = stored(conn, &hop.from, Direction::In, MAX_DEPTH - 1)?;
    heads.insert(hop.from.clone(), Path::at(&hop.from));
    let mut tails = stored(conn, &hop.to, Direction::Out, MAX_DEPTH - 1)?;
    tails.insert(hop.to.clone(), Path::at(&hop.to));
    for (a, head) in &heads {
        conn.check_interrupt()?;
        let room = MAX_DEPTH - head.depth() - 1;
        let reach: Vec<&String> = tails
            .iter()
            .filter(|(d, t)| *d != a && t.depth() <= room)
            .map(|(d, _)| d)
            .collect();
        if reach.is_empty() {
            continue;
        }
        let current = stored_pairs(conn, a, &reach)?;
        for d in reach {
            let Some(cand) = head.join(&hop.ty, hop.weight, &tails[d]) else {
                continue;
            };
            if current.get(d).is_none_or(|cur| cand.better_than(cur)) {
                put(conn, &hop.resource, &cand)?;
            }
        }
    }
    Ok(())
}

/// The closure after the edge `from → to` of type `ty` stopped counting (deleted, stale,
/// invalidated, or changed): the pairs whose path took it are recomputed from the edges as
/// they are now. Cost: finding them (ancestors of `from` × descendants of `to`), then one
/// bounded walk per affected ancestor.
pub fn remove(conn: &mut dyn Conn, resource: &str, from: &str, to: &str, ty: &str) -> Result<()> {
    let mut heads: Vec<String> = stored(conn, from, Direction::In, MAX_DEPTH - 1)?
        .into_keys()
        .collect();
    heads.push(from.to_string());
    for a in heads {
        conn.check_interrupt()?;
        let affected: Vec<String> = stored(conn, &a, Direction::Out, MAX_DEPTH)?
            .into_iter()
            .filter(|(_, p)| p.uses(from, to, ty))
            .map(|(d, _)| d)
            .collect();
        if affected.is_empty() {
            continue;
        }
        for d in &affected {
            conn.execute(
                "DELETE FROM mem_graph_closure WHERE ancestor_id = ?1 AND descendant_id = ?2",
                &[a.as_str().into(), d.as_str().into()],
            )?;
        }
        let now = walk(conn, &a, Direction::Out, MAX_DEPTH, &EdgeFilter::present())?;
        for d in &affected {
            if let Some(p) = now.get(d) {
                put(conn, resource, p)?;
            }
        }
    }
    Ok(())
}

/// Rebuilds the closure of a resource from its edges: one bounded walk per node with an
/// outgoing edge. The bulk path (`graph_load`) and repairs use it.
pub fn rebuild(conn: &mut dyn Conn, resource: &str) -> Result<i64> {
    conn.execute(
        "DELETE FROM mem_graph_closure WHERE resource_id = ?1",
        &[resource.into()],
    )?;
    let starts: Vec<String> = conn
        .query(
            "SELECT DISTINCT from_id FROM mem_graph_edges WHERE resource_id = ?1 \
             AND stale_at IS NULL AND invalid_at IS NULL ORDER BY from_id",
            &[resource.into()],
        )?
        .into_iter()
        .filter_map(|r| Fields::new(r).text())
        .collect();
    let mut rows = 0;
    for s in starts {
        for p in walk(conn, &s, Direction::Out, MAX_DEPTH, &EdgeFilter::present())?.values() {
            put(conn, resource, p)?;
            rows += 1;
        }
    }
    Ok(rows)
}
