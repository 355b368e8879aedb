//! Reading names and paths out of syntax nodes, the same way for every language.

use super::super::seen::{RefKind, Seen};
use tree_sitter::Node;

/// The text of `node`.
pub(super) fn text(node: Node, src: &[u8]) -> String {
    node.utf8_text(src).unwrap_or_default().to_owned()
}

/// The text of `node`'s field `name`.
pub(super) fn field(node: Node, name: &str, src: &[u8]) -> Option<String> {
    node.child_by_field_name(name).map(|n| text(n, src))
}

/// A symbol `node` defines, named by its field `name`.
pub(super) fn def(node: Node, kind: &'static str, src: &[u8]) -> Seen {
    match field(node, "name", src) {
        Some(name) if !name.is_empty() => Seen { def: Some((kind, name)), ..Seen::default() },
        _ => Seen::default(),
    }
}

/// A string literal without its quotes.
pub(super) fn unquote(s: &str) -> String {
    s.trim_matches(|c| c == '"' || c == '\'' || c == '`').to_owned()
}

/// The last segment of a path or a member access (`a::b::c`, `a.b.c` → `c`), without
/// generic arguments.
pub(super) fn last_segment(s: &str) -> String {
    let base = s.split('<').next().unwrap_or(s);
    base.rsplit(['.', ':']).next().unwrap_or(base).trim().to_owned()
}

/// Everything before the last segment (`a::b::c` → `a::b`), when there is something.
pub(super) fn qualifier(s: &str) -> Option<String> {
    let base = s.split('<').next().unwrap_or(s);
    let cut = base.rfind(['.', ':'])?;
    let q = base[..cut].trim_end_matches([':', '.']);
    (!q.is_empty()).then(|| q.to_owned())
}

/// A call of `callee` (the function expression's text), when it ends in a name (JavaScript's
/// private `#names` included).
pub(super) fn call(callee: &str) -> Seen {
    let name = last_segment(callee);
    if !name.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_' || c == '#') {
        return Seen::default();
    }
    Seen { refs: vec![(RefKind::Calls, name, qualifier(callee))], ..Seen::default() }
}
