//! The reference agrees with the catalog: the table of signatures in `docs/functions.md` is the
//! generated one (`AGENTMEM_BLESS=1` rewrites it: `make docs`), every public function has its
//! own entry in the prose (`docs/functions.md`, or `docs/tasks.md` for task memory), and the
//! prose documents no function the catalog lacks.

use agentmem_core::api::{self, reference, REFERENCE_BEGIN, REFERENCE_END};
use std::collections::BTreeSet;

fn docs_file(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../docs")
        .join(name)
}

fn path() -> std::path::PathBuf {
    docs_file("functions.md")
}

#[test]
fn signatures_are_generated_from_the_catalog() {
    let doc = std::fs::read_to_string(path()).unwrap();
    let start = doc
        .find(REFERENCE_BEGIN)
        .expect("begin marker in docs/functions.md");
    let body = start + REFERENCE_BEGIN.len() + 1;
    let end = doc
        .find(REFERENCE_END)
        .expect("end marker in docs/functions.md");
    let generated = reference();
    if doc[body..end] != generated {
        if std::env::var_os("AGENTMEM_BLESS").is_some() {
            let new = format!("{}{generated}{}", &doc[..body], &doc[end..]);
            std::fs::write(path(), new).unwrap();
        } else {
            panic!(
                "docs/functions.md's signatures differ from the catalog; run `make docs`.\n\
                 generated:\n{generated}"
            );
        }
    }
}

/// Names written as calls (`name(`) in headings and in the first cell of table rows, outside
/// the generated table, in the reference's pages.
fn documented() -> BTreeSet<String> {
    let doc = std::fs::read_to_string(path()).unwrap();
    let start = doc.find(REFERENCE_BEGIN).unwrap();
    let end = doc.find(REFERENCE_END).unwrap();
    let tasks = std::fs::read_to_string(docs_file("tasks.md")).unwrap();
    let prose = format!("{}{}{tasks}", &doc[..start], &doc[end..]);
    let mut names = BTreeSet::new();
    for line in prose.lines() {
        let scope = if line.starts_with('#') {
            line
        } else if line.starts_with("| `") {
            line.split(" | ").next().unwrap_or("")
        } else {
            continue;
        };
        for part in scope.split('`').skip(1).step_by(2) {
            if let Some(name) = part.split('(').next().filter(|_| part.contains('(')) {
                names.insert(name.trim().to_string());
            }
        }
    }
    names
}

#[test]
fn every_function_has_an_entry_and_no_entry_is_stale() {
    let catalog: BTreeSet<String> = api::functions()
        .filter(|f| !f.is_internal())
        .map(|f| f.name.to_string())
        .collect();
    let documented = documented();
    let missing: Vec<_> = catalog.difference(&documented).collect();
    let stale: Vec<_> = documented.difference(&catalog).collect();
    assert!(
        missing.is_empty(),
        "functions without an entry in docs/functions.md: {missing:?}"
    );
    assert!(
        stale.is_empty(),
        "entries in docs/functions.md for no function: {stale:?}"
    );
}
