//! The graph closure against a naive oracle: random graphs (cycles and parallel edges
//! included) under random sequences of edge adds, removals, stale and unstale, invalidation,
//! weight changes and node deletes — through the core's functions and through plain SQL — and
//! after every step the closure table equals the best paths found by enumerating every simple
//! path (pairs, depths, node paths, edge types and total weights).

mod common;

#[path = "../../tests/src/graph_oracle.rs"]
mod graph_oracle;

use agentmem_core::graph::{bound, load, nodes, settings as configure, upkeep};
use agentmem_core::{Conn, Value};
use common::{Rng, Sq};
use graph_oracle::Edge;
use std::collections::BTreeMap;

fn edges(c: &mut dyn Conn) -> Vec<Edge> {
    c.query(
        "SELECT from_id, to_id, type, weight, CASE WHEN stale_at IS NULL AND invalid_at IS NULL \
         THEN 1 ELSE 0 END FROM mem_graph_edges",
        &[],
    )
    .unwrap()
    .into_iter()
    .map(|r| {
        let t = |v: &Value| v.as_str().unwrap().to_string();
        Edge {
            from: t(&r[0]),
            to: t(&r[1]),
            ty: t(&r[2]),
            weight: r[3].as_f64().unwrap(),
            live: r[4].as_i64() == Some(1),
        }
    })
    .collect()
}

/// The resource's (max_depth, hub_in_degree) as stored.
fn settings(c: &mut Sq) -> (usize, usize) {
    let (d, h) = bound::settings(c, "r").unwrap();
    (d, h as usize)
}

fn check(c: &mut Sq, step: &str) {
    let (depth, hub) = settings(c);
    let want = graph_oracle::closure(&edges(c), depth, hub);
    let got: BTreeMap<_, _> = common::closure(c)
        .into_iter()
        .map(|(k, (depth, nodes, types, _, total))| (k, (depth, nodes, types, total)))
        .collect();
    assert_eq!(got, want, "after {step} (depth {depth}, hubs above {hub})");
    let hubs = c
        .query_value("SELECT count(*) FROM mem_graph_hubs", &[])
        .unwrap()
        .and_then(|v| v.as_i64())
        .unwrap();
    let mut degree: BTreeMap<String, usize> = BTreeMap::new();
    for e in edges(c).into_iter().filter(|e| e.live) {
        *degree.entry(e.to).or_default() += 1;
    }
    let want_hubs = degree.values().filter(|n| **n > hub).count() as i64;
    assert_eq!(hubs, want_hubs, "hub rows after {step}");
}

const NODES: usize = 7;
/// Nodes of the graphs whose bulk writes touch a small part of them.
const MANY: usize = 40;
const TYPES: [&str; 2] = ["calls", "imports"];
const WEIGHTS: [f64; 3] = [0.5, 1.0, 2.0];

fn node(i: usize) -> String {
    format!("n{i}")
}

fn upsert(c: &mut dyn Conn, i: usize) {
    let json = format!(
        r#"{{"id":"{}","type":"file","label":"f{i}","file_path":"src/f{i}.rs"}}"#,
        node(i)
    );
    nodes::upsert(c, "r", &json).unwrap();
}

fn random_edge(c: &mut dyn Conn, rng: &mut Rng) -> Option<(String, String, String)> {
    let all = edges(c);
    (!all.is_empty()).then(|| {
        let e = &all[rng.below(all.len())];
        (e.from.clone(), e.to.clone(), e.ty.clone())
    })
}

/// The id of the edge `from → to` of type `ty`.
fn edge_id(c: &mut dyn Conn, from: &str, to: &str, ty: &str) -> String {
    c.query_value(
        "SELECT id FROM mem_graph_edges WHERE from_id = ?1 AND to_id = ?2 AND type = ?3",
        &[from.into(), to.into(), ty.into()],
    )
    .unwrap()
    .and_then(Value::into_string)
    .unwrap()
}

/// A random change among `n` nodes: through the core's functions, plain SQL, or the settings.
fn step(c: &mut dyn Conn, rng: &mut Rng, weights: &[f64], n: usize) -> String {
    let (a, b) = (rng.below(n), rng.below(n));
    let ty = TYPES[rng.below(2)];
    let w = weights[rng.below(weights.len())];
    match rng.below(11) {
        0..=2 if a != b => {
            let opts = format!(r#"{{"weight":{w}}}"#);
            upkeep::edge_add(c, &node(a), &node(b), ty, Some(&opts)).unwrap();
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
            Some((f, t, ty)) if rng.below(2) == 0 => {
                c.execute(
                    "DELETE FROM mem_graph_edges WHERE from_id = ?1 AND to_id = ?2 AND type = ?3",
                    &[f.as_str().into(), t.as_str().into(), ty.as_str().into()],
                )
                .unwrap();
                format!("plain DELETE {f}->{t} {ty}")
            }
            Some((f, t, ty)) => {
                let id = edge_id(c, &f, &t, &ty);
                assert_eq!(upkeep::edge_remove(c, &id).unwrap(), 1);
                format!("graph_edge_remove {f}->{t} {ty}")
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
                let id = edge_id(c, &f, &t, &ty);
                upkeep::edge_invalidate(c, &id, Some(5)).unwrap();
                format!("graph_edge_invalidate {f}->{t} {ty}")
            }
            None => "nothing".into(),
        },
        8 => {
            nodes::mark_stale(c, "r", &format!("src/f{a}.rs"), Some(7)).unwrap();
            format!("graph_mark_stale f{a}")
        }
        9 => {
            let (depth, hub) = (2 + rng.below(3), 1 + rng.below(3));
            if rng.below(2) == 0 {
                let o = format!(r#"{{"max_depth":{depth},"hub_in_degree":{hub}}}"#);
                configure::configure(c, "r", Some(&o)).unwrap();
                format!("graph_configure depth {depth} hubs above {hub}")
            } else {
                c.execute(
                    "INSERT INTO mem_graph_settings (resource_id, max_depth, hub_in_degree) \
                     VALUES ('r', ?1, ?2) ON CONFLICT (resource_id) DO UPDATE \
                     SET max_depth = excluded.max_depth, hub_in_degree = excluded.hub_in_degree",
                    &[Value::Int(depth as i64), Value::Int(hub as i64)],
                )
                .unwrap();
                format!("plain upsert of settings: depth {depth} hubs above {hub}")
            }
        }
        _ => {
            nodes::remove(c, &node(a)).unwrap();
            upsert(c, a);
            format!("graph_node_remove {a} and upsert again")
        }
    }
}

#[test]
fn closure_equals_naive_paths_under_random_changes() {
    for seed in 1..=16u64 {
        let mut c = common::open_with_triggers();
        // Keys out of the ids' order: a tie between two paths is broken by ids, never keys.
        for i in 0..NODES {
            upsert(&mut c, i * 3 % NODES);
        }
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        if seed % 2 == 0 {
            let o = format!(
                r#"{{"max_depth":{},"hub_in_degree":{}}}"#,
                2 + seed % 3,
                1 + seed % 3
            );
            configure::configure(&mut c, "r", Some(&o)).unwrap();
        }
        // Half the seeds weigh every edge 1: paths of the same length then tie, and the
        // ids decide between them.
        let weights = if seed % 4 < 2 {
            &WEIGHTS[..]
        } else {
            &[1.0][..]
        };
        for n in 0..120 {
            let what = step(&mut c, &mut rng, weights, NODES);
            check(&mut c, &format!("seed {seed} step {n}: {what}"));
        }
    }
}

/// Bulk writes (as `graph_load` and a large batch of files make them) rebuild the closure only
/// around what they touched: random changes made inside one, on graphs large enough that
/// most of the closure is kept, leave it equal to the oracle's. One write in five is as large
/// as a good part of the graph, which rebuilds the whole closure instead.
#[test]
fn a_bulk_write_rebuilds_what_it_touched() {
    for seed in 1..=12u64 {
        let mut c = common::open_with_triggers();
        for i in 0..MANY {
            upsert(&mut c, i * 7 % MANY);
        }
        let mut rng = Rng(seed.wrapping_mul(0xD1B5_4A32_D192_ED03));
        let o = format!(
            r#"{{"max_depth":{},"hub_in_degree":{}}}"#,
            2 + seed % 3,
            2 + seed % 4
        );
        configure::configure(&mut c, "r", Some(&o)).unwrap();
        let weights = if seed % 2 == 0 {
            &WEIGHTS[..]
        } else {
            &[1.0][..]
        };
        for _ in 0..60 {
            let (a, b) = (rng.below(MANY), rng.below(MANY));
            if a != b {
                upkeep::edge_add(&mut c, &node(a), &node(b), TYPES[rng.below(2)], None).unwrap();
            }
        }
        check(&mut c, &format!("seed {seed}: the graph before"));
        for n in 0..25 {
            let mut done = Vec::new();
            let count = 1 + rng.below(if n % 5 == 4 { 40 } else { 10 });
            load::bulk(&mut c, "r", |c| {
                for _ in 0..count {
                    done.push(step(c, &mut rng, weights, MANY));
                }
                Ok(())
            })
            .unwrap();
            check(
                &mut c,
                &format!("seed {seed} bulk write {n}: {}", done.join("; ")),
            );
        }
    }
}

/// A rebuild compares the stored rows with its walks and rewrites only what differs; rows it
/// cannot read (a malformed path, a row its walks do not find) are replaced all the same.
#[test]
fn a_rebuild_repairs_rows_it_cannot_read() {
    let mut c = common::open_with_triggers();
    for i in 0..4 {
        upsert(&mut c, i);
    }
    for (a, b) in [(0, 1), (1, 2), (2, 3)] {
        upkeep::edge_add(&mut c, &node(a), &node(b), TYPES[0], None).unwrap();
    }
    let seq = |c: &mut Sq, i: usize| {
        c.query_value(
            "SELECT seq FROM mem_graph_nodes WHERE id = ?1",
            &[node(i).into()],
        )
        .unwrap()
        .unwrap()
    };
    let (first, last) = (seq(&mut c, 0), seq(&mut c, 3));
    c.execute(
        "UPDATE mem_graph_closure SET hops = x'ff' WHERE ancestor = ?1 AND descendant = ?2",
        &[first.clone(), last.clone()],
    )
    .unwrap();
    // Node 3 has no edge out: a row from it is stray.
    c.execute(
        "INSERT INTO mem_graph_closure (ancestor, depth, descendant, resource_id, total_weight, hops) \
         VALUES (?1, 1, ?2, 'r', 1.0, x'01')",
        &[last, first],
    )
    .unwrap();
    configure::configure(&mut c, "r", Some(r#"{"hub_in_degree":999}"#)).unwrap();
    check(&mut c, "a rebuild over a malformed row and a stray one");
}

#[test]
fn bad_input_is_named_and_writes_nothing() {
    let mut c = common::open_with_triggers();
    upsert(&mut c, 0);
    upsert(&mut c, 1);
    let e = |r: agentmem_core::Result<String>| r.unwrap_err().to_string();
    let (a, b) = (node(0), node(1));
    assert_eq!(
        e(upkeep::edge_add(&mut c, &a, &a, "calls", None)),
        "to_id: must differ from from_id (no self-edges)"
    );
    assert!(e(upkeep::edge_add(&mut c, &a, "nope", "calls", None)).starts_with("to_id: no node"));
    assert!(e(upkeep::edge_add(
        &mut c,
        &a,
        &b,
        "calls",
        Some(r#"{"weight":0}"#)
    ))
    .starts_with("options.weight: must be a number above 0"));
    assert!(
        e(nodes::upsert(&mut c, "r", r#"{"type":"file"}"#)).starts_with("node.label: is required")
    );
    let other = r#"{"id":"x","type":"file","label":"x"}"#;
    nodes::upsert(&mut c, "other", other).unwrap();
    assert!(e(upkeep::edge_add(&mut c, &a, "x", "calls", None))
        .starts_with("to_id: node \"x\" belongs to resource \"other\""));
    let count = |c: &mut Sq, t: &str| {
        c.query_value(&format!("SELECT count(*) FROM {t}"), &[])
            .unwrap()
            .and_then(|v| v.as_i64())
    };
    assert_eq!(count(&mut c, "mem_graph_edges"), Some(0));
    assert_eq!(count(&mut c, "mem_graph_closure"), Some(0));
}

/// The JSON of a load of `nodes` nodes and up to `edges` random edges between them.
fn random_load(rng: &mut Rng, nodes: usize, edges: usize) -> String {
    let nodes_json: Vec<String> = (0..nodes)
        .map(|i| format!(r#"{{"id":"{}","type":"file","label":"f{i}"}}"#, node(i)))
        .collect();
    let mut edges_json = Vec::new();
    for _ in 0..edges {
        let (a, b) = (rng.below(nodes), rng.below(nodes));
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
    format!(
        r#"{{"nodes":[{}],"edges":[{}]}}"#,
        nodes_json.join(","),
        edges_json.join(",")
    )
}

/// A small load keeps the closure edge by edge; one of a thousand edges or more into an
/// empty resource goes in bulk. Both leave the oracle's closure.
#[test]
fn a_load_builds_the_same_closure() {
    let mut rng = Rng(7);
    let mut c = common::open_with_triggers();
    let graph = random_load(&mut rng, NODES, 30);
    let out = load::load(&mut c, "r", &graph).unwrap();
    assert!(out.contains(r#""nodes":7"#), "{out}");
    check(&mut c, "graph_load");
    let bad = r#"{"edges":[{"from":"n0","to":"n0","type":"calls"}]}"#;
    let e = load::load(&mut c, "r", bad).unwrap_err().to_string();
    assert!(e.starts_with("graph.edges[0]: to_id: must differ"), "{e}");
    let mut big = common::open_with_triggers();
    let graph = random_load(&mut rng, MANY, 1200);
    assert!(load::goes_in_bulk(&mut big, "r", 1200).unwrap());
    load::load(&mut big, "r", &graph).unwrap();
    check(&mut big, "graph_load in bulk");
}
