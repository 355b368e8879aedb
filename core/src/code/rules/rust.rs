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
            Some(path) => Seen { refs: vec![(RefKind::Imports, path, None)], ..Seen::default() },
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
