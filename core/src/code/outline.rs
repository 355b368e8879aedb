//! A file's outline from its syntax tree: the symbols it defines (with their lines and the
//! symbol they belong to), the references it makes (imports, calls, extends, implements) as
//! written, and the ranges that did not parse. Nothing here resolves a reference: that needs
//! the other files of the resource.
//!
//! The walk is iterative (a deeply nested file cannot exhaust the stack), and each language
//! says what a node is in its own module (`super::rules`).

use super::language::Lang;
use super::rules;
pub(crate) use super::seen::RefKind;
use tree_sitter::{Node, Parser};

/// A definition.
#[cfg_attr(feature = "testing", visibility::make(pub))]
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Symbol {
    /// `module`, `class`, `struct`, `enum`, `trait`, `interface`, `type`, `function`,
    /// `method`, `macro`.
    pub kind: &'static str,
    pub name: String,
    /// The enclosing symbol, by index.
    pub parent: Option<usize>,
    /// 1-based, inclusive.
    pub start_line: usize,
    pub end_line: usize,
    /// The definition's first line, trimmed.
    pub signature: String,
}

/// A reference as the source writes it.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct Ref {
    pub kind: RefKind,
    /// The symbol that makes it, by index (`None`: the file).
    pub from: Option<usize>,
    /// What it names: a module path or path string for imports, a name otherwise.
    pub target: String,
    /// What qualifies a called name (`Foo` in `Foo::new()`, `self.db` in `self.db.get()`).
    pub qualifier: Option<String>,
    pub line: usize,
}

#[derive(Debug, Default)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct Outline {
    pub symbols: Vec<Symbol>,
    pub refs: Vec<Ref>,
    /// Line ranges (1-based, inclusive) the parser could not read.
    pub errors: Vec<(usize, usize)>,
}

/// Longest signature kept, in characters.
const MAX_SIGNATURE: usize = 200;

/// The outline of `source`, parsed as `lang`.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn outline(lang: Lang, source: &str) -> Outline {
    let mut parser = Parser::new();
    if parser.set_language(&lang.grammar()).is_err() {
        return Outline::default();
    }
    let Some(tree) = parser.parse(source, None) else {
        return Outline::default();
    };
    let src = source.as_bytes();
    let mut out = Outline::default();
    // Owners named by an `impl` or a receiver, resolved to symbols once all are known.
    let mut owned: Vec<(usize, String)> = Vec::new();
    let mut heritage: Vec<(String, RefKind, String, usize)> = Vec::new();
    // (node, enclosing symbol, owner of its members)
    let mut stack: Vec<(Node, Option<usize>, Option<String>)> = vec![(tree.root_node(), None, None)];
    while let Some((node, scope, owner)) = stack.pop() {
        if node.is_error() || node.is_missing() {
            let (a, b) = lines(&node);
            if out.errors.last().is_none_or(|e| e.1 < a) {
                out.errors.push((a, b));
            }
        }
        let seen = rules::see(lang, node, src);
        let line = node.start_position().row + 1;
        let mut inner = scope;
        let mut inner_owner = owner.clone();
        if let Some((kind, name)) = seen.def {
            let in_type = scope.is_some_and(|s| is_type(out.symbols[s].kind)) || owner.is_some();
            let kind = if kind == "function" && in_type { "method" } else { kind };
            let (start_line, end_line) = lines(&node);
            out.symbols.push(Symbol {
                kind,
                name: name.clone(),
                parent: scope,
                start_line,
                end_line,
                signature: signature(source, &node),
            });
            let me = out.symbols.len() - 1;
            if let Some(o) = &owner {
                if scope.is_none_or(|s| !is_type(out.symbols[s].kind)) {
                    owned.push((me, o.clone()));
                }
            }
            if let Some(o) = &seen.owner {
                owned.push((me, o.clone()));
            }
            for (k, target, _) in &seen.refs {
                if matches!(k, RefKind::Extends | RefKind::Implements) {
                    heritage.push((name.clone(), *k, target.clone(), line));
                }
            }
            inner = Some(me);
            inner_owner = None;
        } else if seen.owner.is_some() {
            inner_owner = seen.owner.clone();
            for (k, target, _) in &seen.refs {
                if matches!(k, RefKind::Extends | RefKind::Implements) {
                    heritage.push((seen.owner.clone().unwrap_or_default(), *k, target.clone(), line));
                }
            }
        }
        for (kind, target, qualifier) in seen.refs {
            if matches!(kind, RefKind::Imports | RefKind::Calls) && !target.is_empty() {
                out.refs.push(Ref { kind, from: scope, target, qualifier, line });
            }
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        for child in children.into_iter().rev() {
            stack.push((child, inner, inner_owner.clone()));
        }
    }
    // A method defined outside its type (an `impl`, a receiver) belongs to the type when this
    // file defines it.
    for (sym, owner) in owned {
        if let Some(t) = type_named(&out.symbols, &owner) {
            if t != sym {
                out.symbols[sym].parent = Some(t);
            }
        }
    }
    for (owner, kind, target, line) in heritage {
        let from = type_named(&out.symbols, &owner);
        if from.is_some() && !target.is_empty() {
            out.refs.push(Ref { kind, from, target, qualifier: None, line });
        }
    }
    out.refs.sort_by_key(|r| (r.line, r.kind.name()));
    out
}

/// Kinds whose functions are methods.
fn is_type(kind: &str) -> bool {
    matches!(kind, "class" | "struct" | "enum" | "trait" | "interface")
}

fn type_named(symbols: &[Symbol], name: &str) -> Option<usize> {
    symbols.iter().position(|s| is_type(s.kind) && s.name == name)
}

fn lines(node: &Node) -> (usize, usize) {
    (node.start_position().row + 1, node.end_position().row + 1)
}

fn signature(source: &str, node: &Node) -> String {
    let start = node.start_byte();
    let line_end = source[start..].find('\n').map_or(source.len(), |i| start + i);
    let end = line_end.min(node.end_byte()).max(start);
    crate::text::head_chars(source[start..end].trim(), MAX_SIGNATURE).to_owned()
}
