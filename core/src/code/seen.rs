//! What one node of a syntax tree is to a file's outline, as a language's rules say: the
//! symbol it defines, the type its members belong to, the references it makes.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) enum RefKind {
    Imports,
    Calls,
    Extends,
    Implements,
}

impl RefKind {
    #[cfg_attr(feature = "testing", visibility::make(pub))]
    pub(crate) fn name(self) -> &'static str {
        match self {
            RefKind::Imports => "imports",
            RefKind::Calls => "calls",
            RefKind::Extends => "extends",
            RefKind::Implements => "implements",
        }
    }
}

/// What a language's rules make of one node.
#[derive(Default)]
pub(crate) struct Seen {
    /// A symbol it defines: its kind and name.
    pub def: Option<(&'static str, String)>,
    /// The type the node's members belong to, when it is not itself a symbol (a Rust `impl`,
    /// a Go method's receiver).
    pub owner: Option<String>,
    /// References it makes: (kind, target, qualifier). Extends and implements are made by
    /// the symbol the node defines, or by its owner.
    pub refs: Vec<(RefKind, String, Option<String>)>,
}
