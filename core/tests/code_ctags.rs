//! The outline's definitions against universal-ctags' on real code nobody here wrote: Rust
//! crates this workspace builds with (their sources in cargo's registry, at the versions
//! Cargo.lock pins), modules of the system's Python 3 standard library (Debian's), npm's own JavaScript,
//! and the TypeScript sources of rxjs 7.8.1 (`make code-corpus` fetches them). Recall of ctags' definitions (the kinds both count: functions, methods,
//! classes, structs, enums, traits and interfaces, type aliases, modules, macros) by file,
//! name and line; the misses are printed by kind (docs/graph.md explains each class). Two
//! ctags habits are not definitions and are counted apart: names it makes up for anonymous
//! functions, and JavaScript object literals bound to a name, which it calls classes.
//! JavaScript's private `#names` compare without their `#`, which ctags drops.
#![cfg(feature = "code")]

mod common;

use agentmem_core::code::language::Lang;
use agentmem_core::code::outline::outline;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Rust crates of Cargo.lock whose sources are read.
const CRATES: &[&str] = &["serde_json", "regex-automata", "fst", "uuid", "base64"];

/// Python standard library packages read.
const PYTHON: &[&str] = &["json", "email", "asyncio", "http", "logging"];

/// ctags kinds counted, by language.
const KINDS: &[(&str, &[&str])] = &[
    (
        "Rust",
        &[
            "function",
            "method",
            "struct",
            "enum",
            "interface",
            "typedef",
            "module",
            "macro",
        ],
    ),
    ("Python", &["class", "function", "member"]),
    ("JavaScript", &["class", "function", "method"]),
    (
        "TypeScript",
        &[
            "class",
            "function",
            "method",
            "interface",
            "enum",
            "namespace",
            "alias",
        ],
    ),
];

/// ctags' definitions in `dir`, and how many of its tags are not definitions.
fn ctags_defs(dir: &Path, language: &str) -> (BTreeSet<(String, String, usize, String)>, usize) {
    let kinds = KINDS.iter().find(|(l, _)| *l == language).unwrap().1;
    let out = Command::new("ctags")
        .args(["--output-format=json", "--fields=+nK", "-R", "-f", "-"])
        .arg(format!("--languages={language}"))
        .arg(dir)
        .output()
        .expect("universal-ctags (the Debian package universal-ctags) runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut sources: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut defs = BTreeSet::new();
    let mut not_defs = 0;
    for v in String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["_type"] == "tag")
        .filter(|v| kinds.contains(&v["kind"].as_str().unwrap_or("")))
    {
        let full = v["path"].as_str().unwrap();
        let path = Path::new(full)
            .strip_prefix(dir)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let (name, line, kind) = (
            v["name"].as_str().unwrap(),
            v["line"].as_u64().unwrap() as usize,
            v["kind"].as_str().unwrap(),
        );
        let text = sources.entry(full.to_owned()).or_insert_with(|| {
            std::fs::read_to_string(full)
                .unwrap_or_default()
                .lines()
                .map(str::to_owned)
                .collect()
        });
        let at = text.get(line - 1).map_or("", String::as_str);
        // ctags' JavaScript parser takes object literals (and some calls on them) for classes.
        let object_literal = kind == "class" && language == "JavaScript" && !at.contains("class");
        if name.starts_with("Anonymous") || object_literal {
            not_defs += 1;
            continue;
        }
        defs.insert((path, name.to_owned(), line, kind.to_owned()));
    }
    (defs, not_defs)
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// Definitions of ours: (file, name, line).
fn our_defs(dir: &Path) -> BTreeSet<(String, String, usize)> {
    let mut all = Vec::new();
    files(dir, &mut all);
    let mut defs = BTreeSet::new();
    for f in all {
        let rel = f.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
        let Some(lang) = Lang::of_path(&rel) else {
            continue;
        };
        let Ok(src) = std::fs::read_to_string(&f) else {
            continue;
        };
        for s in outline(lang, &src).symbols {
            defs.insert((
                rel.clone(),
                s.name.trim_start_matches('#').to_owned(),
                s.start_line,
            ));
        }
    }
    defs
}

/// Recall of ctags' definitions in `dirs`, and the misses by kind.
fn compare(dirs: &[PathBuf], language: &str) -> (usize, usize, BTreeMap<String, Vec<String>>) {
    let (mut total, mut found) = (0, 0);
    let mut misses: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for dir in dirs {
        let ours = our_defs(dir);
        let (theirs, not_defs) = ctags_defs(dir, language);
        if not_defs > 0 {
            misses
                .entry("(not definitions)".into())
                .or_default()
                .push(format!("{not_defs} in {}", dir.display()));
        }
        for (path, name, line, kind) in theirs {
            total += 1;
            if ours.contains(&(path.clone(), name.clone(), line)) {
                found += 1;
            } else {
                misses
                    .entry(kind)
                    .or_default()
                    .push(format!("{}/{path}:{line} {name}", dir.display()));
            }
        }
    }
    (total, found, misses)
}

fn report(
    language: &str,
    (total, found, misses): &(usize, usize, BTreeMap<String, Vec<String>>),
) -> f64 {
    let recall = *found as f64 / (*total).max(1) as f64;
    println!("{language}: {found} of {total} ctags definitions found, recall {recall:.4}");
    for m in misses.get("(not definitions)").into_iter().flatten() {
        println!("  ctags tags that are not definitions: {m}");
    }
    for (kind, m) in misses
        .iter()
        .filter(|(k, _)| k.as_str() != "(not definitions)")
    {
        println!("  missed {kind}: {}", m.len());
        for x in m.iter().take(8) {
            println!("    {x}");
        }
    }
    recall
}

/// What `program args` prints, trimmed.
fn run(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn definitions_match_ctags_on_real_code() {
    let rust: Vec<PathBuf> = CRATES
        .iter()
        .map(|c| {
            common::registry::crate_dir(c)
                .unwrap_or_else(|| panic!("the sources of {c} in cargo's registry"))
        })
        .collect();
    let stdlib = PathBuf::from(run(
        "/usr/bin/python3",
        &[
            "-c",
            "import sysconfig; print(sysconfig.get_path('stdlib'))",
        ],
    ));
    let python: Vec<PathBuf> = PYTHON.iter().map(|p| stdlib.join(p)).collect();
    let js = vec![PathBuf::from(run("npm", &["root", "-g"])).join("npm/lib")];
    let ts =
        vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/code-corpus/rxjs-7.8.1/src")];
    assert!(
        ts[0].is_dir(),
        "{}: run `make code-corpus` first",
        ts[0].display()
    );
    let r = report("Rust", &compare(&rust, "Rust"));
    let p = report("Python", &compare(&python, "Python"));
    let j = report("JavaScript", &compare(&js, "JavaScript"));
    let t = report("TypeScript", &compare(&ts, "TypeScript"));
    for (language, recall) in [
        ("Rust", r),
        ("Python", p),
        ("JavaScript", j),
        ("TypeScript", t),
    ] {
        assert!(
            recall >= 0.98,
            "{language}: recall {recall:.4} is below 0.98"
        );
    }
}
