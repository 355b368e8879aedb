//! Python: classes (their bases extend), functions (methods inside a class, lambdas bound to
//! a name); `import` and
//! `from … import` (relative ones keep their dots); calls by the called name.

use super::super::seen::{RefKind, Seen};
use super::syntax::{call, def, field, text};
use tree_sitter::Node;

pub(super) fn see(node: Node, src: &[u8]) -> Seen {
    match node.kind() {
        "function_definition" => def(node, "function", src),
        // `name = lambda …: …` names a function.
        "assignment" => match (node.child_by_field_name("left"), node.child_by_field_name("right")) {
            (Some(l), Some(r)) if l.kind() == "identifier" && r.kind() == "lambda" => {
                Seen { def: Some(("function", text(l, src))), ..Seen::default() }
            }
            _ => Seen::default(),
        },
        "class_definition" => {
            let mut seen = def(node, "class", src);
            if let Some(bases) = node.child_by_field_name("superclasses") {
                let mut cursor = bases.walk();
                for b in bases.named_children(&mut cursor) {
                    if matches!(b.kind(), "identifier" | "attribute") {
                        let name = text(b, src);
                        let name = name.rsplit('.').next().unwrap_or(&name).to_owned();
                        seen.refs.push((RefKind::Extends, name, None));
                    }
                }
            }
            seen
        }
        "import_statement" => {
            let mut refs = Vec::new();
            let mut cursor = node.walk();
            for n in node.children_by_field_name("name", &mut cursor) {
                let module = match n.kind() {
                    "aliased_import" => field(n, "name", src).unwrap_or_default(),
                    _ => text(n, src),
                };
                refs.push((RefKind::Imports, module, None));
            }
            Seen { refs, ..Seen::default() }
        }
        "import_from_statement" => {
            let module = field(node, "module_name", src).unwrap_or_default();
            let mut refs = Vec::new();
            // `from . import a` imports the modules a of the package: each is a target.
            if module.chars().all(|c| c == '.') {
                let mut cursor = node.walk();
                for n in node.children_by_field_name("name", &mut cursor) {
                    let name = match n.kind() {
                        "aliased_import" => field(n, "name", src).unwrap_or_default(),
                        _ => text(n, src),
                    };
                    refs.push((RefKind::Imports, format!("{module}{name}"), None));
                }
            } else {
                refs.push((RefKind::Imports, module, None));
            }
            Seen { refs, ..Seen::default() }
        }
        "call" => match node.child_by_field_name("function") {
            Some(f) => call(&text(f, src)),
            None => Seen::default(),
        },
        _ => Seen::default(),
    }
}
