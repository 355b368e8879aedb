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

/// One to three distinct names of the pool, for a file's functions.
fn names(rng: &mut Rng) -> BTreeSet<&'static str> {
    (0..1 + rng.below(3))
        .map(|_| NAMES[rng.below(NAMES.len())])
        .collect()
}

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
    for name in names(rng) {
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
        .filter_map(|(p, s)| {
            let lang = if p.ends_with(".py") {
                Lang::Python
            } else if p.ends_with(".go") {
                Lang::Go
            } else {
                return None;
            };
            Some((p, outline(lang, s)))
        })
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
            let found: Vec<String> = if p.ends_with(".go") {
                go_package(files, &r.target)
            } else {
                paths::candidates(Lang::Python, p, &r.target)
                    .into_iter()
                    .find(|c| c != *p && files.contains_key(c))
                    .into_iter()
                    .collect()
            };
            for f in found.into_iter().filter(|f| f != *p) {
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

/// The files a Go import names, by Go's rules over `files`: the root `go.mod`'s module path,
/// then the folder under it; every `.go` file directly in it but tests.
fn go_package(files: &BTreeMap<String, String>, import: &str) -> Vec<String> {
    let Some(module) = files
        .get("go.mod")
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("module ")))
    else {
        return Vec::new();
    };
    let folder = if import == module {
        String::new()
    } else {
        match import.strip_prefix(&format!("{module}/")) {
            Some(rest) => format!("{rest}/"),
            None => return Vec::new(),
        }
    };
    files
        .keys()
        .filter(|p| {
            p.strip_prefix(&folder)
                .is_some_and(|name| !name.contains('/'))
                && p.ends_with(".go")
                && !p.ends_with("_test.go")
        })
        .cloned()
        .collect()
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

/// One random step on the graph and on `live`, the files it should hold: a file removed, a
/// batch of files written before any of their references resolve, or one file written.
/// `path` picks a file, `source` writes one.
fn step(
    c: &mut Sq,
    rng: &mut Rng,
    live: &mut BTreeMap<String, String>,
    path: &dyn Fn(&mut Rng) -> String,
    source: &dyn Fn(&mut Rng, &str) -> String,
) {
    let p = path(rng);
    match rng.below(4) {
        0 => {
            as_call(|| files::remove_file(c, "p", &p)).unwrap();
            live.remove(&p);
        }
        1 => {
            let mut batch = BTreeMap::new();
            for _ in 0..2 + rng.below(3) {
                let p = path(rng);
                let s = source(rng, &p);
                batch.insert(p, s);
            }
            let files: Vec<_> = batch
                .iter()
                .map(|(p, s)| json!({"path": p, "source": s}))
                .collect();
            as_call(|| index::index_files(c, "p", &json!(files).to_string())).unwrap();
            live.extend(batch);
        }
        _ => {
            let src = source(rng, &p);
            as_call(|| index::index_file(c, "p", &p, &src, None)).unwrap();
            live.insert(p, src);
        }
    }
}

#[test]
fn edges_equal_the_naive_resolution_after_every_step() {
    for seed in 1..=40u64 {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ seed.wrapping_mul(0x2545_F491_4F6C_DD1D));
        let mut c = open_with_triggers();
        let mut live: BTreeMap<String, String> = BTreeMap::new();
        for n in 0..30 {
            let path = |rng: &mut Rng| format!("m{}.py", rng.below(FILES));
            step(&mut c, &mut rng, &mut live, &path, &|rng, _| source(rng));
            let (want, got) = (expected(&live), actual(&mut c));
            assert_eq!(
                got, want,
                "seed {seed} step {n}: the graph's edges differ from the naive resolution\nfiles: {live:#?}"
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
                "seed {seed} step {n}: a reference names a node that is gone"
            );
        }
    }
}

/// The Go files the Go sequences pick from: two packages under the root's, and a test.
const GO_FILES: &[&str] = &[
    "main.go",
    "util.go",
    "a/one.go",
    "a/two.go",
    "a/one_test.go",
    "b/b.go",
    "go.mod",
];

/// A random Go file of the package of its folder, importing packages of the module (or of
/// another module, or the standard library) and calling names of the pool, qualified or not.
fn go_source(rng: &mut Rng, path: &str) -> String {
    if path == "go.mod" {
        let module = ["example.com/app", "example.com/app", "example.com/other"][rng.below(3)];
        return format!("module {module}\n\ngo 1.22\n");
    }
    let package = path.rsplit_once('/').map_or("main", |(d, _)| d);
    let mut src = format!("package {package}\n\n");
    for _ in 0..rng.below(3) {
        let import = [
            "example.com/app/a",
            "example.com/app/b",
            "example.com/app",
            "fmt",
            "example.com/other/a",
        ][rng.below(5)];
        src.push_str(&format!("import \"{import}\"\n"));
    }
    for name in names(rng) {
        src.push_str(&format!("\nfunc {name}() {{\n"));
        for _ in 0..rng.below(3) {
            let callee = NAMES[rng.below(NAMES.len())];
            match rng.below(2) {
                0 => src.push_str(&format!("\t{callee}()\n")),
                _ => src.push_str(&format!("\ta.{callee}()\n")),
            }
        }
        src.push_str("}\n");
    }
    src
}

/// Go packages: an import reaches every file of the package its path names under the
/// module's `go.mod`, whatever order files, tests and the `go.mod` itself come, change and go
/// in.
#[test]
fn go_imports_equal_the_naive_resolution_after_every_step() {
    // Steps at which some file imported a package of two files: the sequences must get there.
    let mut whole_packages = 0;
    for seed in 1..=40u64 {
        let mut rng = Rng(0xD1B5_4A32_D192_ED03 ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut c = open_with_triggers();
        let mut live: BTreeMap<String, String> = BTreeMap::new();
        for n in 0..30 {
            let path = |rng: &mut Rng| GO_FILES[rng.below(GO_FILES.len())].to_owned();
            step(&mut c, &mut rng, &mut live, &path, &go_source);
            let (want, got) = (expected(&live), actual(&mut c));
            assert_eq!(
                got, want,
                "seed {seed} step {n}: the graph's edges differ from Go's resolution\nfiles: {live:#?}"
            );
            let imports: Vec<_> = want.iter().filter(|(t, ..)| t == "imports").collect();
            whole_packages += usize::from(imports.iter().any(|(_, from, to)| {
                imports.iter().any(|(_, f, t)| {
                    f == from && t != to && t.0.starts_with("a/") && to.0.starts_with("a/")
                })
            }));
        }
    }
    assert!(
        whole_packages > 50,
        "only {whole_packages} steps imported a package of two files"
    );
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
