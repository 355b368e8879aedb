//! The code graph's parsing layer: a source file's language, and its outline — the symbols it
//! defines and the references it makes — read from a tree-sitter syntax tree (docs/graph.md,
//! "The code graph"). Built with the `code` feature, which links the grammars.

internal!(chunks, language, outline, paths, seen);
mod rules;
