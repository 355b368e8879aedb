//! TypeScript, TSX and JavaScript: functions (and functions bound to a `const`), classes
//! (extends, implements), methods, interfaces, type aliases, enums, namespaces; `import`,
//! `export … from` and `require()`; calls by the called name.

use super::super::seen::{RefKind, Seen};
use super::syntax::{call, def, field, last_segment, text, unquote};
use tree_sitter::Node;

pub(super) fn see(node: Node, src: &[u8]) -> Seen {
    match node.kind() {
        "function_declaration" | "generator_function_declaration" | "function_signature" => {
            def(node, "function", src)
        }
        "method_definition" | "method_signature" | "abstract_method_signature" => {
            def(node, "function", src)
        }
        // `new (…): T` in an interface: its constructor.
        "construct_signature" => Seen { def: Some(("function", "new".into())), ..Seen::default() },
        "class_declaration" | "abstract_class_declaration" => {
            let mut seen = def(node, "class", src);
            let mut cursor = node.walk();
            for h in node.named_children(&mut cursor).filter(|c| c.kind() == "class_heritage") {
                heritage(h, src, &mut seen);
            }
            seen
        }
        "interface_declaration" => {
            let mut seen = def(node, "interface", src);
            let mut cursor = node.walk();
            for c in node.named_children(&mut cursor).filter(|c| c.kind() == "extends_type_clause") {
                names(c, src, RefKind::Extends, &mut seen);
            }
            seen
        }
        "type_alias_declaration" => def(node, "type", src),
        "enum_declaration" => def(node, "enum", src),
        "internal_module" | "module" => def(node, "module", src),
        "variable_declarator" => match node.child_by_field_name("value").map(|v| v.kind()) {
            Some("arrow_function" | "function_expression" | "function" | "generator_function") => {
                def(node, "function", src)
            }
            _ => Seen::default(),
        },
        "import_statement" | "export_statement" => match field(node, "source", src) {
            Some(s) => Seen { refs: vec![(RefKind::Imports, unquote(&s), None)], ..Seen::default() },
            None => Seen::default(),
        },
        "call_expression" => {
            let Some(f) = node.child_by_field_name("function") else {
                return Seen::default();
            };
            let callee = text(f, src);
            if callee == "require" {
                let arg = node
                    .child_by_field_name("arguments")
                    .and_then(|a| a.named_child(0))
                    .filter(|a| a.kind() == "string");
                if let Some(a) = arg {
                    return Seen { refs: vec![(RefKind::Imports, unquote(&text(a, src)), None)], ..Seen::default() };
                }
            }
            call(&callee)
        }
        _ => Seen::default(),
    }
}

/// `extends A implements B, C` (TypeScript) or `extends A` (JavaScript, where the heritage
/// holds the expression itself).
fn heritage(h: Node, src: &[u8], seen: &mut Seen) {
    let mut cursor = h.walk();
    for c in h.named_children(&mut cursor) {
        match c.kind() {
            "extends_clause" => names(c, src, RefKind::Extends, seen),
            "implements_clause" => names(c, src, RefKind::Implements, seen),
            _ => seen.refs.push((RefKind::Extends, last_segment(&text(c, src)), None)),
        }
    }
}

/// Each type or expression named in a clause.
fn names(clause: Node, src: &[u8], kind: RefKind, seen: &mut Seen) {
    let mut cursor = clause.walk();
    for t in clause.named_children(&mut cursor) {
        let name = last_segment(&text(t, src));
        if !name.is_empty() {
            seen.refs.push((kind, name, None));
        }
    }
}
