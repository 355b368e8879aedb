//! The graph closure as a naive reference: every simple path over the counting edges,
//! enumerated, the best kept per pair. Both property tests compare the closure table with it:
//! the core's (SQLite) and the two-backend one (`tests/graph_parity.rs`). Plain `std` so the
//! core's tests can include this file as it is.

use std::collections::{BTreeMap, BTreeSet};

/// An edge as the oracle sees it.
#[derive(Clone, Debug)]
pub struct Edge {
    pub from: String,
    pub to: String,
    pub ty: String,
    pub weight: f64,
    /// Present and not stale: it counts.
    pub live: bool,
}

/// A closure row: depth, node ids, edge types, total weight.
pub type Row = (usize, Vec<String>, Vec<String>, f64);

/// (depth, weight in billionths negated, nodes, types): the least is the best path.
type Key = (usize, i128, Vec<String>, Vec<String>);

/// The closure of `edges` to `depth` hops, with a node of more than `hub_in_degree` counting
/// incoming edges never passed through (a path may start or end there).
pub fn closure(
    edges: &[Edge],
    depth: usize,
    hub_in_degree: usize,
) -> BTreeMap<(String, String), Row> {
    let live: Vec<&Edge> = edges.iter().filter(|e| e.live).collect();
    let mut in_degree: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &live {
        *in_degree.entry(e.to.as_str()).or_default() += 1;
    }
    let hubs: BTreeSet<&str> = in_degree
        .into_iter()
        .filter(|(_, n)| *n > hub_in_degree)
        .map(|(k, _)| k)
        .collect();
    let starts: BTreeSet<&str> = live.iter().map(|e| e.from.as_str()).collect();
    let mut best: BTreeMap<(String, String), (Key, f64)> = BTreeMap::new();
    struct Walk<'a> {
        live: &'a [&'a Edge],
        hubs: &'a BTreeSet<&'a str>,
        depth: usize,
        nodes: Vec<String>,
        types: Vec<String>,
        weights: Vec<f64>,
    }
    fn dfs(w: &mut Walk, best: &mut BTreeMap<(String, String), (Key, f64)>) {
        let at = w.nodes.last().unwrap().clone();
        if w.types.len() == w.depth || (w.nodes.len() > 1 && w.hubs.contains(at.as_str())) {
            return;
        }
        for e in w.live.iter().filter(|e| e.from == at) {
            if w.nodes.contains(&e.to) {
                continue;
            }
            w.nodes.push(e.to.clone());
            w.types.push(e.ty.clone());
            w.weights.push(e.weight);
            let units: i128 = w.weights.iter().map(|x| (x * 1e9).round() as i128).sum();
            let key: Key = (w.types.len(), -units, w.nodes.clone(), w.types.clone());
            let total = w.weights.iter().fold(0.0, |s, x| s + x);
            let pair = (w.nodes[0].clone(), e.to.clone());
            if best.get(&pair).is_none_or(|(k, _)| key < *k) {
                best.insert(pair, (key, total));
            }
            dfs(w, best);
            w.nodes.pop();
            w.types.pop();
            w.weights.pop();
        }
    }
    for s in starts {
        let mut w = Walk {
            live: &live,
            hubs: &hubs,
            depth,
            nodes: vec![s.to_string()],
            types: Vec::new(),
            weights: Vec::new(),
        };
        dfs(&mut w, &mut best);
    }
    best.into_iter()
        .map(|(pair, ((d, _, nodes, types), total))| (pair, (d, nodes, types, total)))
        .collect()
}
