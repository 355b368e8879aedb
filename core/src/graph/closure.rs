//! The closure, kept exact incrementally: one row per (ancestor, descendant) pair within the
//! resource's depth bound, holding the best path (see [`Path::order`]) over the present,
//! non-stale edges that passes through no hub (see [`Bound`]).
//!
//! * Adding an edge `u → v` can only shorten paths through it: every ancestor of `u` (and `u`)
//!   is joined with every descendant of `v` (and `v`) within the bound, and a pair keeps the
//!   joined path when it beats the stored one. Joining the stored best paths is exact: the best
//!   path through the edge is the best path to `u`, the hop, then the best path from `v` (a
//!   join that revisits a node is beaten by a shorter path that is already stored). A hub at
//!   `u` (or `v`) takes no ancestors (descendants): the path would pass through it.
//! * Removing (or staling, or invalidating) an edge can only lengthen paths that used it: the
//!   pairs whose stored path takes that hop are recomputed by a bounded walk from their
//!   ancestor; no other pair changes.
//! * A node that becomes a hub stops being passed through: its outgoing edges are removed as
//!   above for the paths through it. A hub that stops being one has them added back.
//!
//! Cycles are legal: paths never revisit a node, and a node is never its own descendant.

use super::bound::{self, Bound};
use super::flat::FlatPaths;
use super::keys::Keys;
use super::path::Path;
use super::stored::Stored;
use super::walk::{walk, Direction, EdgeFilter};
use crate::cluster::route;
use crate::db::direct::{Each, Scan, Vouch, Write};
use crate::db::row::Fields;
use crate::db::scan::{scan_or_else, scan_or_query};
use crate::db::{batch, sql_text};
use crate::{Conn, Dialect, Result, Value, ValueRef};
use std::cmp::Ordering;
use std::collections::{BTreeMap, HashSet};

/// Keys per delete statement, rows per insert statement (powers of two: see
/// [`batch::shaped`]; lookups are cut by [`batch::query_in`]).
pub(super) const KEYS_PER_DELETE: usize = 256;
pub(super) const ROWS_PER_INSERT: usize = 64;

/// The columns a closure row is read from: its key and its hops.
const ROW_COLUMNS: [&str; 4] = ["ancestor", "descendant", "depth", "hops"];

/// Rows of [`ROW_COLUMNS`] as stored paths.
pub(crate) fn decode_rows(rows: Vec<crate::Row>) -> Result<Vec<Stored>> {
    rows.iter()
        .map(|r| {
            let int = |i: usize| r.get(i).and_then(Value::as_i64);
            let hops = match r.get(3) {
                Some(Value::Blob(hops)) => Some(hops.as_slice()),
                _ => None,
            };
            let (a, d, depth, hops) = parts([int(0), int(1), int(2)], hops)?;
            Stored::decode(a, d, depth, hops)
        })
        .collect()
}

/// A row of [`ROW_COLUMNS`] (other columns may follow) as a stored path.
pub(crate) fn decode_row(r: &[ValueRef<'_>]) -> Result<Stored> {
    let (a, d, depth, hops) = row_parts(r)?;
    Stored::decode(a, d, depth, hops)
}

/// A row of [`ROW_COLUMNS`] (other columns may follow) added to `paths`.
pub(crate) fn push_row(r: &[ValueRef<'_>], paths: &mut FlatPaths) -> Result<()> {
    let (a, d, depth, hops) = row_parts(r)?;
    paths.push(a, d, depth, hops)
}

/// A row's ancestor, descendant, depth and hops.
fn row_parts<'a>(r: &[ValueRef<'a>]) -> Result<(i64, i64, usize, &'a [u8])> {
    let int = |i: usize| r.get(i).and_then(ValueRef::as_i64);
    let hops = match r.get(3) {
        Some(ValueRef::Blob(hops)) => Some(*hops),
        _ => None,
    };
    parts([int(0), int(1), int(2)], hops)
}

/// A closure row's ancestor, descendant and depth, and its hops, all present.
fn parts(keys: [Option<i64>; 3], hops: Option<&[u8]>) -> Result<(i64, i64, usize, &[u8])> {
    match (keys, hops) {
        ([Some(a), Some(d), Some(depth)], Some(hops)) => Ok((a, d, depth as usize, hops)),
        _ => Err(crate::Error::internal("mem_graph_closure holds a malformed row")),
    }
}

/// The read of a node's range of paths in `dir` (`Out`: the paths from it) by the index that
/// `key` (the node's key) leads, showing `columns`; and the column that key is in.
pub(crate) fn range_scan<'a>(
    dir: Direction,
    key: &'a [Value],
    columns: &'static [&'static str],
) -> (&'static str, Scan<'a>) {
    let (at, index) = match dir {
        Direction::Out => ("ancestor", "mem_graph_closure_pkey"),
        Direction::In => ("descendant", "mem_graph_closure_reverse"),
    };
    let scan = Scan {
        table: "mem_graph_closure",
        index,
        equal: key,
        from: None,
        each: None,
        columns,
        kept: false,
    };
    (at, scan)
}

/// The read of the rows whose leading primary-key columns are each key of `each` in turn,
/// showing `columns`.
fn key_lookup<'a>(each: Each<'a>, columns: &'static [&'static str]) -> Scan<'a> {
    Scan {
        table: "mem_graph_closure",
        index: "mem_graph_closure_pkey",
        equal: &[],
        from: None,
        each: Some(each),
        columns,
        kept: false,
    }
}

/// The stored paths that end at the node keyed `seq` (`Direction::In`) or start at it
/// (`Out`), within `max_depth` hops, keyed by the other end's key; read without a statement
/// where the host can.
fn stored_rows(
    conn: &mut dyn Conn,
    seq: i64,
    dir: Direction,
    max_depth: usize,
) -> Result<BTreeMap<i64, Stored>> {
    let params = [Value::Int(seq), Value::Int(max_depth as i64)];
    let (at, scan) = range_scan(dir, &params[..1], &ROW_COLUMNS);
    let sql = sql_text::cached("stored_rows", at, conn.dialect(), 0, || {
        format!(
            "SELECT {} FROM mem_graph_closure WHERE {at} = ?1 AND depth <= ?2{{home}}",
            ROW_COLUMNS.join(", ")
        )
    });
    let mut out = BTreeMap::new();
    scan_or_query(conn, &scan, &sql, &params, &mut |r| {
        let s = decode_row(r)?;
        // Read directly, the range goes on past the depth, in its order.
        if s.depth() > max_depth {
            return Ok(false);
        }
        let other = match dir {
            Direction::Out => s.last(),
            Direction::In => s.first(),
        };
        out.insert(other, s);
        Ok(true)
    })?;
    Ok(out)
}

/// [`stored_rows`] of the node `node`, as paths of ids keyed by the other end's id.
pub(crate) fn stored(
    conn: &mut dyn Conn,
    keys: &mut Keys,
    node: &str,
    dir: Direction,
    max_depth: usize,
) -> Result<BTreeMap<String, Path>> {
    keys.load_ids(conn, [node])?;
    let found = stored_rows(conn, keys.seq(node)?, dir, max_depth)?;
    keys.load_seqs(conn, found.values().flat_map(|s| s.nodes.iter().copied()))?;
    found
        .into_values()
        .map(|s| {
            let p = keys.path(s)?;
            let other = match dir {
                Direction::Out => p.last(),
                Direction::In => p.first(),
            };
            Ok((other.to_string(), p))
        })
        .collect()
}

/// Keys per Postgres lookup statement (the keys go in array parameters, so the statement has
/// one shape whatever their number; this only bounds the parameters' size).
const KEYS_PER_LOOKUP: usize = 4096;

/// Ancestors per SQLite lookup statement (their descendants are the statement's `IN` list).
const ANCESTORS_PER_LOOKUP: usize = 64;

/// The text of a SQLite lookup of the stored rows from `ancestors` ancestors (`?1…`) to the
/// descendants of an `IN` list, within `max_depth` hops: probed at every depth, or, when
/// `range`, read along each ancestor's range and tested against the list (`+` keeps the list
/// from being used as a key).
fn lookup_text(ancestors: usize, max_depth: usize, range: bool) -> std::rc::Rc<str> {
    let form = ((ancestors as u64) << 8) | ((max_depth as u64) << 1) | u64::from(range);
    sql_text::cached("pair_lookup", "mem_graph_closure", Dialect::Sqlite, form, || {
        let heads = batch::values("#", ancestors, 1);
        let tests = if range {
            format!("c.depth <= {max_depth} AND +c.descendant IN ({{keys}})")
        } else {
            let depths: Vec<String> = (1..=max_depth).map(|d| d.to_string()).collect();
            format!("c.depth IN ({}) AND c.descendant IN ({{keys}})", depths.join(", "))
        };
        format!(
            "SELECT {} FROM mem_graph_closure AS c \
             WHERE c.ancestor IN ({heads}) AND {tests}{{home:c}}",
            ROW_COLUMNS.join(", ")
        )
    })
}

/// A stored range read whole costs less than probing for its pairs while it holds fewer than
/// this many rows per descendant asked (a probe per depth each, a seek from the root).
const RANGE_ROWS_PER_KEY: usize = 8;

/// The stored paths of the (ancestor, descendant) `pairs` of node keys, within `max_depth`
/// hops, keyed by their ends.
///
/// An add's pairs almost never have a stored row, so what a lookup costs is the search for
/// nothing, and the key names the depth: probing a pair is a seek per depth.
///
/// SQLite binds the descendants as an `IN` list (binding is cheaper there than unpacking a
/// JSON list: measured, 10% slower edge adds), in one statement for all the ancestors that
/// ask for the same ones — the ancestors at one depth above the edge join the same tails, and
/// each statement copies its lists into temporary B-trees first. Probing every depth of every
/// pair is a seek per depth and pair, reading an ancestor's range and testing each row
/// against the list a step per row. The range is read when a bounded count finds it short
/// (see [`RANGE_ROWS_PER_KEY`]); an ancestor that reaches half the graph is probed.
///
/// Postgres, where each statement is a trip through SPI, reads the keys of all the ancestors'
/// ranges in one read ([`stored_keys`]), and then the paths of the pairs it found by their
/// full keys; when the ranges hold more rows than the probes would seek, it probes every
/// depth of every pair by its full key instead ([`probe_pairs`]). Each of these is one index
/// scan where the host can read without statements.
fn stored_pairs(
    conn: &mut dyn Conn,
    pairs: &[(i64, i64)],
    max_depth: usize,
) -> Result<BTreeMap<(i64, i64), Stored>> {
    if pairs.is_empty() {
        return Ok(BTreeMap::new());
    }
    let mut rows = Vec::new();
    match conn.dialect() {
        Dialect::Sqlite => {
            let mut by_ancestor: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
            for &(a, d) in pairs {
                by_ancestor.entry(a).or_default().push(d);
            }
            // Ancestors that ask for the same descendants, the same way, share statements.
            let mut groups: BTreeMap<(bool, Vec<i64>), Vec<i64>> = BTreeMap::new();
            for (a, mut ds) in by_ancestor {
                ds.sort_unstable();
                ds.dedup();
                let range = short_range(conn, a, max_depth, ds.len() * RANGE_ROWS_PER_KEY)?;
                groups.entry((range, ds)).or_default().push(a);
            }
            for ((range, ds), ancestors) in groups {
                let ds: Vec<Value> = ds.into_iter().map(Value::Int).collect();
                for chunk in batch::shaped(&ancestors, ANCESTORS_PER_LOOKUP) {
                    let sql = lookup_text(chunk.len(), max_depth, range);
                    let fixed: Vec<Value> = chunk.iter().map(|&a| Value::Int(a)).collect();
                    rows.extend(decode_rows(batch::query_in(conn, &sql, &fixed, &ds)?)?);
                }
            }
        }
        Dialect::Postgres => {
            let mut ancestors: Vec<i64> = pairs.iter().map(|p| p.0).collect();
            ancestors.sort_unstable();
            ancestors.dedup();
            match stored_keys(conn, &ancestors, max_depth, pairs.len() * max_depth)? {
                Some(keys) => {
                    let wanted: HashSet<(i64, i64)> = pairs.iter().copied().collect();
                    let found: Vec<[i64; 3]> = keys
                        .into_iter()
                        .filter(|[a, _, d]| wanted.contains(&(*a, *d)))
                        .collect();
                    rows = rows_at(conn, &found)?;
                }
                None => rows = probe_pairs(conn, pairs, max_depth)?,
            }
        }
    }
    Ok(rows.into_iter().map(|s| ((s.first(), s.last()), s)).collect())
}

/// The keys `[ancestor, depth, descendant]` of the stored rows of `ancestors` within
/// `max_depth` hops: by one index scan where the host can, else by a statement the primary
/// key's index answers alone (a closure row's path is not in it, and through SPI a fetch of
/// each row from the heap cost more than the probes it saved); `None` when they are more than
/// `rows`, the count past which probing the pairs seeks less.
fn stored_keys(
    conn: &mut dyn Conn,
    ancestors: &[i64],
    max_depth: usize,
    rows: usize,
) -> Result<Option<Vec<[i64; 3]>>> {
    let heads: Vec<Value> = ancestors.iter().map(|&a| Value::Int(a)).collect();
    let scan = key_lookup(Each::single(&heads), &["ancestor", "depth", "descendant"]);
    let mut found = Vec::new();
    scan_or_else(
        conn,
        &scan,
        &mut |r| {
            let int = |i: usize| r.get(i).and_then(ValueRef::as_i64);
            match (int(0), int(1), int(2)) {
                (Some(a), Some(depth), Some(d)) => {
                    if depth as usize <= max_depth {
                        found.push([a, depth, d]);
                    }
                    Ok(found.len() <= rows)
                }
                _ => Err(crate::Error::internal("mem_graph_closure holds a malformed key")),
            }
        },
        |conn, f| {
            route::for_each_row(
                conn,
                "SELECT c.ancestor, c.depth, c.descendant FROM mem_graph_closure AS c \
                 WHERE c.ancestor = ANY(CAST(?1 AS BIGINT[])) AND c.depth <= ?2{home:c} LIMIT ?3",
                &[
                    int_array(ancestors.iter().copied()),
                    Value::Int(max_depth as i64),
                    Value::Int(rows as i64 + 1),
                ],
                &mut |r| f(r).map(drop),
            )
        },
    )?;
    Ok((found.len() <= rows).then_some(found))
}

/// The stored paths of the full keys `[ancestor, depth, descendant]`: looked up one after
/// the other in one index scan where the host can, else by a statement that takes each part
/// of the keys in an array parameter. Arrays, not one JSON list: Postgres reads a JSON number
/// as `numeric` and casting it back cost a tenth of an edge add.
fn rows_at(conn: &mut dyn Conn, keys: &[[i64; 3]]) -> Result<Vec<Stored>> {
    let flat: Vec<Value> = keys.iter().flatten().map(|&k| Value::Int(k)).collect();
    let scan = key_lookup(Each { width: 3, keys: &flat }, &ROW_COLUMNS);
    let mut rows = Vec::new();
    scan_or_else(
        conn,
        &scan,
        &mut |r| {
            rows.push(decode_row(r)?);
            Ok(true)
        },
        |conn, f| {
            let sql = sql_text::cached("rows_at", "mem_graph_closure", conn.dialect(), 0, || {
                format!(
                    "SELECT {} FROM mem_graph_closure AS c \
                     CROSS JOIN unnest(CAST(?1 AS BIGINT[]), CAST(?2 AS INTEGER[]), \
                                       CAST(?3 AS BIGINT[])) AS k(a, dp, d) \
                     WHERE c.ancestor = k.a AND c.depth = k.dp AND c.descendant = k.d{{home:c}}",
                    ROW_COLUMNS.join(", ")
                )
            });
            for chunk in keys.chunks(KEYS_PER_LOOKUP) {
                let part = |i: usize| int_array(chunk.iter().map(|k| k[i]));
                route::for_each_row(conn, &sql, &[part(0), part(1), part(2)], &mut |r| {
                    f(r).map(drop)
                })?;
            }
            Ok(())
        },
    )?;
    Ok(rows)
}

/// `ints` as the text of a Postgres array, `{1,2,3}`, for a parameter cast to an array type.
fn int_array(ints: impl Iterator<Item = i64>) -> Value {
    use std::fmt::Write;
    let mut text = String::from("{");
    for (i, n) in ints.enumerate() {
        if i > 0 {
            text.push(',');
        }
        let _ = write!(text, "{n}");
    }
    text.push('}');
    Value::Text(text)
}

/// The stored paths of `pairs`, probed: each pair's full key at every depth ([`rows_at`]).
fn probe_pairs(conn: &mut dyn Conn, pairs: &[(i64, i64)], max_depth: usize) -> Result<Vec<Stored>> {
    let mut keys: Vec<[i64; 3]> = (1..=max_depth as i64)
        .flat_map(|depth| pairs.iter().map(move |&(a, d)| [a, depth, d]))
        .collect();
    // In the index's order, each probe finds the pages of the one before it in the caches.
    keys.sort_unstable();
    rows_at(conn, &keys)
}

/// Whether `ancestor` has fewer than `rows` stored paths within `max_depth` hops (counted up
/// to `rows`, never past). A handful of keys is always probed: the count would cost as much.
fn short_range(conn: &mut dyn Conn, ancestor: i64, max_depth: usize, rows: usize) -> Result<bool> {
    if rows <= 2 * RANGE_ROWS_PER_KEY {
        return Ok(false);
    }
    let counted = route::query(
        conn,
        "SELECT count(*) FROM (SELECT 1 FROM mem_graph_closure \
         WHERE ancestor = ?1 AND depth <= ?2{home} LIMIT ?3) AS t",
        &[Value::Int(ancestor), Value::Int(max_depth as i64), Value::Int(rows as i64)],
    )?
    .into_iter()
    .next()
    .and_then(|r| Fields::new(r).int())
    .unwrap_or(0);
    Ok((counted as usize) < rows)
}

/// A closure row written without a statement: its only check is that a path has a hop, and
/// no trigger fires on it.
const CLOSURE_ROW: Vouch = Vouch {
    table: "mem_graph_closure",
    write: Write::Insert,
    checks: &["mem_graph_closure_depth_check"],
    triggers: &[],
    foreign_keys: &[],
};

/// The columns a closure row is written with, in [`put_all`]'s order.
const PUT_COLUMNS: [&str; 6] = ["ancestor", "depth", "descendant", "resource_id", "total_weight", "hops"];

/// Writes each path as its pair's row: without statements where the host can, else many
/// rows per statement. The pairs must have no row (see [`delete_rows`]).
fn put_all(conn: &mut dyn Conn, resource: &str, paths: &[Stored]) -> Result<()> {
    if paths.is_empty() {
        return Ok(());
    }
    if paths.iter().any(|s| s.depth() == 0) {
        return Err(crate::Error::internal("a closure path without a hop"));
    }
    let row = |s: &Stored| {
        [
            Value::Int(s.first()),
            Value::Int(s.depth() as i64),
            Value::Int(s.last()),
            Value::Real(s.total_weight()),
            Value::Blob(s.encode()),
        ]
    };
    if conn.writes_directly(&[&CLOSURE_ROW])? {
        let mut values = Vec::with_capacity(paths.len() * PUT_COLUMNS.len());
        for s in paths {
            let [a, depth, d, weight, hops] = row(s);
            values.extend([a, depth, d, Value::from(resource), weight, hops]);
        }
        return conn.insert_rows_directly(&CLOSURE_ROW, &PUT_COLUMNS, &values);
    }
    for chunk in batch::shaped(paths, ROWS_PER_INSERT) {
        let form = chunk.len() as u64;
        let dialect = conn.dialect();
        let sql = sql_text::cached("put_paths", "mem_graph_closure", dialect, form, || {
            let values = batch::values("(#, #, #, ?1, #, #)", chunk.len(), 2);
            format!(
                "INSERT{} INTO mem_graph_closure ({}) VALUES {values}",
                dialect.or_fail(),
                PUT_COLUMNS.join(", ")
            )
        });
        let mut params = Vec::with_capacity(chunk.len() * 5 + 1);
        params.push(Value::from(resource));
        for s in chunk {
            params.extend(row(s));
        }
        conn.execute(&sql, &params)?;
    }
    Ok(())
}

/// Deletes the stored rows of `paths` (each by its full key: ancestor, depth, descendant).
fn delete_rows(conn: &mut dyn Conn, paths: &[Stored]) -> Result<()> {
    let mut by_key: BTreeMap<(i64, usize), Vec<i64>> = BTreeMap::new();
    for p in paths {
        by_key.entry((p.first(), p.depth())).or_default().push(p.last());
    }
    for ((a, depth), ds) in by_key {
        for chunk in batch::shaped(&ds, KEYS_PER_DELETE) {
            let sql = format!(
                "DELETE FROM mem_graph_closure WHERE ancestor = ?1 AND depth = ?2 \
                 AND descendant IN ({})",
                batch::values("#", chunk.len(), 3)
            );
            let mut params = vec![Value::Int(a), Value::Int(depth as i64)];
            params.extend(chunk.iter().map(|d| Value::Int(*d)));
            let sql = route::homed(conn, &format!("{sql}{{home}}"), &mut params);
            conn.execute(&sql, &params)?;
        }
    }
    Ok(())
}

/// An edge as the closure sees it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Hop {
    pub resource: String,
    pub from: String,
    pub to: String,
    pub ty: String,
    pub weight: f64,
}

/// The keys of a hop's ends.
fn ends(conn: &mut dyn Conn, keys: &mut Keys, hop: &Hop) -> Result<(i64, i64)> {
    keys.load_ids(conn, [hop.from.as_str(), hop.to.as_str()])?;
    Ok((keys.seq(&hop.from)?, keys.seq(&hop.to)?))
}

/// The stored paths ending at the node keyed `node` (`Direction::In`: the heads of a hop from
/// it) or starting at it (`Out`: the tails of a hop to it) within `depth` hops, when paths may
/// pass through it, and the empty path at it; keyed by their other end.
fn ends_at(
    conn: &mut dyn Conn,
    node: i64,
    dir: Direction,
    depth: usize,
    passes: bool,
) -> Result<BTreeMap<i64, Stored>> {
    let mut out = if passes {
        stored_rows(conn, node, dir, depth)?
    } else {
        BTreeMap::new()
    };
    out.insert(node, Stored::starting(node));
    Ok(out)
}

/// [`ends_at`] the hop's start: the paths a hop from `node` extends.
fn heads(conn: &mut dyn Conn, node: i64, depth: usize, passes: bool) -> Result<Vec<Stored>> {
    Ok(ends_at(conn, node, Direction::In, depth, passes)?
        .into_values()
        .collect())
}

/// The ends of `tails` that `head`, one hop and the tail reach within `depth` hops without
/// coming back to the head's start.
fn joinable<'t>(head: &Stored, tails: &'t BTreeMap<i64, Stored>, depth: usize) -> Vec<&'t Stored> {
    let room = depth - 1 - head.depth();
    tails
        .iter()
        .filter(|(d, t)| **d != head.first() && t.depth() <= room)
        .map(|(_, t)| t)
        .collect()
}

/// Whether `cand` comes before `cur` in [`Path::order`]. The ids that order needs past the
/// rank are looked up only for a tie.
fn better(conn: &mut dyn Conn, keys: &mut Keys, cand: &Stored, cur: &Stored) -> Result<bool> {
    match cand.rank().cmp(&cur.rank()) {
        Ordering::Equal => {
            keys.load_seqs(conn, cand.nodes.iter().chain(&cur.nodes).copied())?;
            Ok(keys.path(cand.clone())?.better_than(&keys.path(cur.clone())?))
        }
        o => Ok(o == Ordering::Less),
    }
}

/// The closure after a present, non-stale edge appeared (or got better). Cost:
/// O(ancestors of `from` × descendants of `to`) within the bound. Paths are joined, compared
/// and written as node keys; ids are looked up only to break a tie.
pub(crate) fn add(conn: &mut dyn Conn, hop: &Hop, bound: &Bound) -> Result<()> {
    let keys = &mut Keys::default();
    let (from, to) = ends(conn, keys, hop)?;
    let room = bound.depth - 1;
    let heads = heads(conn, from, room, bound.passes(&hop.from))?;
    let tails = ends_at(conn, to, Direction::Out, room, bound.passes(&hop.to))?;
    let mut candidates = Vec::new();
    for head in &heads {
        conn.check_interrupt()?;
        for tail in joinable(head, &tails, bound.depth) {
            if let Some(cand) = head.join(&hop.ty, hop.weight, tail) {
                candidates.push(cand);
            }
        }
    }
    let pairs: Vec<(i64, i64)> = candidates.iter().map(|p| (p.first(), p.last())).collect();
    let mut current = stored_pairs(conn, &pairs, bound.depth)?;
    let mut better_paths = Vec::new();
    let mut beaten = Vec::new();
    for cand in candidates {
        match current.remove(&(cand.first(), cand.last())) {
            Some(cur) if !better(conn, keys, &cand, &cur)? => {}
            cur => {
                beaten.extend(cur);
                better_paths.push(cand);
            }
        }
    }
    delete_rows(conn, &beaten)?;
    put_all(conn, &hop.resource, &better_paths)
}

/// The closure after the edge `from → to` of type `ty` stopped counting (deleted, stale,
/// invalidated, or changed): the pairs whose path took it are recomputed from the edges as
/// they are now. Cost: finding them (ancestors of `from` × descendants of `to`), then one
/// bounded walk per affected ancestor.
pub(crate) fn remove(conn: &mut dyn Conn, hop: &Hop, bound: &Bound) -> Result<()> {
    let keys = &mut Keys::default();
    let (from, _) = ends(conn, keys, hop)?;
    let heads = heads(conn, from, bound.depth - 1, bound.passes(&hop.from))?;
    remove_through(conn, keys, hop, &heads, bound)
}

/// The key of the node `id` and the keys of the nodes whose stored paths reach it: the
/// nodes whose rows its removal can change.
pub(crate) fn reaching_node(conn: &mut dyn Conn, id: &str) -> Result<Vec<i64>> {
    let keys = &mut Keys::default();
    keys.load_ids(conn, [id])?;
    let seq = keys.seq(id)?;
    let mut out: Vec<i64> = stored_rows(conn, seq, Direction::In, bound::MAX_DEPTH)?
        .into_keys()
        .collect();
    out.push(seq);
    Ok(out)
}

/// Drops the stored paths that end at the node `id`, a node that is going and that no edge
/// leaves any more (so that no stored path passes through it).
pub(crate) fn drop_paths_to(conn: &mut dyn Conn, id: &str) -> Result<()> {
    let keys = &mut Keys::default();
    keys.load_ids(conn, [id])?;
    let mut params = vec![Value::Int(keys.seq(id)?)];
    let sql = route::homed(
        conn,
        "DELETE FROM mem_graph_closure WHERE descendant = ?1{home}",
        &mut params,
    );
    conn.execute(&sql, &params).map(|_| ())
}

/// [`remove`] for the paths from `heads` (paths ending at the hop's `from`).
fn remove_through(
    conn: &mut dyn Conn,
    keys: &mut Keys,
    hop: &Hop,
    heads: &[Stored],
    bound: &Bound,
) -> Result<()> {
    let (from, to) = ends(conn, keys, hop)?;
    let tails = ends_at(conn, to, Direction::Out, bound.depth - 1, true)?;
    let pairs: Vec<(i64, i64)> = heads
        .iter()
        .flat_map(|h| {
            joinable(h, &tails, bound.depth)
                .into_iter()
                .map(|t| (h.first(), t.last()))
        })
        .collect();
    let mut affected: BTreeMap<i64, Vec<Stored>> = BTreeMap::new();
    for p in stored_pairs(conn, &pairs, bound.depth)?.into_values() {
        if p.uses(&from, &to, &hop.ty) {
            affected.entry(p.first()).or_default().push(p);
        }
    }
    keys.load_seqs(conn, affected.values().flatten().flat_map(|p| [p.first(), p.last()]))?;
    for (a, paths) in affected {
        conn.check_interrupt()?;
        delete_rows(conn, &paths)?;
        let mut now = walk(
            conn,
            keys.id(a)?,
            Direction::Out,
            bound.depth,
            &EdgeFilter::present(),
            bound,
        )?;
        let mut found = Vec::new();
        for p in &paths {
            if let Some(path) = now.remove(keys.id(p.last())?) {
                found.push(path);
            }
        }
        put_paths(conn, keys, &hop.resource, found)?;
    }
    Ok(())
}

/// Makes the stored rows of `ancestors` those of `paths` (each from one of them), writing
/// only what differs: a row stored as found is left, a stored row not found goes, a path not
/// stored is written. A rebuild after a large write finds most rows as they were, and
/// reading a row costs a fraction of deleting and writing it again.
pub(super) fn replace_paths(
    conn: &mut dyn Conn,
    keys: &mut Keys,
    resource: &str,
    ancestors: &[i64],
    paths: Vec<Path>,
) -> Result<()> {
    let rows = batch::query_in(
        conn,
        &format!(
            "SELECT {} FROM mem_graph_closure WHERE ancestor IN ({{keys}}) AND resource_id = ?1",
            ROW_COLUMNS.join(", ")
        ),
        &[resource.into()],
        &ancestors.iter().map(|a| Value::Int(*a)).collect::<Vec<_>>(),
    )?;
    // A malformed row is not compared but replaced with the rest (a rebuild repairs).
    let Ok(stored) = decode_rows(rows) else {
        delete_ancestors(conn, resource, ancestors.to_vec())?;
        return put_paths(conn, keys, resource, paths);
    };
    let mut stored: BTreeMap<(i64, usize, i64), Stored> = stored
        .into_iter()
        .map(|s| ((s.first(), s.depth(), s.last()), s))
        .collect();
    keys.load_ids(conn, paths.iter().flat_map(|p| p.nodes.iter().map(String::as_str)))?;
    let (mut new, mut changed) = (Vec::new(), Vec::new());
    for p in paths {
        let s = keys.stored(p)?;
        match stored.remove(&(s.first(), s.depth(), s.last())) {
            Some(old) if old == s => {}
            Some(old) => {
                changed.push(old);
                new.push(s);
            }
            None => new.push(s),
        }
    }
    changed.extend(stored.into_values());
    delete_rows(conn, &changed)?;
    put_all(conn, resource, &new)
}

/// Deletes every stored row from the nodes keyed `ancestors`.
pub(super) fn delete_ancestors(conn: &mut dyn Conn, resource: &str, ancestors: Vec<i64>) -> Result<()> {
    let ancestors: Vec<Value> = ancestors.into_iter().map(Value::Int).collect();
    for chunk in batch::shaped(&ancestors, KEYS_PER_DELETE) {
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
    Ok(())
}

/// [`put_all`] for paths of ids.
pub(super) fn put_paths(conn: &mut dyn Conn, keys: &mut Keys, resource: &str, paths: Vec<Path>) -> Result<()> {
    keys.load_ids(conn, paths.iter().flat_map(|p| p.nodes.iter().map(String::as_str)))?;
    let stored = paths.into_iter().map(|p| keys.stored(p)).collect::<Result<Vec<_>>>()?;
    put_all(conn, resource, &stored)
}

/// The present, non-stale edges out of `node`.
fn out_hops(conn: &mut dyn Conn, resource: &str, node: &str) -> Result<Vec<Hop>> {
    Ok(conn
        .query(
            "SELECT to_id, type, weight FROM mem_graph_edges WHERE from_id = ?1 \
             AND stale_at IS NULL AND invalid_at IS NULL AND resource_id = ?2",
            &[node.into(), resource.into()],
        )?
        .into_iter()
        .filter_map(|r| {
            let mut f = Fields::new(r);
            Some(Hop {
                resource: resource.to_string(),
                from: node.to_string(),
                to: f.text()?,
                ty: f.text()?,
                weight: f.value().as_f64()?,
            })
        })
        .collect())
}

/// Re-checks whether `node` is a hub after its in-degree changed, and moves the paths through
/// it when that flips: a new hub's paths through it go, a former hub's come back.
pub(crate) fn recheck_hub(conn: &mut dyn Conn, resource: &str, node: &str, b: &mut Bound) -> Result<()> {
    let was = b.hubs.contains(node);
    let is = bound::above(conn, node, b.hub_in_degree)?;
    if was == is {
        return Ok(());
    }
    bound::set_hub(conn, resource, node, is)?;
    if is {
        // The ancestors whose paths still pass through the node, found before it counts as a hub.
        let keys = &mut Keys::default();
        keys.load_ids(conn, [node])?;
        let heads = heads(conn, keys.seq(node)?, b.depth - 1, true)?;
        b.hubs.insert(node.to_string());
        for hop in out_hops(conn, resource, node)? {
            remove_through(conn, keys, &hop, &heads, b)?;
        }
    } else {
        b.hubs.remove(node);
        for hop in out_hops(conn, resource, node)? {
            add(conn, &hop, b)?;
        }
    }
    Ok(())
}
