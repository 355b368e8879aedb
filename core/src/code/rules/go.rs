//! Go: functions, methods (owned by their receiver's type), struct, interface and other
//! type declarations; imports by package path; calls by the called name.

use super::super::seen::{RefKind, Seen};
use super::syntax::{call, def, field, last_segment, text, unquote};
use tree_sitter::Node;

pub(super) fn see(node: Node, src: &[u8]) -> Seen {
    match node.kind() {
        "function_declaration" => def(node, "function", src),
        "method_declaration" => {
            let mut seen = def(node, "method", src);
            seen.owner = node.child_by_field_name("receiver").and_then(|r| receiver_type(r, src));
            seen
        }
        "type_spec" | "type_alias" => {
            let kind = match node.child_by_field_name("type").map(|t| t.kind()) {
                Some("struct_type") => "struct",
                Some("interface_type") => "interface",
                _ => "type",
            };
            def(node, kind, src)
        }
        "import_spec" => match field(node, "path", src) {
            Some(p) => Seen { refs: vec![(RefKind::Imports, unquote(&p), None)], ..Seen::default() },
            None => Seen::default(),
        },
        "call_expression" => match node.child_by_field_name("function") {
            Some(f) => call(&text(f, src)),
            None => Seen::default(),
        },
        _ => Seen::default(),
    }
}

/// `(s *Server)` → `Server`.
fn receiver_type(receiver: Node, src: &[u8]) -> Option<String> {
    let mut cursor = receiver.walk();
    let param = receiver.named_children(&mut cursor).find(|c| c.kind() == "parameter_declaration")?;
    let ty = field(param, "type", src)?;
    let name = last_segment(ty.trim_start_matches('*'));
    (!name.is_empty()).then_some(name)
}
