//! The code graph's Rust modules against the compiler's view: for crates of Cargo.lock, every
//! source file rustc read to build them — the dep-info files cargo writes beside this test's
//! own binary, for each feature set the workspace builds them with — must be reachable from
//! the crate's root through the `imports` edges `graph_index_files` made from its `mod`
//! declarations and `crate::` paths. Files the graph reaches that rustc did not read are
//! modules behind a `#[cfg]` those feature sets leave off; they are printed.
#![cfg(feature = "code")]

mod common;

use agentmem_core::graph::index;
use agentmem_core::Conn;
use common::{as_call, open_with_triggers};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Crates of Cargo.lock whose module trees are compared (those the ctags test reads).
const CRATES: &[&str] = &["serde_json", "regex-automata", "fst", "uuid", "base64"];

/// The `.rs` files under `dir` that some dep-info file in cargo's `deps` folder lists, relative
/// to `dir`.
fn compiler_files(deps: &Path, dir: &Path) -> BTreeSet<String> {
    let prefix = format!("{}/", dir.display());
    let mut out = BTreeSet::new();
    for e in std::fs::read_dir(deps).unwrap().flatten() {
        if e.path().extension().is_none_or(|x| x != "d") {
            continue;
        }
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        for word in text.split_whitespace() {
            let word = word.trim_end_matches(':');
            if let Some(rel) = word.strip_prefix(&prefix) {
                if rel.ends_with(".rs") && rel.starts_with("src/") {
                    out.insert(rel.to_owned());
                }
            }
        }
    }
    out
}

/// The files reachable from `root` through `imports` edges between files.
fn reachable(edges: &BTreeMap<String, BTreeSet<String>>, root: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::from([root.to_owned()]);
    let mut stack = vec![root.to_owned()];
    while let Some(f) = stack.pop() {
        for t in edges.get(&f).into_iter().flatten() {
            if seen.insert(t.clone()) {
                stack.push(t.clone());
            }
        }
    }
    seen
}

#[test]
fn rust_modules_match_the_files_rustc_reads() {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    let mut missed_all = Vec::new();
    for name in CRATES {
        let dir = common::registry::crate_dir(name)
            .unwrap_or_else(|| panic!("the sources of {name} in cargo's registry"));
        let rustc = compiler_files(deps, &dir);
        assert!(
            rustc.contains("src/lib.rs"),
            "{name}: no dep-info lists {} (is it built in this profile?)",
            dir.display()
        );
        let mut files = Vec::new();
        let mut stack = vec![dir.join("src")];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let path = e.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|x| x == "rs") {
                    let rel = path
                        .strip_prefix(&dir)
                        .unwrap()
                        .to_str()
                        .unwrap()
                        .to_owned();
                    files.push(
                        json!({"path": rel, "source": std::fs::read_to_string(&path).unwrap()}),
                    );
                }
            }
        }
        let mut c = open_with_triggers();
        as_call(|| index::index_files(&mut c, "rs", &json!(files).to_string())).unwrap();
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for r in c
            .query(
                "SELECT f.file_path, t.file_path FROM mem_graph_edges e \
                 JOIN mem_graph_nodes f ON f.id = e.from_id JOIN mem_graph_nodes t ON t.id = e.to_id \
                 WHERE e.type = 'imports' AND t.type = 'file'",
                &[],
            )
            .unwrap()
        {
            let text = |i: usize| r[i].as_str().unwrap().to_owned();
            edges.entry(text(0)).or_default().insert(text(1));
        }
        let ours = reachable(&edges, "src/lib.rs");
        let missed: Vec<&String> = rustc.difference(&ours).collect();
        let behind_cfg: Vec<&String> = ours.difference(&rustc).collect();
        eprintln!(
            "{name}: rustc read {} files, the graph's module tree reaches {}; missed {missed:?}; \
             reached but not read (cfg'd off): {behind_cfg:?}",
            rustc.len(),
            ours.len()
        );
        missed_all.extend(missed.into_iter().map(|m| format!("{name}/{m}")));
    }
    assert!(
        missed_all.is_empty(),
        "files rustc reads that the graph's module tree misses: {missed_all:?}"
    );
}
