//! The closure's rows as they read with node ids. Both databases key them by the nodes'
//! integer keys (which differ between the two once nodes were deleted and added again) and
//! keep each path in a binary column; the tests compare what those say.

use crate::backend::{Backend, Cell, Rows};
use agentmem_core::graph::stored::Stored;
use std::collections::HashMap;

/// Rows of (ancestor id, descendant id, depth, path as JSON, edge types as JSON, total
/// weight), ordered by ancestor and descendant id.
pub fn rows(db: &mut dyn Backend) -> Rows {
    let hex = match db.name() {
        "sqlite" => "hex(hops)",
        _ => "upper(encode(hops, 'hex'))",
    };
    let ids: HashMap<i64, String> = db
        .query("SELECT seq, id FROM mem_graph_nodes", &[])
        .unwrap()
        .into_iter()
        .map(|r| match (&r[0], &r[1]) {
            (Cell::Int(s), Cell::Text(id)) => (*s, id.clone()),
            other => panic!("a node's seq and id: {other:?}"),
        })
        .collect();
    let sql =
        format!("SELECT ancestor, descendant, depth, {hex}, total_weight FROM mem_graph_closure");
    let mut out: Rows = db
        .query(&sql, &[])
        .unwrap()
        .into_iter()
        .map(|r| {
            let (Cell::Int(a), Cell::Int(d), Cell::Int(depth), Cell::Text(hex)) =
                (&r[0], &r[1], &r[2], &r[3])
            else {
                panic!("a closure row: {r:?}")
            };
            let bytes: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            let s = Stored::decode(*a, *d, *depth as usize, &bytes).unwrap();
            let nodes: Vec<&str> = s.nodes.iter().map(|k| ids[k].as_str()).collect();
            vec![
                Cell::Text(nodes[0].to_string()),
                Cell::Text(nodes[nodes.len() - 1].to_string()),
                Cell::Int(*depth),
                Cell::Text(serde_json::to_string(&nodes).unwrap()),
                Cell::Text(serde_json::to_string(&s.types).unwrap()),
                r[4].clone(),
            ]
        })
        .collect();
    let key = |r: &Vec<Cell>| match (&r[0], &r[1]) {
        (Cell::Text(a), Cell::Text(d)) => (a.clone(), d.clone()),
        _ => unreachable!("the ends are text"),
    };
    out.sort_by_key(key);
    out
}
