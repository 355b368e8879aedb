//! `graph_load` writes many nodes and edges per statement; it must leave exactly what
//! `graph_node_upsert` and `graph_edge_add` called one after another leave — repeated ids,
//! repeated keys, repeated edges and partial fields included — and the same closure.

mod common;

use agentmem_core::graph::{load, nodes, upkeep};
use agentmem_core::{Conn, Value};
use common::{Rng, Sq};

/// A node JSON: some with an id (ids repeat), some found by key (keys repeat), with or
/// without a hash and a language.
fn node(rng: &mut Rng) -> String {
    let k = rng.below(6);
    let mut fields = vec![
        format!(r#""type":"{}""#, ["file", "function"][k % 2]),
        format!(r#""label":"l{k}""#),
    ];
    if rng.below(2) == 0 {
        fields.push(format!(r#""id":"n{}""#, rng.below(5)));
    } else {
        fields.push(format!(r#""file_path":"src/k{k}.rs""#));
    }
    if rng.below(2) == 0 {
        fields.push(format!(r#""content_hash":"h{}""#, rng.below(3)));
    }
    if rng.below(2) == 0 {
        fields.push(format!(r#""language":"{}""#, ["rust", "go"][rng.below(2)]));
    }
    format!("{{{}}}", fields.join(","))
}

/// An edge JSON between the explicit ids, with or without weight and valid_at.
fn edge(rng: &mut Rng) -> Option<(String, String, String, String)> {
    let (a, b) = (rng.below(5), rng.below(5));
    (a != b).then(|| {
        let mut o = Vec::new();
        if rng.below(2) == 0 {
            o.push(format!(r#""weight":{}"#, [0.5, 2.0][rng.below(2)]));
        }
        if rng.below(2) == 0 {
            o.push(format!(r#""valid_at":{}"#, 10 * rng.below(4)));
        }
        (
            format!("n{a}"),
            format!("n{b}"),
            ["calls", "imports"][rng.below(2)].to_string(),
            format!("{{{}}}", o.join(",")),
        )
    })
}

/// The nodes (explicit ids as they are; ids the database made replaced by their key) and the
/// edges, sorted, without timestamps.
fn state(c: &mut Sq) -> (Vec<Vec<Value>>, Vec<Vec<Value>>, i64) {
    let nodes = c
        .query(
            "SELECT CASE WHEN id LIKE 'n_' THEN id ELSE type || label END, type, label, \
             file_path, language, content_hash, layer, source FROM mem_graph_nodes ORDER BY 1, 2, 3",
            &[],
        )
        .unwrap();
    let edges = c
        .query(
            "SELECT from_id, to_id, type, weight, layer, valid_at, stale_at, invalid_at \
             FROM mem_graph_edges ORDER BY 1, 2, 3",
            &[],
        )
        .unwrap();
    let closure = c
        .query_value("SELECT count(*) FROM mem_graph_closure", &[])
        .unwrap()
        .and_then(|v| v.as_i64())
        .unwrap();
    (nodes, edges, closure)
}

#[test]
fn a_load_leaves_what_one_call_per_row_leaves() {
    for seed in 1..=40u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let node_list: Vec<String> = (0..5)
            .map(|i| format!(r#"{{"id":"n{i}","type":"file","label":"base{i}"}}"#))
            .chain((0..12).map(|_| node(&mut rng)))
            .collect();
        let edge_list: Vec<_> = (0..14).filter_map(|_| edge(&mut rng)).collect();
        let mut one = common::open_with_triggers();
        for n in &node_list {
            nodes::upsert(&mut one, "r", n).unwrap();
        }
        for (a, b, t, o) in &edge_list {
            upkeep::edge_add(&mut one, a, b, t, Some(o)).unwrap();
        }
        let mut bulk = common::open_with_triggers();
        let edges_json: Vec<String> = edge_list
            .iter()
            .map(|(a, b, t, o)| {
                let extra = o.trim_matches(|c| c == '{' || c == '}');
                let sep = if extra.is_empty() { "" } else { "," };
                format!(r#"{{"from":"{a}","to":"{b}","type":"{t}"{sep}{extra}}}"#)
            })
            .collect();
        let graph = format!(
            r#"{{"nodes":[{}],"edges":[{}]}}"#,
            node_list.join(","),
            edges_json.join(",")
        );
        load::load(&mut bulk, "r", &graph).unwrap();
        assert_eq!(state(&mut bulk), state(&mut one), "seed {seed}: {graph}");
    }
}
