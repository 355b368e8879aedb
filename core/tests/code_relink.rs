//! The code graph's references against a naive resolver: random sequences of files indexed
//! (one at a time or in batches), edited and removed, in any order, and after every step the graph's `imports` and `calls`
//! edges equal what the resolution rules give when every current file is looked at at once —
//! so no edge depends on the order files were indexed in, none points at a symbol that is
//! gone, and none is missing once its target exists.
#![cfg(feature = "code")]

mod common;

use agentmem_core::code::language::Lang;
use agentmem_core::code::outline::outline;
use agentmem_core::code::paths;
use agentmem_core::code::seen::RefKind;
use agentmem_core::graph::{files, index};
use agentmem_core::{Conn, Value};
use common::{as_call, open_with_triggers, Rng, Sq};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};

const NAMES: &[&str] = &["alpha", "beta", "gamma", "delta"];
const FILES: usize = 5;

/// An edge by its ends: (type, from (path, name), to (path, name)); a file's name is its path.
type Edge = (String, (String, String), (String, String));

/// A random Python module: a few functions (and sometimes a class with a method) calling
/// names of the pool, importing some other modules.
fn module(rng: &mut Rng) -> String {
    let mut src = String::new();
    for _ in 0..rng.below(3) {
        src.push_str(&format!(
            "from .m{} import {}\n",
            rng.below(FILES),
            NAMES[rng.below(NAMES.len())]
        ));
    }
    let mut defined = BTreeSet::new();
    for _ in 0..1 + rng.below(3) {
        let name = NAMES[rng.below(NAMES.len())];
        if !defined.insert(name) {
            continue;
        }
        src.push_str(&format!("\ndef {name}():\n"));
        for _ in 0..rng.below(3) {
            src.push_str(&format!("    {}()\n", NAMES[rng.below(NAMES.len())]));
        }
        src.push_str("    return 0\n");
    }
    if rng.below(3) == 0 {
        let name = NAMES[rng.below(NAMES.len())];
        src.push_str(&format!(
            "\nclass Box:\n    def {name}(self):\n        return {}()\n",
            NAMES[rng.below(NAMES.len())]
        ));
    }
    src
}

/// The edges the rules give over all `files` at once.
fn expected(files: &BTreeMap<String, String>) -> BTreeSet<Edge> {
    let outlines: BTreeMap<&String, _> = files
        .iter()
        .map(|(p, s)| (p, outline(Lang::Python, s)))
        .collect();
    // Every callable: (name, path).
    let mut callables: Vec<(String, String)> = Vec::new();
    for (p, o) in &outlines {
        for s in &o.symbols {
            if matches!(s.kind, "function" | "method") {
                callables.push((s.name.clone(), (*p).clone()));
            }
        }
    }
    let mut out = BTreeSet::new();
    for (p, o) in &outlines {
        let node = |from: Option<usize>| match from {
            Some(i) => ((*p).clone(), o.symbols[i].name.clone()),
            None => ((*p).clone(), (*p).clone()),
        };
        let mut imported = BTreeSet::new();
        for r in o.refs.iter().filter(|r| r.kind == RefKind::Imports) {
            let found = paths::candidates(Lang::Python, p, &r.target)
                .into_iter()
                .find(|c| c != *p && files.contains_key(c));
            if let Some(f) = found {
                out.insert(("imports".to_owned(), node(r.from), (f.clone(), f.clone())));
                imported.insert(f);
            }
        }
        for r in o.refs.iter().filter(|r| r.kind == RefKind::Calls) {
            let fits: Vec<&(String, String)> =
                callables.iter().filter(|(n, _)| *n == r.target).collect();
            let local: Vec<_> = fits.iter().filter(|(_, f)| f == *p).collect();
            let near: Vec<_> = fits.iter().filter(|(_, f)| imported.contains(f)).collect();
            let to = match (local.len(), near.len(), fits.len()) {
                (1, _, _) => Some(local[0]),
                (0, 1, _) => Some(near[0]),
                (0, 0, 1) => Some(&fits[0]),
                _ => None,
            };
            if let Some((name, file)) = to {
                let from = node(r.from);
                let to = (file.clone(), name.clone());
                if from != to {
                    out.insert(("calls".to_owned(), from, to));
                }
            }
        }
    }
    out
}

/// The graph's imports and calls edges, by their ends.
fn actual(c: &mut Sq) -> BTreeSet<Edge> {
    let rows = c
        .query(
            "SELECT e.type, f.file_path, CASE WHEN f.type = 'file' THEN f.file_path ELSE f.label END, \
               t.file_path, CASE WHEN t.type = 'file' THEN t.file_path ELSE t.label END \
             FROM mem_graph_edges e JOIN mem_graph_nodes f ON f.id = e.from_id \
             JOIN mem_graph_nodes t ON t.id = e.to_id WHERE e.type IN ('imports', 'calls')",
            &[],
        )
        .unwrap();
    let t = |v: &Value| v.as_str().unwrap().to_owned();
    rows.iter()
        .map(|r| (t(&r[0]), (t(&r[1]), t(&r[2])), (t(&r[3]), t(&r[4]))))
        .collect()
}

/// Names defined twice in one file make the rules ambiguous in ways a person would not
/// write; the generator avoids a class method named like a function of its own file.
fn clean(src: &str) -> bool {
    let o = outline(Lang::Python, src);
    let names: Vec<&str> = o
        .symbols
        .iter()
        .filter(|s| s.kind != "class")
        .map(|s| s.name.as_str())
        .collect();
    let set: BTreeSet<&str> = names.iter().copied().collect();
    set.len() == names.len()
}

/// A module [`clean`] accepts.
fn source(rng: &mut Rng) -> String {
    loop {
        let s = module(rng);
        if clean(&s) {
            return s;
        }
    }
}

#[test]
fn edges_equal_the_naive_resolution_after_every_step() {
    for seed in 1..=40u64 {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ seed.wrapping_mul(0x2545_F491_4F6C_DD1D));
        let mut c = open_with_triggers();
        let mut live: BTreeMap<String, String> = BTreeMap::new();
        for step in 0..30 {
            let path = format!("m{}.py", rng.below(FILES));
            match rng.below(4) {
                0 => {
                    as_call(|| files::remove_file(&mut c, "p", &path)).unwrap();
                    live.remove(&path);
                }
                1 => {
                    // A batch: several files written before any of their references resolve.
                    let mut batch = BTreeMap::new();
                    for _ in 0..2 + rng.below(3) {
                        batch.insert(format!("m{}.py", rng.below(FILES)), source(&mut rng));
                    }
                    let files: Vec<_> = batch
                        .iter()
                        .map(|(p, s)| json!({"path": p, "source": s}))
                        .collect();
                    as_call(|| index::index_files(&mut c, "p", &json!(files).to_string())).unwrap();
                    live.extend(batch);
                }
                _ => {
                    let src = source(&mut rng);
                    as_call(|| index::index_file(&mut c, "p", &path, &src, None)).unwrap();
                    live.insert(path.clone(), src);
                }
            }
            let (want, got) = (expected(&live), actual(&mut c));
            assert_eq!(
                got, want,
                "seed {seed} step {step}: the graph's edges differ from the naive resolution\nfiles: {live:#?}"
            );
            let dangling = c
                .query_value(
                    "SELECT count(*) FROM mem_graph_refs r WHERE r.to_id IS NOT NULL \
                     AND NOT EXISTS (SELECT 1 FROM mem_graph_nodes n WHERE n.id = r.to_id)",
                    &[],
                )
                .unwrap();
            assert_eq!(
                dangling.and_then(|v| v.as_i64()),
                Some(0),
                "seed {seed} step {step}: a reference names a node that is gone"
            );
        }
    }
}

/// Rows of a table as text, sorted: what two databases must hold alike.
fn dump(c: &mut Sq, sql: &str) -> Vec<String> {
    let mut rows: Vec<String> = c
        .query(sql, &[])
        .unwrap()
        .iter()
        .map(|r| format!("{r:?}"))
        .collect();
    rows.sort();
    rows
}

/// A batch large enough to write its edges in bulk (the closure built once after) leaves
/// the same edges, references and closure as the same files indexed one at a time, the
/// closure kept edge by edge.
#[test]
fn a_bulk_batch_equals_files_indexed_one_by_one() {
    let mut rng = Rng(0x5DEE_CE66_D1CE_4E5B);
    let mut files = BTreeMap::new();
    for i in 0..40 {
        let mut src = String::new();
        for j in 0..12 {
            src.push_str(&format!("\ndef f{i}_{j}():\n"));
            for _ in 0..4 {
                src.push_str(&format!("    f{}_{}()\n", rng.below(40), rng.below(12)));
            }
        }
        files.insert(format!("pkg/m{i}.py"), src);
    }
    let mut bulk = open_with_triggers();
    let all: Vec<_> = files
        .iter()
        .map(|(p, s)| json!({"path": p, "source": s}))
        .collect();
    let answer = as_call(|| index::index_files(&mut bulk, "p", &json!(all).to_string())).unwrap();
    let written: serde_json::Value = serde_json::from_str(&answer).unwrap();
    let edges: u64 = written["edges"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert!(
        edges >= 1000,
        "the batch must be large enough to go in bulk: {edges} edges"
    );
    let mut one = open_with_triggers();
    for (p, s) in &files {
        as_call(|| index::index_file(&mut one, "p", p, s, None)).unwrap();
    }
    for sql in [
        "SELECT from_id, to_id, type, stale_at, invalid_at FROM mem_graph_edges",
        "SELECT file_id, from_id, kind, ref_no, target, rank, line, to_id FROM mem_graph_refs",
    ] {
        assert_eq!(dump(&mut bulk, sql), dump(&mut one, sql), "{sql}");
    }
    assert_eq!(common::closure(&mut bulk), common::closure(&mut one));
}
