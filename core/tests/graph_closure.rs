//! The graph closure against a naive oracle: random graphs (cycles and parallel edges
//! included) under random sequences of edge adds, removals, stale and unstale, invalidation,
//! weight changes and node deletes — through the core's functions and through plain SQL — and
//! after every step the closure table equals the best paths found by enumerating every simple
//! path (pairs, depths, node paths, edge types and total weights).

mod common;

use agentmem_core::graph::{closure::MAX_DEPTH, load, nodes};
use agentmem_core::{Conn, Value};
use common::Sq;
use std::collections::BTreeMap;

/// An edge as the oracle sees it: (from, to, type, weight, counts).
type Edge = (String, String, String, f64, bool);

fn edges(c: &mut Sq) -> Vec<Edge> {
    c.query(
        "SELECT from_id, to_id, type, weight, CASE WHEN stale_at IS NULL AND invalid_at IS NULL \
         THEN 1 ELSE 0 END FROM mem_graph_edges",
        &[],
    )
    .unwrap()
    .into_iter()
    .map(|r| {
        let t = |v: &Value| v.as_str().unwrap().to_string();
        (
            t(&r[0]),
            t(&r[1]),
            t(&r[2]),
            r[3].as_f64().unwrap(),
            r[4].as_i64() == Some(1),
        )
    })
    .collect()
}

/// (depth, weight in billionths negated, nodes, types): the least is the best path.
type Key = (usize, i128, Vec<String>, Vec<String>);

/// Every simple path of at most MAX_DEPTH hops over counting edges; the best per pair.
fn oracle(edges: &[Edge]) -> BTreeMap<(String, String), (Key, f64)> {
    let live: Vec<&Edge> = edges.iter().filter(|e| e.4).collect();
    let mut starts: Vec<String> = live.iter().map(|e| e.0.clone()).collect();
    starts.sort();
    starts.dedup();
    let mut best: BTreeMap<(String, String), (Key, f64)> = BTreeMap::new();
    fn dfs(
        live: &[&Edge],
        nodes: &mut Vec<String>,
        types: &mut Vec<String>,
        weights: &mut Vec<f64>,
        best: &mut BTreeMap<(String, String), (Key, f64)>,
    ) {
        if types.len() == MAX_DEPTH {
            return;
        }
        let at = nodes.last().unwrap().clone();
        for e in live.iter().filter(|e| e.0 == at) {
            if nodes.contains(&e.1) {
                continue;
            }
            nodes.push(e.1.clone());
            types.push(e.2.clone());
            weights.push(e.3);
            let units: i128 = weights.iter().map(|w| (w * 1e9).round() as i128).sum();
            let key: Key = (types.len(), -units, nodes.clone(), types.clone());
            let total = weights.iter().fold(0.0, |s, w| s + w);
            let pair = (nodes[0].clone(), e.1.clone());
            if best.get(&pair).is_none_or(|(k, _)| key < *k) {
                best.insert(pair, (key, total));
            }
            dfs(live, nodes, types, weights, best);
            nodes.pop();
            types.pop();
            weights.pop();
        }
    }
    for s in starts {
        dfs(
            &live,
            &mut vec![s],
            &mut Vec::new(),
            &mut Vec::new(),
            &mut best,
        );
    }
    best
}

fn check(c: &mut Sq, step: &str) {
    let want = oracle(&edges(c));
    let rows = c
        .query(
            "SELECT ancestor_id, descendant_id, depth, path, edge_types, total_weight \
             FROM mem_graph_closure ORDER BY ancestor_id, descendant_id",
            &[],
        )
        .unwrap();
    let mut got = BTreeMap::new();
    for r in rows {
        let t = |v: &Value| v.as_str().unwrap().to_string();
        let nodes: Vec<String> = serde_json::from_str(&t(&r[3])).unwrap();
        let types: Vec<String> = serde_json::from_str(&t(&r[4])).unwrap();
        got.insert(
            (t(&r[0]), t(&r[1])),
            (
                r[2].as_i64().unwrap() as usize,
                nodes,
                types,
                r[5].as_f64().unwrap(),
            ),
        );
    }
    let want: BTreeMap<_, _> = want
        .into_iter()
        .map(|(pair, ((d, _, nodes, types), total))| (pair, (d, nodes, types, total)))
        .collect();
    assert_eq!(got, want, "after {step}");
}

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

const NODES: usize = 7;
const TYPES: [&str; 2] = ["calls", "imports"];
const WEIGHTS: [f64; 3] = [0.5, 1.0, 2.0];

fn node(i: usize) -> String {
    format!("n{i}")
}

fn upsert(c: &mut Sq, i: usize) {
    let json = format!(
        r#"{{"id":"{}","type":"file","label":"f{i}","file_path":"src/f{i}.rs"}}"#,
        node(i)
    );
    nodes::upsert(c, Some("r"), Some(&json)).unwrap();
}

fn random_edge(c: &mut Sq, rng: &mut Rng) -> Option<(String, String, String)> {
    let all = edges(c);
    (!all.is_empty()).then(|| {
        let e = &all[rng.below(all.len())];
        (e.0.clone(), e.1.clone(), e.2.clone())
    })
}

fn step(c: &mut Sq, rng: &mut Rng) -> String {
    let (a, b) = (rng.below(NODES), rng.below(NODES));
    let ty = TYPES[rng.below(2)];
    let w = WEIGHTS[rng.below(3)];
    match rng.below(10) {
        0..=2 if a != b => {
            let opts = format!(r#"{{"weight":{w}}}"#);
            nodes::edge_add(c, Some(&node(a)), Some(&node(b)), Some(ty), Some(&opts)).unwrap();
            format!("graph_edge_add {a}->{b} {ty} {w}")
        }
        3 if a != b => {
            let sql = "INSERT INTO mem_graph_edges (resource_id, from_id, to_id, type, weight) \
                       VALUES ('r', ?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING";
            c.execute(
                sql,
                &[node(a).into(), node(b).into(), ty.into(), Value::Real(w)],
            )
            .unwrap();
            format!("plain INSERT {a}->{b} {ty} {w}")
        }
        4 => match random_edge(c, rng) {
            Some((f, t, ty)) => {
                c.execute(
                    "DELETE FROM mem_graph_edges WHERE from_id = ?1 AND to_id = ?2 AND type = ?3",
                    &[f.as_str().into(), t.as_str().into(), ty.as_str().into()],
                )
                .unwrap();
                format!("plain DELETE {f}->{t} {ty}")
            }
            None => "nothing".into(),
        },
        5 => match random_edge(c, rng) {
            Some((f, t, ty)) => {
                let set = if rng.below(2) == 0 { "1" } else { "NULL" };
                c.execute(
                    &format!("UPDATE mem_graph_edges SET stale_at = {set} WHERE from_id = ?1 AND to_id = ?2 AND type = ?3"),
                    &[f.as_str().into(), t.as_str().into(), ty.as_str().into()],
                )
                .unwrap();
                format!("plain UPDATE stale_at = {set} on {f}->{t} {ty}")
            }
            None => "nothing".into(),
        },
        6 => match random_edge(c, rng) {
            Some((f, t, ty)) => {
                c.execute(
                    "UPDATE mem_graph_edges SET weight = ?4 WHERE from_id = ?1 AND to_id = ?2 AND type = ?3",
                    &[f.as_str().into(), t.as_str().into(), ty.as_str().into(), Value::Real(w)],
                )
                .unwrap();
                format!("plain UPDATE weight = {w} on {f}->{t} {ty}")
            }
            None => "nothing".into(),
        },
        7 => match random_edge(c, rng) {
            Some((f, t, ty)) => {
                let id = c
                    .query_value(
                        "SELECT id FROM mem_graph_edges WHERE from_id = ?1 AND to_id = ?2 AND type = ?3",
                        &[f.as_str().into(), t.as_str().into(), ty.as_str().into()],
                    )
                    .unwrap()
                    .and_then(Value::into_string);
                nodes::edge_invalidate(c, id.as_deref(), Some(5)).unwrap();
                format!("graph_edge_invalidate {f}->{t} {ty}")
            }
            None => "nothing".into(),
        },
        8 => {
            nodes::mark_stale(c, Some("r"), Some(&format!("src/f{a}.rs")), Some(7)).unwrap();
            format!("graph_mark_stale f{a}")
        }
        _ => {
            nodes::remove(c, Some(&node(a))).unwrap();
            upsert(c, a);
            format!("graph_node_remove {a} and upsert again")
        }
    }
}

#[test]
fn closure_equals_naive_paths_under_random_changes() {
    for seed in 1..=12u64 {
        let mut c = common::open_with_triggers();
        for i in 0..NODES {
            upsert(&mut c, i);
        }
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        for n in 0..120 {
            let what = step(&mut c, &mut rng);
            check(&mut c, &format!("seed {seed} step {n}: {what}"));
        }
    }
}

#[test]
fn bad_input_is_named_and_writes_nothing() {
    let mut c = common::open_with_triggers();
    upsert(&mut c, 0);
    upsert(&mut c, 1);
    let e = |r: agentmem_core::Result<String>| r.unwrap_err().to_string();
    let (a, b) = (node(0), node(1));
    assert_eq!(
        e(nodes::edge_add(
            &mut c,
            Some(&a),
            Some(&a),
            Some("calls"),
            None
        )),
        "to_id: must differ from from_id (no self-edges)"
    );
    assert!(e(nodes::edge_add(
        &mut c,
        Some(&a),
        Some("nope"),
        Some("calls"),
        None
    ))
    .starts_with("to_id: no node"));
    assert!(e(nodes::edge_add(
        &mut c,
        Some(&a),
        Some(&b),
        Some("calls"),
        Some(r#"{"weight":0}"#)
    ))
    .starts_with("options.weight: must be a number above 0"));
    assert!(
        e(nodes::upsert(&mut c, Some("r"), Some(r#"{"type":"file"}"#)))
            .starts_with("node.label: is required")
    );
    let other = r#"{"id":"x","type":"file","label":"x"}"#;
    nodes::upsert(&mut c, Some("other"), Some(other)).unwrap();
    assert!(e(nodes::edge_add(
        &mut c,
        Some(&a),
        Some("x"),
        Some("calls"),
        None
    ))
    .starts_with("to_id: node \"x\" belongs to resource \"other\""));
    let count = |c: &mut Sq, t: &str| {
        c.query_value(&format!("SELECT count(*) FROM {t}"), &[])
            .unwrap()
            .and_then(|v| v.as_i64())
    };
    assert_eq!(count(&mut c, "mem_graph_edges"), Some(0));
    assert_eq!(count(&mut c, "mem_graph_closure"), Some(0));
}

#[test]
fn a_bulk_load_builds_the_same_closure() {
    let mut rng = Rng(7);
    let mut c = common::open_with_triggers();
    let nodes_json: Vec<String> = (0..NODES)
        .map(|i| format!(r#"{{"id":"{}","type":"file","label":"f{i}"}}"#, node(i)))
        .collect();
    let mut edges_json = Vec::new();
    for _ in 0..30 {
        let (a, b) = (rng.below(NODES), rng.below(NODES));
        if a != b {
            edges_json.push(format!(
                r#"{{"from":"{}","to":"{}","type":"{}","weight":{}}}"#,
                node(a),
                node(b),
                TYPES[rng.below(2)],
                WEIGHTS[rng.below(3)]
            ));
        }
    }
    let graph = format!(
        r#"{{"nodes":[{}],"edges":[{}]}}"#,
        nodes_json.join(","),
        edges_json.join(",")
    );
    let out = load::load(&mut c, Some("r"), Some(&graph)).unwrap();
    assert!(out.contains(r#""nodes":7"#), "{out}");
    check(&mut c, "graph_load");
    let bad = r#"{"edges":[{"from":"n0","to":"n0","type":"calls"}]}"#;
    let e = load::load(&mut c, Some("r"), Some(bad))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("graph.edges[0]: to_id: must differ"), "{e}");
}
