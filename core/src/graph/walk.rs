//! Bounded walks over the edges table: the best path from one node to every node within a
//! number of hops, found one hop at a time. The closure is rebuilt from them; queries the
//! closure cannot answer (stale edges included, a subset of edge types, a past moment) use
//! them directly.

use super::bound::Bound;
use super::path::Path;
use crate::{Conn, Result, Value};
use std::collections::{BTreeMap, HashMap};

/// Which way a walk follows the edges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    /// From an edge's `from_id` to its `to_id`.
    Out,
    /// Against the edges: what reaches the start.
    In,
}

/// Which edges a walk may take.
#[derive(Clone, Debug, Default)]
pub(crate) struct EdgeFilter {
    /// Stale edges too.
    pub include_stale: bool,
    /// Only these types (all when `None`).
    pub types: Option<Vec<String>>,
    /// The edges valid at this moment (epoch ms) instead of the present ones.
    pub as_of: Option<i64>,
}

impl EdgeFilter {
    /// The edges the closure is made of: current (not invalidated) and not stale.
    pub(crate) fn present() -> EdgeFilter {
        EdgeFilter::default()
    }
}

/// Where a walk reads the edges of its frontier.
pub(crate) trait Edges {
    /// Hands `visit` every hop out of (or, walking in, into) `nodes`: the node it leaves
    /// from, the other end, the type and the weight. Lent, not copied: a walk keeps the few
    /// that reach a node it has not seen.
    fn each_hop(&mut self, nodes: &[&str], visit: &mut dyn FnMut(&str, &str, &str, f64))
        -> Result<()>;
}

/// The edges table, in one direction, filtered.
struct Table<'a> {
    conn: &'a mut dyn Conn,
    dir: Direction,
    filter: &'a EdgeFilter,
}

impl Edges for Table<'_> {
    fn each_hop(
        &mut self,
        nodes: &[&str],
        visit: &mut dyn FnMut(&str, &str, &str, f64),
    ) -> Result<()> {
        self.conn.check_interrupt()?;
        let (at, other) = match self.dir {
            Direction::Out => ("from_id", "to_id"),
            Direction::In => ("to_id", "from_id"),
        };
        let filter = self.filter;
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
             WHERE {at} IN ({{keys}}) AND {time}{stale}{{home}}"
        );
        let fixed: Vec<Value> = filter.as_of.map(Value::Int).into_iter().collect();
        let keys: Vec<Value> = nodes.iter().map(|n| Value::from(*n)).collect();
        for r in crate::db::batch::query_in(self.conn, &sql, &fixed, &keys)? {
            let mut f = crate::db::row::Fields::new(r);
            let (a, b, ty) = (f.text(), f.text(), f.text());
            let w = f.value().as_f64();
            if let (Some(a), Some(b), Some(ty), Some(w)) = (a, b, ty, w) {
                if filter.types.as_ref().is_none_or(|t| t.contains(&ty)) {
                    visit(&a, &b, &ty, w);
                }
            }
        }
        Ok(())
    }
}

/// The present, non-stale edges of a resource held in memory, walked out: a rebuild reads
/// them once instead of one statement per node and hop.
pub(crate) struct Present {
    out: HashMap<String, Vec<(String, String, f64)>>,
}

impl Present {
    pub(crate) fn load(conn: &mut dyn Conn, resource: &str) -> Result<Present> {
        let mut out: HashMap<String, Vec<(String, String, f64)>> = HashMap::new();
        for r in conn.query(
            "SELECT from_id, to_id, type, weight FROM mem_graph_edges WHERE resource_id = ?1 \
             AND stale_at IS NULL AND invalid_at IS NULL",
            &[resource.into()],
        )? {
            let mut f = crate::db::row::Fields::new(r);
            let (a, b, ty) = (f.text(), f.text(), f.text());
            if let (Some(a), Some(b), Some(ty), Some(w)) = (a, b, ty, f.value().as_f64()) {
                out.entry(a).or_default().push((b, ty, w));
            }
        }
        Ok(Present { out })
    }

    /// The nodes with an outgoing edge, in byte order.
    pub(crate) fn sources(&self) -> Vec<String> {
        let mut s: Vec<String> = self.out.keys().cloned().collect();
        s.sort();
        s
    }
}

impl Edges for Present {
    fn each_hop(
        &mut self,
        nodes: &[&str],
        visit: &mut dyn FnMut(&str, &str, &str, f64),
    ) -> Result<()> {
        for n in nodes {
            for (to, ty, w) in self.out.get(*n).into_iter().flatten() {
                visit(n, to, ty, *w);
            }
        }
        Ok(())
    }
}

/// The best path from `start` to every node it reaches in at most `max_depth` hops over the
/// edges `filter` allows (the start itself excluded), passing through no hub of `bound`. For
/// [`Direction::In`] a path runs from the reached node to `start`, as the closure stores it.
/// Cost: the edges of the nodes reached before the last hop.
pub(crate) fn walk(
    conn: &mut dyn Conn,
    start: &str,
    dir: Direction,
    max_depth: usize,
    filter: &EdgeFilter,
    bound: &Bound,
) -> Result<BTreeMap<String, Path>> {
    let mut table = Table { conn, dir, filter };
    walk_over(&mut table, start, dir, max_depth, bound)
}

/// [`walk`] over any [`Edges`] (which must follow `dir`).
pub(crate) fn walk_over(
    edges: &mut dyn Edges,
    start: &str,
    dir: Direction,
    max_depth: usize,
    bound: &Bound,
) -> Result<BTreeMap<String, Path>> {
    let from_start = Path::at(start);
    let mut best: BTreeMap<String, Path> = BTreeMap::new();
    // The nodes the next hop leaves from: those the last hop reached (the start first), hubs
    // left out. A node reached, and the start, keep the path that reached them first.
    let mut frontier: Vec<String> = vec![start.to_string()];
    for _ in 0..max_depth {
        if frontier.is_empty() {
            break;
        }
        let at: Vec<&str> = frontier.iter().map(String::as_str).collect();
        let mut next: BTreeMap<String, Path> = BTreeMap::new();
        edges.each_hop(&at, &mut |from, to, ty, w| {
            if to == start || best.contains_key(to) {
                return;
            }
            let head = match from == start {
                true => &from_start,
                false => match best.get(from) {
                    Some(head) => head,
                    None => return,
                },
            };
            let Some(cand) = head.hop(ty, w, to.to_string(), dir == Direction::Out) else {
                return;
            };
            match next.get(to) {
                Some(cur) if !cand.better_than(cur) => {}
                _ => {
                    next.insert(to.to_string(), cand);
                }
            }
        })?;
        frontier = next.keys().filter(|k| bound.passes(k)).cloned().collect();
        best.extend(next);
    }
    Ok(best)
}
