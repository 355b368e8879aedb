//! What each language's syntax nodes mean to the outline: which define a symbol (and of what
//! kind), which own the members inside them, which reference something. One module per
//! family of grammars; the walk itself is `super::outline`.

use super::language::Lang;
use super::seen::Seen;
use tree_sitter::Node;

mod go;
mod python;
mod rust;
mod script;
mod syntax;

pub(crate) fn see(lang: Lang, node: Node, src: &[u8]) -> Seen {
    match lang {
        Lang::Rust => rust::see(node, src),
        Lang::Python => python::see(node, src),
        Lang::TypeScript | Lang::Tsx | Lang::JavaScript => script::see(node, src),
        Lang::Go => go::see(node, src),
    }
}
