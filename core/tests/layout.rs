//! The layout stays acyclic: no module of the core or of either adapter imports, directly or
//! through others, a module that imports it back (a parent and its own submodules aside).
//! Imports are read from the sources: `crate::a::b`, `use crate::{a, b::c}` and `super::x`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every module of the crate whose sources are under `src`, by path (`a::b`), with its code
/// (comments and test modules cut off).
fn modules(src: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack: Vec<PathBuf> = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let rel = p.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
                parts.pop();
            }
            let text = std::fs::read_to_string(&p).unwrap();
            let text = match text.find("#[cfg(test)]\nmod tests") {
                Some(i) => &text[..i],
                None => &text[..],
            };
            // Comments (doc links included) name modules without importing them.
            let text: String = text
                .lines()
                .map(|l| l.split("//").next().unwrap_or(""))
                .collect::<Vec<_>>()
                .join("\n");
            out.insert(parts.join("::"), text);
        }
    }
    out
}

/// The longest known module that `path` names.
fn resolve<'a>(names: &'a BTreeSet<String>, path: &str) -> Option<&'a String> {
    let segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    (1..=segs.len())
        .rev()
        .find_map(|i| names.get(&segs[..i].join("::")))
}

fn is_ident(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == ':'
}

/// The module paths a source names after `prefix` (`crate::` or `super::`), groups expanded
/// one level (`crate::{a, b::c}`).
fn referenced(text: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices(prefix) {
        let rest = &text[i + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let body = &group[..group.find('}').unwrap_or(group.len())];
            for item in body.split(',') {
                let item: String = item.trim().chars().take_while(|&c| is_ident(c)).collect();
                out.push(item);
            }
        } else {
            out.push(rest.chars().take_while(|&c| is_ident(c)).collect());
        }
    }
    out
}

fn edges(mods: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let names: BTreeSet<String> = mods.keys().cloned().collect();
    let related = |a: &str, b: &str| {
        a == b || a.starts_with(&format!("{b}::")) || b.starts_with(&format!("{a}::"))
    };
    let mut out = BTreeMap::new();
    for (m, text) in mods {
        let parent = m.rsplit_once("::").map_or("", |(p, _)| p);
        let mut targets = BTreeSet::new();
        let paths = referenced(text, "crate::").into_iter().chain(
            referenced(text, "super::")
                .into_iter()
                .map(|p| format!("{parent}::{p}")),
        );
        for p in paths {
            if let Some(t) = resolve(&names, &p) {
                if !related(m, t) {
                    targets.insert(t.clone());
                }
            }
        }
        out.insert(m.clone(), targets);
    }
    out
}

/// A cycle through `start`, if any (depth-first).
fn cycle_from(g: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    fn walk(
        g: &BTreeMap<String, BTreeSet<String>>,
        start: &str,
        at: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        for next in &g[at] {
            if next == start {
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(g, start, next, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = vec![start.to_string()];
    walk(g, start, start, &mut path, &mut BTreeSet::new()).then_some(path)
}

fn assert_acyclic(crate_dir: &str) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(crate_dir)
        .join("src");
    let g = edges(&modules(&src));
    for m in g.keys() {
        if let Some(c) = cycle_from(&g, m) {
            panic!("{crate_dir}: import cycle {} -> {m}", c.join(" -> "));
        }
    }
}

#[test]
fn core_has_no_import_cycles() {
    assert_acyclic("core");
}

#[test]
fn adapters_have_no_import_cycles() {
    assert_acyclic("sqlite-ext");
    assert_acyclic("pg-ext");
}

#[test]
fn the_check_finds_a_cycle() {
    let mods: BTreeMap<String, String> = [
        ("a".to_string(), "use crate::b::x;".to_string()),
        ("b".to_string(), "use crate::{c, d};".to_string()),
        ("c".to_string(), "fn f() { crate::a::g() }".to_string()),
        ("d".to_string(), String::new()),
    ]
    .into();
    let g = edges(&mods);
    assert_eq!(cycle_from(&g, "a").unwrap(), ["a", "b", "c"]);
    assert!(cycle_from(&g, "d").is_none());
}
