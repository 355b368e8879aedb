//! Rust: functions, structs, enums, unions, traits, type aliases (associated types too),
//! modules and macros; `impl`
//! blocks own their methods (and say which trait the type implements); `use` and `mod foo;`
//! import; calls are named by their last path segment.

use super::super::seen::{RefKind, Seen};
use super::syntax::{call, def, field, last_segment, text};
use tree_sitter::Node;

pub(super) fn see(node: Node, src: &[u8]) -> Seen {
    match node.kind() {
        "function_item" | "function_signature_item" => def(node, "function", src),
        "struct_item" | "union_item" => def(node, "struct", src),
        "enum_item" => def(node, "enum", src),
        "trait_item" => def(node, "trait", src),
        "type_item" | "associated_type" => def(node, "type", src),
        "macro_definition" => def(node, "macro", src),
        "mod_item" => {
            let mut seen = def(node, "module", src);
            // `mod foo;` is the file foo.rs (or foo/mod.rs) of this module.
            if node.child_by_field_name("body").is_none() {
                if let Some((_, name)) = &seen.def {
                    seen.refs.push((RefKind::Imports, format!("mod {name}"), None));
                }
            }
            seen
        }
        "impl_item" => {
            let Some(ty) = field(node, "type", src) else {
                return Seen::default();
            };
            let owner = last_segment(&ty);
            let refs = field(node, "trait", src)
                .map(|t| vec![(RefKind::Implements, last_segment(&t), None)])
                .unwrap_or_default();
            Seen { owner: Some(owner), refs, ..Seen::default() }
        }
        "use_declaration" => match field(node, "argument", src) {
            Some(tree) => Seen {
                refs: use_paths(&tree).into_iter().map(|p| (RefKind::Imports, p, None)).collect(),
                ..Seen::default()
            },
            None => Seen::default(),
        },
        "call_expression" => match node.child_by_field_name("function") {
            Some(f) => {
                let f = if f.kind() == "generic_function" { f.child_by_field_name("function").unwrap_or(f) } else { f };
                call(&text(f, src))
            }
            None => Seen::default(),
        },
        _ => Seen::default(),
    }
}

/// The paths a `use` tree names, one per leaf: `a::{b, c::{d, self}, e as f, *}` names
/// `a::b`, `a::c::d`, `a::c`, `a::e` and `a`.
fn use_paths(tree: &str) -> Vec<String> {
    let mut out = Vec::new();
    expand("", tree.trim(), &mut out);
    out
}

fn expand(prefix: &str, tree: &str, out: &mut Vec<String>) {
    let join = |tail: &str| match (prefix, tail) {
        ("", t) => t.to_owned(),
        (p, "") => p.to_owned(),
        (p, t) => format!("{p}::{t}"),
    };
    if let (Some(open), true) = (tree.find('{'), tree.ends_with('}')) {
        let head = join(tree[..open].trim().trim_end_matches("::"));
        for item in split_top(&tree[open + 1..tree.len() - 1]) {
            expand(&head, item.trim(), out);
        }
        return;
    }
    let leaf = tree.split_whitespace().next().unwrap_or("");
    let leaf = leaf.trim_end_matches('*').trim_end_matches("::");
    let leaf = if leaf == "self" { "" } else { leaf.strip_suffix("::self").unwrap_or(leaf) };
    let path = join(leaf);
    if !path.is_empty() && !out.contains(&path) {
        out.push(path);
    }
}

/// The items of a `use` group, split at its top-level commas.
fn split_top(group: &str) -> Vec<&str> {
    let (mut depth, mut start, mut out) = (0, 0, Vec::new());
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&group[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&group[start..]);
    out.into_iter().filter(|s| !s.trim().is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::use_paths;

    #[test]
    fn a_use_tree_names_one_path_per_leaf() {
        assert_eq!(use_paths("a::{b, c::{d, self}, e as f, *}"), ["a::b", "a::c::d", "a::c", "a::e", "a"]);
        assert_eq!(use_paths("super::{chunks, refs::{self, RefRow}}"), ["super::chunks", "super::refs", "super::refs::RefRow"]);
        assert_eq!(use_paths("std::fmt"), ["std::fmt"]);
        assert_eq!(use_paths("crate::x::*"), ["crate::x"]);
        assert_eq!(use_paths("{a, b}"), ["a", "b"]);
    }
}
