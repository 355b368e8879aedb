//! Reading the graph: neighbors and impact from the closure (or a walk when the closure
//! cannot answer), and counts.

use super::bound::{self, Bound};
use super::closure;
use super::keys::{self, Keys};
use super::flat::FlatPaths;
use super::path::Path;
use super::walk::{walk, Direction, EdgeFilter};
use crate::cluster::route;
use crate::args::check_one_of;
use crate::columns::row;
use crate::db::access::{self, Act};
use crate::db::batch::{for_each_lookup, Lookup};
use crate::db::direct::{Each, Scan};
use crate::db::scan::scan_or_query;
use crate::db::row::Fields;
use crate::json_opts::Opts;
use crate::{Conn, Error, JsonTree, Result, Strings, Value, ValueRef};
use serde_json::json;
use std::collections::BTreeMap;

row! {
    /// One row of `graph_neighbors`: a reached node and the best path to it.
    pub(crate) struct Neighbor {
        pub node_id: String,
        pub depth: i64,
        pub path: Strings,
        pub total_weight: f64,
        pub edge_types: Strings,
        pub r#type: String,
        pub label: String,
        pub file_path: Option<String>,
    }
}

const NEIGHBOR_OPTIONS: &[&str] = &[
    "direction",
    "max_depth",
    "edge_types",
    "node_types",
    "include_stale",
    "as_of",
    "limit",
];

/// A reached node with the best path between it and the start.
pub(crate) struct Reached {
    pub id: String,
    pub depth: usize,
    pub total_weight: f64,
    /// The path's node ids (none when the query asked for no paths) and the type of each
    /// hop.
    pub path: Strings,
    pub edge_types: Strings,
    pub ty: String,
    pub label: String,
    pub file_path: Option<String>,
}

/// What a neighborhood query asks.
struct Ask {
    dirs: Vec<Direction>,
    max_depth: usize,
    filter: EdgeFilter,
    node_types: Option<Vec<String>>,
    limit: usize,
    /// Whether the answer shows each path's node ids (`graph_impact` shows only its hops).
    paths: bool,
}

/// The start of a query: its node's key and resource, and that resource's closure depth.
struct Start {
    seq: i64,
    resource: String,
    depth: usize,
}

fn start(conn: &mut dyn Conn, id: &str) -> Result<Start> {
    if let Some(s) = start_directly(conn, id)? {
        return Ok(s);
    }
    let row = route::query(
        conn,
        "SELECT n.seq, n.resource_id, s.max_depth FROM mem_graph_nodes n \
         LEFT JOIN mem_graph_settings s ON s.resource_id = n.resource_id WHERE n.id = ?1{home:n}",
        &[id.into()],
    )?
        .into_iter()
        .next()
        .ok_or_else(|| no_node(id))?;
    let mut f = Fields::new(row);
    Ok(Start {
        seq: f.int().unwrap_or_default(),
        resource: f.text().unwrap_or_default(),
        depth: f.int().map_or(bound::DEFAULT_DEPTH, |d| d as usize),
    })
}

/// [`start`] read without statements where the host can: the node by its id, then its
/// resource's settings (two index reads, where the statement's join cost more to start than
/// to run). `None` when the host cannot.
fn start_directly(conn: &mut dyn Conn, id: &str) -> Result<Option<Start>> {
    let mut node = None;
    let nodes = Scan {
        table: "mem_graph_nodes",
        index: "mem_graph_nodes_id_key",
        equal: &[id.into()],
        from: None,
        each: None,
        columns: &["seq", "resource_id"],
        kept: false,
    };
    if !conn.scan_directly(&nodes, &mut |r| {
        node = Some(r.iter().map(ValueRef::to_owned).collect());
        false
    })? {
        return Ok(None);
    }
    let mut f = Fields::new(node.ok_or_else(|| no_node(id))?);
    let (seq, resource) = (f.int().unwrap_or_default(), f.text().unwrap_or_default());
    let mut depth = None;
    let settings = Scan {
        table: "mem_graph_settings",
        index: "mem_graph_settings_pkey",
        equal: &[resource.as_str().into()],
        from: None,
        each: None,
        columns: &["max_depth"],
        kept: false,
    };
    if !conn.scan_directly(&settings, &mut |r| {
        depth = r.first().and_then(ValueRef::as_i64);
        false
    })? {
        return Ok(None);
    }
    Ok(Some(Start {
        seq,
        resource,
        depth: depth.map_or(bound::DEFAULT_DEPTH, |d| d as usize),
    }))
}

fn no_node(id: &str) -> Error {
    Error::invalid("node_id", format!("no node {}", crate::error::echo(id)))
}

fn ask(o: &Opts, default_depth: Option<usize>, s: &Start, dirs: Vec<Direction>) -> Result<Ask> {
    let default_depth = default_depth.unwrap_or(s.depth).min(s.depth) as i64;
    Ok(Ask {
        dirs,
        max_depth: o.int("max_depth", default_depth, 1, s.depth as i64)? as usize,
        filter: EdgeFilter {
            include_stale: o.opt_bool("include_stale")?.unwrap_or(false),
            types: o.opt_strings("edge_types")?,
            as_of: o.opt_int("as_of")?,
        },
        node_types: o.opt_strings("node_types")?,
        limit: o.int("limit", 100, 0, 10_000)? as usize,
        paths: true,
    })
}

/// The nodes within reach, best first: fewer hops, heavier, then by id.
fn reach(conn: &mut dyn Conn, node: &str, s: &Start, a: &Ask) -> Result<Vec<Reached>> {
    let f = &a.filter;
    let closure_answers = !f.include_stale && f.types.is_none() && f.as_of.is_none();
    if let ([dir], true, None) = (a.dirs.as_slice(), closure_answers, &a.node_types) {
        return from_closure(conn, (s.seq, node), *dir, a);
    }
    let b = Bound::of(conn, &s.resource)?;
    let keys = &mut Keys::default();
    let mut best: BTreeMap<String, Path> = BTreeMap::new();
    for &dir in &a.dirs {
        let found = if closure_answers {
            closure::stored(conn, keys, node, dir, a.max_depth)?
        } else {
            walk(conn, node, dir, a.max_depth, f, &b)?
        };
        for (other, p) in found {
            match best.get(&other) {
                Some(cur) if !p.better_than(cur) => {}
                _ => {
                    best.insert(other, p);
                }
            }
        }
    }
    let ids: Vec<Value> = best.keys().map(|id| id.as_str().into()).collect();
    let mut out = Vec::new();
    for n in node_rows(conn, By::Id, &ids)? {
        if n.stale && !f.include_stale {
            continue;
        }
        if a.node_types.as_ref().is_some_and(|t| !t.contains(&n.ty)) {
            continue;
        }
        if let Some(p) = best.remove(&n.id) {
            out.push(Reached {
                depth: p.depth(),
                total_weight: p.total_weight(),
                path: if a.paths {
                    Strings::of(&p.nodes)
                } else {
                    Strings::default()
                },
                edge_types: Strings::of(&p.types),
                id: n.id,
                ty: n.ty,
                label: n.label,
                file_path: n.file_path,
            });
        }
    }
    sort_reached(&mut out);
    out.truncate(a.limit);
    Ok(out)
}

/// [`reach`] in one direction with nothing the closure lacks: one indexed range of the
/// closure, in the index's order (by depth) and cut in the database, then the nodes on its
/// paths. Two reads, as derived data and the application's rows are always read apart
/// (db::privilege), each without a statement where the host can. The range is twice the
/// limit, which leaves room for stale nodes; the rows of its last depth may go on past it, so
/// they count only when the range held them all, and the range is widened while they or stale
/// nodes crowd it. The start (its key and id) is on every path and is not looked up again.
fn from_closure(
    conn: &mut dyn Conn,
    (start, start_id): (i64, &str),
    dir: Direction,
    a: &Ask,
) -> Result<Vec<Reached>> {
    let mut range = a.limit.saturating_mul(2).saturating_add(16);
    loop {
        let params = [
            Value::Int(start),
            Value::Int(a.max_depth as i64),
            Value::Int(range as i64),
        ];
        let columns = &["ancestor", "descendant", "depth", "hops", "total_weight"];
        let (at, scan) = closure::range_scan(dir, &params[..1], columns);
        let sql = crate::db::sql_text::cached("from_closure", at, conn.dialect(), 0, || {
            format!(
                "SELECT {} FROM mem_graph_closure \
                 WHERE {at} = ?1 AND depth <= ?2{{home}} ORDER BY depth LIMIT ?3",
                columns.join(", ")
            )
        });
        let (mut paths, mut weights) = (FlatPaths::default(), Vec::new());
        scan_or_query(conn, &scan, &sql, &params, &mut |r| {
            // Read directly, the index goes on past the depth and the range.
            if r.get(2).and_then(ValueRef::as_i64).is_some_and(|d| d > a.max_depth as i64) {
                return Ok(false);
            }
            closure::push_row(r, &mut paths)?;
            weights.push(r.get(4).and_then(ValueRef::as_f64).unwrap_or(0.0));
            Ok(paths.len() < range)
        })?;
        let complete = paths.len() < range;
        let depth = |i: usize| paths.types(i).len();
        // The rows of a cut range's last depth wait for a wider one.
        let counted = match (complete, paths.len().checked_sub(1)) {
            (false, Some(last)) => (0..paths.len()).take_while(|&i| depth(i) < depth(last)).count(),
            _ => paths.len(),
        };
        let end_of = |i: usize| {
            let nodes = paths.nodes(i);
            match dir {
                Direction::Out => nodes[nodes.len() - 1],
                Direction::In => nodes[0],
            }
        };
        let mut seqs: Vec<i64> = if a.paths {
            paths.all_nodes().to_vec()
        } else {
            (0..paths.len()).map(end_of).collect()
        };
        seqs.sort_unstable();
        seqs.dedup();
        let seqs: Vec<Value> = seqs
            .into_iter()
            .filter(|&k| k != start)
            .map(Value::Int)
            .collect();
        let mut nodes = BySeq::of(node_rows(conn, By::Seq, &seqs)?);
        // The paths as ids first, while every node is there to be read; then each reached
        // node's fields move into its row (a node ends one row of a range at most).
        let mut ids_of = Vec::with_capacity(if a.paths { counted } else { 0 });
        if a.paths {
            // One lookup per node: a path's ids gathered in a list reused from path to path.
            let mut ids: Vec<&str> = Vec::new();
            for i in 0..counted {
                ids.clear();
                for &k in paths.nodes(i) {
                    ids.push(match k == start {
                        true => start_id,
                        false => nodes.get(k).ok_or_else(|| keys::missing(k))?.id.as_str(),
                    });
                }
                ids_of.push(Strings::of(&ids));
            }
        }
        let mut ids_of = ids_of.into_iter();
        let mut out = Vec::with_capacity(counted);
        for (i, &w) in weights.iter().enumerate().take(counted) {
            let end = end_of(i);
            let path = ids_of.next().unwrap_or_default();
            let n = nodes.take(end).ok_or_else(|| keys::missing(end))?;
            if n.stale {
                continue;
            }
            out.push(Reached {
                id: n.id,
                depth: depth(i),
                total_weight: w,
                path,
                edge_types: Strings::of(paths.types(i)),
                ty: n.ty,
                label: n.label,
                file_path: n.file_path,
            });
        }
        if complete || out.len() >= a.limit {
            sort_reached(&mut out);
            out.truncate(a.limit);
            return Ok(out);
        }
        range = range.saturating_mul(4);
    }
}

/// The order of an answer: fewer hops, heavier, then by id.
fn sort_reached(out: &mut [Reached]) {
    out.sort_by(|x, y| {
        x.depth
            .cmp(&y.depth)
            .then(y.total_weight.total_cmp(&x.total_weight))
            .then(x.id.cmp(&y.id))
    });
}

/// The column [`node_rows`] finds nodes by.
#[derive(Clone, Copy)]
enum By {
    Id,
    Seq,
}

/// A node as an answer shows it.
struct NodeRow {
    seq: i64,
    id: String,
    ty: String,
    label: String,
    file_path: Option<String>,
    stale: bool,
}

/// Node rows by key, each to be taken once: a list in key order searched by halves, which
/// costs less than hashing every key of a large answer.
struct BySeq(Vec<(i64, Option<NodeRow>)>);

impl BySeq {
    fn of(mut rows: Vec<NodeRow>) -> BySeq {
        rows.sort_unstable_by_key(|n| n.seq);
        BySeq(rows.into_iter().map(|n| (n.seq, Some(n))).collect())
    }

    fn at(&self, seq: i64) -> Option<usize> {
        self.0.binary_search_by_key(&seq, |(k, _)| *k).ok()
    }

    fn get(&self, seq: i64) -> Option<&NodeRow> {
        self.at(seq).and_then(|i| self.0[i].1.as_ref())
    }

    fn take(&mut self, seq: i64) -> Option<NodeRow> {
        self.at(seq).and_then(|i| self.0[i].1.take())
    }
}

/// The nodes whose `by` column (`id` or `seq`) is one of `keys` (no key twice).
fn node_rows(conn: &mut dyn Conn, by: By, keys: &[Value]) -> Result<Vec<NodeRow>> {
    let lookup = match by {
        By::Id => &Lookup {
            sqlite: "SELECT n.seq, n.id, n.type, n.label, n.file_path, n.stale_at \
                     FROM json_each(?1) AS k JOIN mem_graph_nodes AS n ON n.id = k.value{home:n}",
            postgres: "SELECT seq, id, type, label, file_path, stale_at FROM mem_graph_nodes \
                       WHERE id IN ({keys}){home}",
        },
        By::Seq => &Lookup {
            sqlite: "SELECT n.seq, n.id, n.type, n.label, n.file_path, n.stale_at \
                     FROM json_each(?1) AS k JOIN mem_graph_nodes AS n ON n.seq = k.value{home:n}",
            postgres: "SELECT seq, id, type, label, file_path, stale_at FROM mem_graph_nodes \
                       WHERE seq IN ({keys}){home}",
        },
    };
    let mut out = Vec::with_capacity(keys.len());
    let mut add = |r: &[ValueRef<'_>]| {
        let text = |i: usize| r.get(i).and_then(ValueRef::as_str).map(str::to_owned);
        if let (Some(seq), Some(id)) = (r.first().and_then(ValueRef::as_i64), text(1)) {
            out.push(NodeRow {
                seq,
                id,
                ty: text(2).unwrap_or_default(),
                label: text(3).unwrap_or_default(),
                file_path: text(4),
                stale: r.get(5).and_then(ValueRef::as_i64).is_some(),
            });
        }
    };
    // By key, read without a statement where the host can.
    let direct = Scan {
        table: "mem_graph_nodes",
        index: "mem_graph_nodes_pkey",
        equal: &[],
        from: None,
        each: Some(Each::single(keys)),
        columns: &["seq", "id", "type", "label", "file_path", "stale_at"],
        kept: false,
    };
    if matches!(by, By::Seq)
        && conn.scan_directly(&direct, &mut |r| {
            add(r);
            true
        })?
    {
        return Ok(out);
    }
    for_each_lookup(conn, lookup, keys, &mut |r| {
        add(r);
        Ok(())
    })?;
    Ok(out)
}

/// `graph_neighbors(node_id [, options])`: the nodes within `max_depth` hops (default 1) of
/// the node, `direction` out (what it points to, default), in (what points to it) or both,
/// with the best path to each. Options: `edge_types`, `node_types`, `include_stale`, `as_of`
/// (epoch ms: the edges valid then), `limit` (default 100). Order: depth, then total weight
/// descending, then node id.
pub(crate) fn neighbors(conn: &mut dyn Conn, node: &str, options: Option<&str>) -> Result<Vec<Neighbor>> {
    Ok(reached(conn, node, options)?
        .into_iter()
        .map(|r| Neighbor {
            node_id: r.id,
            depth: r.depth as i64,
            path: r.path,
            total_weight: r.total_weight,
            edge_types: r.edge_types,
            r#type: r.ty,
            label: r.label,
            file_path: r.file_path,
        })
        .collect())
}

/// [`neighbors`] as the reached nodes themselves, for callers in the core.
pub(crate) fn reached(conn: &mut dyn Conn, node: &str, options: Option<&str>) -> Result<Vec<Reached>> {
    let o = Opts::parse("options", options, NEIGHBOR_OPTIONS)?;
    let dir = o.opt_str("direction")?.unwrap_or_else(|| "out".into());
    check_one_of("options.direction", &dir, &["out", "in", "both"])?;
    let dirs = match dir.as_str() {
        "out" => vec![Direction::Out],
        "in" => vec![Direction::In],
        _ => vec![Direction::Out, Direction::In],
    };
    let s = start(conn, node)?;
    let a = ask(&o, Some(1), &s, dirs)?;
    reach(conn, node, &s, &a)
}

/// What `graph_impact` takes: the neighborhood options but `direction` (always in).
const IMPACT_OPTIONS: &[&str] = NEIGHBOR_OPTIONS.split_at(1).1;

/// `graph_impact(node_id [, options])` → JSON: what depends on the node (every node with a
/// path to it, within `max_depth`, default the resource's depth), grouped by depth, and the
/// files they are in — what to re-check when the node changes. `hubs` lists the reached hubs,
/// whose dependents were not followed (ask `graph_impact` of each).
pub(crate) fn impact(
    conn: &mut dyn Conn,
    node: &str,
    options: Option<&str>,
) -> Result<JsonTree<'static>> {
    let o = Opts::parse("options", options, IMPACT_OPTIONS)?;
    let s = start(conn, node)?;
    let a = Ask {
        paths: false,
        ..ask(&o, None, &s, vec![Direction::In])?
    };
    let reached = reach(conn, node, &s, &a)?;
    let hubs = bound::hubs(conn, &s.resource)?;
    let mut files: Vec<&str> = reached.iter().filter_map(|r| r.file_path.as_deref()).collect();
    files.sort_unstable();
    files.dedup();
    let files = Strings::of(&files);
    let mut unfollowed: Vec<&str> = reached
        .iter()
        .filter(|r| hubs.contains(&r.id))
        .map(|r| r.id.as_str())
        .collect();
    unfollowed.sort_unstable();
    let unfollowed = Strings::of(&unfollowed);
    let dependents = reached.len() as i64;
    let mut by_depth: BTreeMap<usize, Vec<JsonTree<'static>>> = BTreeMap::new();
    for r in reached {
        by_depth.entry(r.depth).or_default().push(dependent(r));
    }
    let by_depth = by_depth
        .into_iter()
        .map(|(depth, nodes)| {
            JsonTree::Object(vec![
                ("depth".into(), JsonTree::Int(depth as i64)),
                ("nodes".into(), JsonTree::Array(nodes)),
            ])
        })
        .collect();
    // Keys in the order JSON objects print them everywhere else.
    Ok(JsonTree::Object(vec![
        ("byDepth".into(), JsonTree::Array(by_depth)),
        ("dependents".into(), JsonTree::Int(dependents)),
        ("files".into(), JsonTree::Strings(files)),
        ("hubs".into(), JsonTree::Strings(unfollowed)),
        ("nodeId".into(), JsonTree::from(node)),
    ]))
}

/// A dependent in `graph_impact`'s answer, with the edge types of its path (`via`); its
/// strings move into the answer.
fn dependent(r: Reached) -> JsonTree<'static> {
    JsonTree::Object(vec![
        ("filePath".into(), JsonTree::from(r.file_path)),
        ("id".into(), JsonTree::from(r.id)),
        ("label".into(), JsonTree::from(r.label)),
        ("type".into(), JsonTree::from(r.ty)),
        ("via".into(), JsonTree::Strings(r.edge_types)),
    ])
}

/// `graph_stats(resource_id)` → JSON counts: nodes (and stale ones), edges (stale, no longer
/// valid), closure rows, and the depth bound.
pub(crate) fn stats(conn: &mut dyn Conn, r: &str) -> Result<String> {
    // Derived rows are counted only for a resource the caller sees: every figure of the
    // answer comes from the caller's view.
    let seen = access::may(conn, Act::See, super::TABLES, r)?;
    let mut count = |sql: &str| -> Result<i64> {
        Ok(conn
            .query_value(sql, &[r.into()])?
            .and_then(|v| v.as_i64())
            .unwrap_or(0))
    };
    let nodes = count("SELECT count(*) FROM mem_graph_nodes WHERE resource_id = ?1")?;
    let stale_nodes = count(
        "SELECT count(*) FROM mem_graph_nodes WHERE resource_id = ?1 AND stale_at IS NOT NULL",
    )?;
    let edges = count("SELECT count(*) FROM mem_graph_edges WHERE resource_id = ?1")?;
    let stale_edges = count(
        "SELECT count(*) FROM mem_graph_edges WHERE resource_id = ?1 AND stale_at IS NOT NULL",
    )?;
    let invalid_edges = count(
        "SELECT count(*) FROM mem_graph_edges WHERE resource_id = ?1 AND invalid_at IS NOT NULL",
    )?;
    let (closure_rows, hubs) = if seen {
        (
            count("SELECT count(*) FROM mem_graph_closure WHERE resource_id = ?1")?,
            count("SELECT count(*) FROM mem_graph_hubs WHERE resource_id = ?1")?,
        )
    } else {
        (0, 0)
    };
    let (depth, hub_in_degree) = bound::settings(conn, r)?;
    Ok(json!({
        "nodes": nodes,
        "staleNodes": stale_nodes,
        "edges": edges,
        "staleEdges": stale_edges,
        "invalidEdges": invalid_edges,
        "closureRows": closure_rows,
        "hubs": hubs,
        "maxDepth": depth,
        "hubInDegree": hub_in_degree,
    })
    .to_string())
}
