//! Bounded walks over the edges table: the best path from one node to every node within a
//! number of hops, found one hop at a time. The closure is rebuilt from them; queries the
//! closure cannot answer (stale edges included, a subset of edge types, a past moment) use
//! them directly.

use super::path::Path;
use crate::{Conn, Result, Value};
use std::collections::{BTreeMap, HashSet};

/// Which way a walk follows the edges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// From an edge's `from_id` to its `to_id`.
    Out,
    /// Against the edges: what reaches the start.
    In,
}

/// Which edges a walk may take.
#[derive(Clone, Debug, Default)]
pub struct EdgeFilter {
    /// Stale edges too.
    pub include_stale: bool,
    /// Only these types (all when `None`).
    pub types: Option<Vec<String>>,
    /// The edges valid at this moment (epoch ms) instead of the present ones.
    pub as_of: Option<i64>,
}

impl EdgeFilter {
    /// The edges the closure is made of: current (not invalidated) and not stale.
    pub fn present() -> EdgeFilter {
        EdgeFilter::default()
    }
}

/// Frontier nodes per lookup statement.
const CHUNK: usize = 500;

/// Every hop out of (or into) `nodes` that `filter` allows: (at, other end, type, weight).
fn hops(
    conn: &mut dyn Conn,
    nodes: &[String],
    dir: Direction,
    filter: &EdgeFilter,
) -> Result<Vec<(String, String, String, f64)>> {
    let (at, other) = match dir {
        Direction::Out => ("from_id", "to_id"),
        Direction::In => ("to_id", "from_id"),
    };
    let mut out = Vec::new();
    for chunk in nodes.chunks(CHUNK) {
        let first = if filter.as_of.is_some() { 2 } else { 1 };
        let marks: Vec<String> = (first..chunk.len() + first)
            .map(|i| format!("?{i}"))
            .collect();
        let time = match filter.as_of {
            None => "invalid_at IS NULL",
            Some(_) => {
                "(valid_at IS NULL OR valid_at <= ?1) AND (invalid_at IS NULL OR invalid_at > ?1)"
            }
        };
        let stale = if filter.include_stale {
            ""
        } else {
            " AND stale_at IS NULL"
        };
        let sql = format!(
            "SELECT {at}, {other}, type, weight FROM mem_graph_edges \
             WHERE {at} IN ({}) AND {time}{stale}",
            marks.join(", ")
        );
        let mut params: Vec<Value> = filter.as_of.map(Value::Int).into_iter().collect();
        params.extend(chunk.iter().map(|n| Value::from(n.as_str())));
        for r in conn.query(&sql, &params)? {
            let mut f = crate::db::row::Fields::new(r);
            let (a, b, ty) = (f.text(), f.text(), f.text());
            let w = f.value().as_f64();
            if let (Some(a), Some(b), Some(ty), Some(w)) = (a, b, ty, w) {
                if filter.types.as_ref().is_none_or(|t| t.contains(&ty)) {
                    out.push((a, b, ty, w));
                }
            }
        }
    }
    Ok(out)
}

/// The best path from `start` to every node it reaches in at most `max_depth` hops (the start
/// itself excluded). For [`Direction::In`] a path runs from the reached node to `start`, as
/// the closure stores it. Cost: the edges of the nodes reached before the last hop.
pub fn walk(
    conn: &mut dyn Conn,
    start: &str,
    dir: Direction,
    max_depth: usize,
    filter: &EdgeFilter,
) -> Result<BTreeMap<String, Path>> {
    let mut best: BTreeMap<String, Path> = BTreeMap::new();
    let mut frontier: BTreeMap<String, Path> = BTreeMap::new();
    frontier.insert(start.to_string(), Path::at(start));
    let mut seen: HashSet<String> = HashSet::from([start.to_string()]);
    for _ in 0..max_depth {
        if frontier.is_empty() {
            break;
        }
        conn.check_interrupt()?;
        let at: Vec<String> = frontier.keys().cloned().collect();
        let mut next: BTreeMap<String, Path> = BTreeMap::new();
        for (from, to, ty, w) in hops(conn, &at, dir, filter)? {
            if seen.contains(&to) {
                continue;
            }
            let Some(head) = frontier.get(&from) else {
                continue;
            };
            let cand = match dir {
                Direction::Out => head.join(&ty, w, &Path::at(&to)),
                Direction::In => Path::at(&to).join(&ty, w, head),
            };
            let Some(cand) = cand else { continue };
            match next.get(&to) {
                Some(cur) if !cand.better_than(cur) => {}
                _ => {
                    next.insert(to, cand);
                }
            }
        }
        seen.extend(next.keys().cloned());
        best.extend(next.iter().map(|(k, v)| (k.clone(), v.clone())));
        frontier = next;
    }
    Ok(best)
}
