//! The graph around some files: the nodes in them, the nodes one hop away in either direction
//! (the closure's depth-1 rows: present, non-stale edges), and those nodes' files. Recall
//! reads it twice: around the files the agent is working in (the graph list) and around the
//! top results' files (the neighborhood boost).

use crate::db::batch::query_in;
use crate::db::row::Fields;
use crate::{Conn, Result, Value};
use std::collections::BTreeMap;

/// Nodes and files by their distance from the files asked about: 0 (in them) or 1 (a hop
/// away).
#[derive(Default)]
pub(crate) struct Around {
    pub nodes: BTreeMap<String, u8>,
    pub files: BTreeMap<String, u8>,
}

impl Around {
    fn reach(&mut self, node: String, file: Option<String>, distance: u8) {
        let d = self.nodes.entry(node).or_insert(distance);
        *d = (*d).min(distance);
        if let Some(f) = file {
            let d = self.files.entry(f).or_insert(distance);
            *d = (*d).min(distance);
        }
    }
}

/// The graph around `files` in `resource` (every resource when `None`: unindexed).
pub(crate) fn around(conn: &mut dyn Conn, resource: Option<&str>, files: &[String]) -> Result<Around> {
    let mut out = Around::default();
    for f in files {
        out.files.insert(f.clone(), 0);
    }
    let keys: Vec<Value> = files.iter().map(|f| f.as_str().into()).collect();
    let in_files = match resource {
        Some(r) => query_in(
            conn,
            "SELECT id, file_path, seq FROM mem_graph_nodes \
             WHERE resource_id = ?1 AND file_path IN ({keys})",
            &[r.into()],
            &keys,
        )?,
        None => query_in(
            conn,
            "SELECT id, file_path, seq FROM mem_graph_nodes WHERE file_path IN ({keys})",
            &[],
            &keys,
        )?,
    };
    let mut starts = Vec::new();
    let mut met = std::collections::HashSet::new();
    for r in in_files {
        let mut f = Fields::new(r);
        if let (Some(id), file, Some(seq)) = (f.text(), f.text(), f.int()) {
            starts.push(Value::Int(seq));
            met.insert(seq);
            out.reach(id, file, 0);
        }
    }
    let mut next: Vec<Value> = Vec::new();
    for sql in [
        "SELECT descendant FROM mem_graph_closure WHERE depth = 1 AND ancestor IN ({keys}){home}",
        "SELECT ancestor FROM mem_graph_closure WHERE depth = 1 AND descendant IN ({keys}){home}",
    ] {
        for r in query_in(conn, sql, &[], &starts)? {
            if let Some(seq) = r.first().and_then(Value::as_i64) {
                if met.insert(seq) {
                    next.push(Value::Int(seq));
                }
            }
        }
    }
    for r in query_in(
        conn,
        "SELECT id, file_path FROM mem_graph_nodes WHERE seq IN ({keys}){home}",
        &[],
        &next,
    )? {
        let mut f = Fields::new(r);
        if let Some(id) = f.text() {
            out.reach(id, f.text(), 1);
        }
    }
    Ok(out)
}
