//! The code graph's Python imports against Python's own view: the packages of Debian's
//! Python 3.11 standard library the ctags test reads, indexed in one batch, and each file's
//! `import` and `from … import` statements read by Python's `ast` module and resolved by the
//! import system's rules (relative levels from the importing package, a module's file or its
//! package's `__init__.py`) among the same files. Every import edge must be one Python makes
//! (precision 1), and Python's must be found (recall ≥ 0.98); what differs is listed. (Today
//! all 201 of the 75 files are found.)
#![cfg(feature = "code")]

mod common;

use agentmem_core::graph::index;
use agentmem_core::Conn;
use common::{as_call, open_with_triggers};
use serde_json::json;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

const ROOT: &str = "/usr/lib/python3.11";
const PACKAGES: &[&str] = &["json", "email", "asyncio", "http", "logging"];

/// Python's view: (importing file, imported file) for every import whose module is among the
/// files: `import a.b` and `from a.b import name` name `a/b`'s file; `from . import name` the
/// submodule's file, or else the package's `__init__.py`.
const ORACLE: &str = r#"
import ast, json, os, sys
root, files = sys.argv[1], set(sys.argv[2:])
def module_file(mod):
    base = mod.replace('.', '/')
    for cand in (base + '.py', base + '/__init__.py'):
        if cand in files:
            return cand
    return None
pairs = set()
for f in sorted(files):
    tree = ast.parse(open(os.path.join(root, f), encoding='utf-8').read())
    parts = f[:-3].split('/')
    package = parts[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                t = module_file(a.name)
                if t and t != f:
                    pairs.add((f, t))
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            mod = '.'.join(base + ([node.module] if node.module else []))
            if node.module:
                t = module_file(mod)
                if t and t != f:
                    pairs.add((f, t))
            else:
                for a in node.names:
                    t = module_file(mod + '.' + a.name) or module_file(mod)
                    if t and t != f:
                        pairs.add((f, t))
print(json.dumps(sorted(pairs)))
"#;

#[test]
fn python_imports_match_the_import_system() {
    if !Path::new(ROOT).join("json/__init__.py").exists() {
        panic!("{ROOT}: Debian's python3.11 is needed (scripts/deps.sh installs it)");
    }
    let mut files = Vec::new();
    for p in PACKAGES {
        let mut stack = vec![Path::new(ROOT).join(p)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().map(Result::unwrap) {
                let path = e.path();
                if path.is_dir() && !path.ends_with("__pycache__") {
                    stack.push(path);
                } else if path.extension().is_some_and(|x| x == "py") {
                    let rel = path
                        .strip_prefix(ROOT)
                        .unwrap()
                        .to_str()
                        .unwrap()
                        .to_owned();
                    files.push((rel, std::fs::read_to_string(&path).unwrap()));
                }
            }
        }
    }
    files.sort();
    let out = Command::new("/usr/bin/python3")
        .args(["-c", ORACLE, ROOT])
        .args(files.iter().map(|(p, _)| p))
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let python: BTreeSet<(String, String)> = serde_json::from_slice(&out.stdout).unwrap();

    let mut c = open_with_triggers();
    let batch: Vec<_> = files
        .iter()
        .map(|(p, s)| json!({"path": p, "source": s}))
        .collect();
    as_call(|| index::index_files(&mut c, "py", &json!(batch).to_string())).unwrap();
    let ours: BTreeSet<(String, String)> = c
        .query(
            "SELECT DISTINCT f.file_path, t.file_path FROM mem_graph_edges e \
             JOIN mem_graph_nodes f ON f.id = e.from_id JOIN mem_graph_nodes t ON t.id = e.to_id \
             WHERE e.type = 'imports'",
            &[],
        )
        .unwrap()
        .into_iter()
        .map(|r| {
            (
                r[0].as_str().unwrap().to_owned(),
                r[1].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let wrong: Vec<_> = ours.difference(&python).collect();
    let missed: Vec<_> = python.difference(&ours).collect();
    let recall = 1.0 - missed.len() as f64 / python.len() as f64;
    eprintln!(
        "{} files; Python's import system: {} file pairs; ours: {}; missed: {:?}",
        files.len(),
        python.len(),
        ours.len(),
        missed
    );
    assert!(
        wrong.is_empty(),
        "import edges Python does not make: {wrong:?}"
    );
    assert!(recall >= 0.98, "recall {recall:.3}: missed {missed:?}");
}
